#!/usr/bin/env bash
# The bad-input matrix (bad_input.cases, one invocation per line): every bad invocation of
# ringscale (on 2 ranks) and ringscale-stats must exit non-zero within 10 s and without any
# process growing past 1 GiB, print exactly one line on stderr naming the problem, and leave
# no results file behind. Each rank runs under an 8 GiB address-space limit, so a case that
# would exhaust memory fails here instead of taking the machine with it.
# usage: bad_input.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR [CASES]
set -u
ringscale=$1 stats=$2 mpiexec=$3 work=$4
cases=${5:-$(dirname -- "$0")/bad_input.cases}
rm -rf "$work" && mkdir -p "$work/fix/empty" "$work/out"

# ---- fixtures ---------------------------------------------------------------------------------
touch "$work/fix/a_file"
printf 'job = collectives\nthis line has no equals sign\n' >"$work/fix/bad.ini"
printf 'job = collectives\nfrobnicate = 3\n' >"$work/fix/unknown_key.ini"
printf 'job = collectives\n=5\n' >"$work/fix/eq.ini"
head -c 4096 /dev/urandom >"$work/fix/corrupt.h5"
mkfifo "$work/fix/fifo"                 # a job file that would block a reader for ever
truncate -s 1G "$work/fix/sparse.ini"   # a job file of 1 GiB that takes no disk
printf 'name = half\npeak_tflops = 989\n' >"$work/fix/missing.hw"
printf 'name = zero\npeak_tflops = 0\n' >"$work/fix/zero.hw"
printf 'name = negative\npeak_tflops = -5\n' >"$work/fix/negative.hw"
printf 'name = no links\nnics_per_node = 0\n' >"$work/fix/nics0.hw"
# Whole profiles with one figure out of its declared range.
profile() { # FILE KEY VALUE: the built-in H100's figures with KEY = VALUE
    local k v
    for k in peak_tflops=989 efficiency=0.5 memory_gbs=3350 call_overhead_us=5 \
        device_memory_gib=80 ranks_per_node=8 intra_alpha_us=3 intra_busbw_gbs=360 \
        inter_alpha_us=8 inter_busbw_gbs=45; do
        v=${k#*=} k=${k%%=*}
        [ "$k" = "$2" ] && v=$3
        echo "$k = $v"
    done >"$1"
    [ "$2" = nics_per_node ] && echo "nics_per_node = $3" >>"$1"
    return 0
}
touch "$work/fix/"$'\e[2J\nx.h5' # a taken output name the launcher must print escaped
profile "$work/fix/rpn_3e9.hw" ranks_per_node 3e9
profile "$work/fix/rpn_1e300.hw" ranks_per_node 1e300
profile "$work/fix/nics_tiny.hw" nics_per_node 1e-300
"$mpiexec" -q -np 2 --oversubscribe "$ringscale" --op allreduce -b 1K -e 1K -w 1 -n 8 \
    -o "$work/fix/good.h5" </dev/null >/dev/null 2>"$work/fixture.log" ||
    { echo "cannot make the good.h5 fixture:"; cat "$work/fixture.log"; exit 1; }
/usr/bin/python3 - "$work/fix" <<'PY' || { echo "cannot make the HDF5 fixtures"; exit 1; }
import shutil, sys, h5py
d = sys.argv[1]
shutil.copy(f"{d}/good.h5", f"{d}/wrong_schema.h5")
with h5py.File(f"{d}/wrong_schema.h5", "r+") as f:
    f.attrs["schema"] = "ringscale/9"
with h5py.File(f"{d}/no_schema.h5", "w") as f:
    f.create_group("cases")
PY

# ---- the matrix -------------------------------------------------------------------------------
pass=0 fail=0 n=0
vcap=$([ -n "${RINGSCALE_ASAN:-}" ] || echo 'ulimit -v 8388608 && ')
while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    eval "set -- $line" # our own file: shell words, quotes group
    tool=$1 want=$2
    shift 2
    args=()
    for a in "$@"; do args+=("${a//@W@/$work}"); done
    n=$((n + 1))
    case $tool in
    # The address-space cap cannot hold under AddressSanitizer, which reserves terabytes of
    # shadow memory at start (tests/sanitize.sh sets RINGSCALE_ASAN=1): there the RSS check only.
    ringscale) cmd=("$mpiexec" -q -np 2 --oversubscribe bash -c "${vcap}"'exec "$0" "$@"'
        "$ringscale") ;;
    stats) cmd=("$stats") ;;
    *) echo "bad_input.cases: unknown tool '$tool' in: $line"; exit 1 ;;
    esac
    start=$(date +%s%N)
    # The largest resident set of any process of the command (ranks included), in KiB.
    /usr/bin/python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)' "$work/rss" timeout 30 "${cmd[@]}" "${args[@]}" </dev/null >"$work/stdout" 2>"$work/stderr"
    rc=$?
    took_ms=$((($(date +%s%N) - start) / 1000000))
    rss_kib=$(cat "$work/rss")
    lines=$(grep -c . "$work/stderr")
    left=$(find "$work/out" -type f)
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took_ms" -le 10000 ] && [ "$lines" -eq 1 ] &&
        [ "$rss_kib" -le 1048576 ] && grep -qF -- "$want" "$work/stderr" && [ -z "$left" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $tool ${args[*]:0:12}: exit $rc, ${took_ms} ms, ${rss_kib} KiB," \
            "$lines line(s) on stderr (want one with '$want'):"
        sed 's/^/    /' "$work/stderr"
        [ -z "$left" ] || echo "    left behind: $left"
    fi
    rm -rf "$work/out" && mkdir -p "$work/out"
done <"$cases"
echo "bad-input matrix: $n cases ($pass passed, $fail failed)"
[ "$fail" -eq 0 ] && [ "$n" -ge 25 ]
