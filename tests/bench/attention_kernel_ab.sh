#!/usr/bin/env bash
# Benchmark (by hand, not a test): the CPU attention kernels of two builds,
# bench_attention_kernel from each run in turn for ROUNDS rounds, so a shared machine's drift
# falls on both alike; the load average printed before and after each run. Then, per build and
# kernel, the median (min-max over the rounds) of each run's figure: GFLOP/s over wall time and
# per CPU second, and the latter's fraction of the all-core FMA peak that run measured; then the
# median per CPU second against the best peak any run measured: a lower bound, as a co-tenant
# only lowers a probe (lifting its own run's fraction) while the host's clock moves every figure.
# usage: tests/bench/attention_kernel_ab.sh OLD_BUILD NEW_BUILD ROUNDS [BENCH_ARGS...]
#   BENCH_ARGS: bench_attention_kernel's [seq heads head_dim threads iters q_tile k_tile gemm_n],
#   e.g. 4096 8 128 2 3 (tests/bench/attention_kernel.sh runs one build alone).
set -euo pipefail
usage="usage: attention_kernel_ab.sh OLD_BUILD NEW_BUILD ROUNDS [BENCH_ARGS...]"
old="${1:?$usage}" new="${2:?$usage}" rounds="${3:?$usage}"
shift 3
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "attention_kernel_ab.sh: ROUNDS must be 1-99" >&2; exit 2; }
for b in "$old" "$new"; do
    [[ -x "$b/tests/bench_attention_kernel" ]] ||
        { echo "attention_kernel_ab.sh: $b/tests/bench_attention_kernel not built" >&2; exit 2; }
done
for a in "$@"; do
    [[ "$a" =~ ^[0-9]{1,6}$ ]] || { echo "attention_kernel_ab.sh: BENCH_ARGS are whole numbers" >&2; exit 2; }
done
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
for r in $(seq "$rounds"); do
    for side in old new; do
        build=$old
        [[ $side = new ]] && build=$new
        l0=$(load)
        "$build/tests/bench_attention_kernel" "$@" | sed "s/^/$side /" >>"$out"
        peak=$(grep "^$side FMA" "$out" | tail -n 1 | grep -o '[0-9.]* GFLOP/s on [0-9]* core(s)' || true)
        echo "round $r $side: load $l0 -> $(load), FMA peak ${peak:-?}"
    done
done
grep -m1 '^new attention kernel' "$out" | cut -d' ' -f2-
# Each kernel line: "<side> <causal> <pass> s s GFLOP/s | ... | per CPU s X (lo-hi) GFLOP/s, F of FMA peak".
awk '
$2 == "FMA" { # the best all-core peak of all runs: load only lowers a probe
    for (i = 1; i < NF; ++i) if ($(i + 1) == "GFLOP/s" && $i + 0 > best) best = $i + 0
}
$2 ~ /^(non-causal|causal)$/ {
    key = $1 "|" $2 " " $3
    n[key]++
    wall[key, n[key]] = $6
    for (i = 1; i <= NF; ++i) if ($i == "CPU") { cpu[key, n[key]] = $(i + 2); hascpu[key] = 1 }
    frac[key, n[key]] = $(NF - 3)
    if (!(($2 " " $3) in seen)) { seen[$2 " " $3] = 1; order[++kinds] = $2 " " $3 }
}
function med(arr, key, k,   i, j, t, v) {
    for (i = 1; i <= k; ++i) v[i] = arr[key, i] + 0
    for (i = 2; i <= k; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return sprintf("%.1f (%.1f-%.1f)", v[int((k + 1) / 2)], v[1], v[k])
}
function medv(arr, key, k,   i, j, t, v) {
    for (i = 1; i <= k; ++i) v[i] = arr[key, i] + 0
    for (i = 2; i <= k; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return v[int((k + 1) / 2)]
}
function medf(arr, key, k,   i, j, t, v) {
    for (i = 1; i <= k; ++i) v[i] = arr[key, i] + 0
    for (i = 2; i <= k; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return sprintf("%.2f (%.2f-%.2f)", v[int((k + 1) / 2)], v[1], v[k])
}
END {
    printf "%-20s %-4s %-22s %-22s %-19s %s\n", "kernel", "side", "GFLOP/s (wall)", "per CPU second",
        "of the run peak", "of the best peak"
    for (o = 1; o <= kinds; ++o)
        for (s = 1; s <= 2; ++s) {
            side = s == 1 ? "old" : "new"
            key = side "|" order[o]
            if (!(key in n)) continue
            # A build whose bench predates the per-CPU-second column: "-", not zeros (its
            # fraction of the peak is then over wall time).
            printf "%-20s %-4s %-22s %-22s %-19s %s\n", order[o], side, med(wall, key, n[key]),
                (key in hascpu ? med(cpu, key, n[key]) : "-"), medf(frac, key, n[key]),
                (best > 0 && key in hascpu ? sprintf("%.2f", medv(cpu, key, n[key]) / best) : "-")
        }
    printf "medians of %d runs each (min-max); fractions against the peak each run measured, and\n", n[key]
    printf "the median per CPU second against the best peak of all runs (%.1f GFLOP/s), a lower\n", best
    printf "bound: a co-tenant only lowers a probe (and so lifts its own run), the host clock moves all\n"
}' "$out"
