#!/usr/bin/env bash
# Install ringscale's build and test dependencies from Debian 12's archive, only what is
# missing (idempotent). Works as root or through sudo.
# usage: install-deps.sh [--test]   --test: also what only the tests need (the browser test of
#        report.html, issue 52: headless Chromium and tidy); the build alone never needs them.
set -euo pipefail
packages=(build-essential cmake git pkg-config
          openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools
          libboost-program-options-dev libboost-dev libgtest-dev
          libopenblas-dev libeigen3-dev libfmt-dev nlohmann-json3-dev libsqlite3-dev sqlite3
          gnuplot-nox python3 python3-h5py python3-numpy clang-format
          slurm-wlm munge)
test_packages=(chromium tidy)
case "${1:-}" in
    --test) packages+=("${test_packages[@]}") ;;
    "") ;;
    *) echo "install-deps: unknown option '$1' (usage: install-deps.sh [--test])" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
