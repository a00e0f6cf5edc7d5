# Shared by the e2e study scripts (pooled_study.sh, weak_study.sh): one line per check, the
# command's output on failure, and a count of failures in `fails`.
fails=0
check() { # check "what" command...
    local what=$1
    shift
    if out=$("$@" 2>&1); then
        echo "ok: $what"
    else
        echo "FAILED: $what"
        echo "$out" | tail -n 20
        fails=$((fails + 1))
    fi
}
