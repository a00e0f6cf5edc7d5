#!/usr/bin/env bash
# End to end: what reaches the reader is true and readable.
#  1. a collective at np=1 (a no-op) shows no rate: not in the live table, summary or JSON;
#  2. the long_context preset's study at P=1 (both layouts: identical work) confirms no
#     crossing and ranks no scheme;
#  3. np=4 ranks on fewer than 4 cores (here: 2) are warned about as oversubscribed; so is a
#     rank asking for more threads than the node has, on any machine;
#  4. a report of the context_parallel preset's study (its schemes and passes, at small S)
#     plots every scheme;
#  5. no preset times fewer than 10 iterations (an accuracy study, accuracy = on, times
#     nothing: it needs validate = off), and each states its run time at np=2.
# usage: report_honesty.sh RINGSCALE STATS MPIEXEC WORKDIR PRESETS_DIR
set -u
ringscale=$1 stats=$2 mpiexec=$3 work=$4 presets=$5
source "$(dirname "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=("$mpiexec" -q --oversubscribe --bind-to none)

# 1. np=1 broadcast of 16 MiB: no-op, no rate anywhere.
"${mpi[@]}" -np 1 "$ringscale" --job collectives --op broadcast -b 16M -e 16M -w 1 -n 10 \
    -o "$work/bcast/" >"$work/bcast.out" 2>&1
# The algbw and busbw columns found by their header (the header line starts with a lone '#').
check "np=1 broadcast: the live table shows no algbw or busbw" awk '
    /^# +op / { for (i = 2; i <= NF; ++i) if ($i ~ /^(alg|bus)bw/) col[i - 1] = 1; next }
    /^ *broadcast / { rows++; for (c in col) if ($c != "-") bad++ }
    END { exit !(length(col) == 2 && rows == 1 && !bad) }' "$work/bcast.out"
"$stats" summary "$work/bcast/" >"$work/bcast.txt" 2>"$work/bcast.err"
check "np=1 broadcast: summary says no-op instead of a rate" grep -q 'no-op' "$work/bcast.txt"
check "np=1 broadcast: summary says why on stderr" grep -q 'moves no data' "$work/bcast.err"
"$stats" summary "$work/bcast/" --format json >"$work/bcast.json" 2>/dev/null
check "np=1 broadcast: JSON has no busbw number and names the flag" python3 -c "
import json, sys
c = json.load(open('$work/bcast.json'))['cases'][0]
sys.exit(not (c['busbw_gbs'] is None and c['algbw_gbs'] is None and 'busbw_gbs=no-op' in c['withheld']))"

# 2. long_context at P=1 with both layouts: identical work, never ranked.
"${mpi[@]}" -np 1 "$ringscale" "$presets/long_context.ini" --seq-len 128,256 \
    --layout contiguous,zigzag -w 1 --iters 10 --repeat 2 --validate off \
    -o "$work/lc/" >"$work/lc.out" 2>&1
"$stats" crossover "$work/lc/" --format json --bootstrap 200 >"$work/lc.json" 2>"$work/lc.err"
check "long_context at P=1: no confirmed crossing, no ranked cell" python3 -c "
import json, sys
j = json.load(open('$work/lc.json'))
cells = j['fastest scheme']
bad = [c for c in cells if c['world_size'] == 1 and c['verdict'] != 'same work (P=1)']
bad += [x for x in j['crossovers'] if x['world_size'] == 1]
print(len(cells), 'cells at P=1;', bad)
sys.exit(not cells or bool(bad))"

# 3. Oversubscription: 4 ranks on fewer cores; and more threads than cores on any machine.
cores=$(nproc)
run=(--job collectives --op allreduce -b 1K -e 1K -w 1 -n 10)
if [ "$cores" -lt 4 ]; then
    "${mpi[@]}" -np 4 "$ringscale" "${run[@]}" -o "$work/np4/" >/dev/null 2>"$work/np4.err"
    check "np=4 on $cores cores: warned as oversubscribed" \
        grep -q "warning: oversubscribed: 4 rank(s) x 1 thread(s) = 4 threads on $cores core" \
        "$work/np4.err"
else
    echo "note: $cores cores: the np=4 default-threads case is not oversubscribed here"
fi
"${mpi[@]}" -np 2 "$ringscale" "${run[@]}" --threads "$cores" -o "$work/threads/" \
    >/dev/null 2>"$work/threads.err"
check "2 ranks x $cores threads on $cores cores: warned" \
    grep -q 'warning: oversubscribed' "$work/threads.err"
"${mpi[@]}" -np 1 "$ringscale" "${run[@]}" -o "$work/np1/" >/dev/null 2>"$work/np1.err"
check "np=1 unbound: no oversubscription warning" \
    bash -c "! grep -q 'oversubscribed' '$work/np1.err'"

# 4. The context_parallel preset's study at small S: every scheme is in the report's plots.
sed -e 's/^seq-preset = .*/seq-len = 128,256/' -e 's/^iters = .*/iters = 10/' \
    "$presets/context_parallel.ini" >"$work/cp.ini"
for np in 1 2; do
    "${mpi[@]}" -np $np "$ringscale" "$work/cp.ini" -w 1 --validate off -o "$work/cp/" \
        >"$work/cp$np.out" 2>&1
done
"$stats" report "$work/cp_report" "$work/cp/" --bootstrap 200 >"$work/cp_report.out" 2>&1
if command -v gnuplot >/dev/null; then
    for scheme in ring/zigzag allgather ulysses hybrid; do
        check "context_parallel report: $scheme against P and S" bash -c "
            grep -qx '# $scheme' '$work/cp_report/schemes_vs_p_01.dat' &&
            grep -qx '# $scheme' '$work/cp_report/schemes_vs_s_01.dat' &&
            grep -qx '# $scheme' '$work/cp_report/memory_vs_p_01.dat'"
    done
    check "context_parallel report: one plot per pass" \
        test -f "$work/cp_report/schemes_vs_p_02.png"
else
    echo "note: gnuplot is not installed: the report's plots are not checked"
fi

# 5. Presets: at least 10 timed iterations; each states its run time at np=2.
for ini in "$presets"/*.ini; do
    iters=$(sed -n 's/^iters *= *//p' "$ini")
    if grep -q '^accuracy *= *on' "$ini"; then # an accuracy study: errors, not times
        check "$(basename "$ini"): measures accuracy, times nothing: validate off" \
            grep -q '^validate *= *off' "$ini"
    else
        check "$(basename "$ini"): iters=${iters:-20 (default)} >= 10" test "${iters:-20}" -ge 10
    fi
    check "$(basename "$ini"): states its run time at np=2" grep -q 'at np=2' "$ini"
done

echo "$fails failure(s)"
exit "$fails"
