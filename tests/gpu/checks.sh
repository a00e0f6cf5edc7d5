#!/usr/bin/env bash
# The checks run.sh, lease.sh and profile.sh apply to their environment before anything runs
# or looks for a GPU: each bad value is one line naming the variable and what it must be, and
# exit 2. Sourced, never run.

# printable TEXT: TEXT without control characters, at most 60 of them (safe to echo back).
printable() {
    local t=${1//[^[:print:]]/?}
    printf '%s' "${t:0:60}"
}

# bad SCRIPT MESSAGE: the one line, then exit 2.
bad() {
    echo "$1: $2" >&2
    exit 2
}

# check_count SCRIPT NAME VALUE LO HI [UNIT] [optional]: VALUE a whole number from LO to HI
# ("optional": empty is allowed).
check_count() {
    local script=$1 name=$2 value=$3 lo=$4 hi=$5 unit=${6:-}
    [[ -z $value && ${7:-} == optional ]] && return 0
    # At most 11 digits before any arithmetic: bash's integers wrap past 2^63.
    if [[ ! $value =~ ^[0-9]{1,11}$ ]] || ((10#$value < lo || 10#$value > hi)); then
        bad "$script" "$name must be a whole number from $lo to $hi${unit:+ ($unit)}, got '$(printable "$value")'"
    fi
}

# check_list SCRIPT NAME "V1 V2 ..." LO HI: one or more whole numbers from LO to HI.
check_list() {
    local script=$1 name=$2 v n=0
    for v in $3; do
        n=$((n + 1))
        [[ $v =~ ^[0-9]{1,11}$ ]] && ((10#$v >= $4 && 10#$v <= $5)) && continue
        bad "$script" "$name must be whole numbers from $4 to $5 separated by spaces, got '$(printable "$3")'"
    done
    [[ $n -gt 0 ]] || bad "$script" "$name must be whole numbers from $4 to $5 separated by spaces, got none"
}

# check_regex SCRIPT NAME VALUE: VALUE empty or a valid extended regular expression.
check_regex() {
    [[ -z $3 ]] && return 0
    local rc=0
    [[ "" =~ $3 ]] || rc=$?
    [[ $rc -ne 2 ]] || bad "$1" "$2='$(printable "$3")' is not a valid extended regular expression"
}
