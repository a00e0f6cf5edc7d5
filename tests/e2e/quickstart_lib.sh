# The README's quick starts as the tests run them (tests/e2e/readme_quickstart.sh,
# tests/slurm/readme_quickstart.sh): the commands are taken from README.md itself and run one
# quick start after another as in one terminal (the environment carries over), from a
# directory laid out like the checkout; what they print must show every line the README shows
# (tests/e2e/readme.py says how lines are compared).
#
#   source tests/e2e/quickstart_lib.sh
#   quickstart_setup SRC BUILD DIR     makes DIR (build, jobs, slurm linked in) and cds into it
#   quickstart_run NAME [FROM TO]      runs NAME's commands (FROM replaced by TO, which must
#                                      occur), output in DIR/NAME.out; exits 1 on a failure or
#                                      a line the README shows that the output lacks

quickstart_setup() { # src build dir
    qs_src=$(cd -- "$1" && pwd)
    rm -rf "$3"
    mkdir -p "$3"
    ln -s "$(cd -- "$2" && pwd)" "$3/build"
    ln -s "$qs_src/jobs" "$3/jobs"
    ln -s "$qs_src/slurm" "$3/slurm"
    cd -- "$3"
    export -p | grep -v '^declare -[a-zA-Z]*r' >env.sh # not the read-only ones
}

quickstart_run() { # name [from to]
    local name=$1 readme=$qs_src/README.md
    /usr/bin/python3 "$qs_src/tests/e2e/readme.py" commands "$readme" "$name" >"$name.sh"
    echo "---- quickstart $name, as the README gives it:"
    cat "$name.sh"
    if [ $# -eq 3 ]; then
        grep -qF -- "$2" "$name.sh" || { echo "FAIL: quickstart $name no longer says '$2'"; exit 1; }
        FROM=$2 TO=$3 /usr/bin/python3 -c 'import os, sys
sys.stdout.write(sys.stdin.read().replace(os.environ["FROM"], os.environ["TO"]))' \
            <"$name.sh" >"$name.sh.new"
        mv "$name.sh.new" "$name.sh"
        echo "---- run here with '$3' in place of '$2'"
    fi
    if ! bash -eo pipefail -c 'source env.sh; source "$1.sh"
            export -p | grep -v "^declare -[a-zA-Z]*r" >env.sh' _ "$name" >"$name.out" 2>&1; then
        cat "$name.out"
        echo "FAIL: quickstart $name exited non-zero"
        exit 1
    fi
    /usr/bin/python3 "$qs_src/tests/e2e/readme.py" check "$readme" "$name" "$name.out" ||
        { echo "---- its output:"; cat "$name.out"; exit 1; }
}
