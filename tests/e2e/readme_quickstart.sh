#!/usr/bin/env bash
# The README's laptop quick start, then the one that reads its study, run as written and
# checked against the output the README shows (tests/e2e/quickstart_lib.sh).
#
# usage: readme_quickstart.sh SOURCE_DIR BUILD_DIR OUT_DIR
set -euo pipefail
source "$1/tests/e2e/quickstart_lib.sh"
quickstart_setup "$1" "$2" "$3"
quickstart_run laptop
quickstart_run read
echo "readme quickstarts: passed"
