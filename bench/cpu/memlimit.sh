#!/usr/bin/env bash
# memlimit.sh - CPU cost of the memlimit quota on cuMemAlloc/cuMemFree pairs against the fake driver, as a
# markdown table: the shim alone, the shim + memlimit with a private budget, and with a shared budget
# (/dev/shm), in interleaved rounds of one run; medians.
#
# USAGE: bench/cpu/memlimit.sh [build dir]   (default ./build; targets cushim, memlimit, cushim_fake_cuda,
#                                              cushim_bench_memlimit)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
BENCH=$BUILD/bench/cpu/cushim_bench_memlimit
SHIM=$BUILD/runtime/libcushim.so
DRV=$BUILD/tests/fake/libcuda.so.1
PLUGIN=$BUILD/plugins/memlimit.so
for f in "$BENCH" "$SHIM" "$DRV" "$PLUGIN"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }
done
PAIRS=${PAIRS:-200000}
ROUNDS=${ROUNDS:-7}
OUTER=${OUTER:-5}
TMP=$(mktemp -d)
BUDGET=cushim-bench-$$
trap 'rm -rf "$TMP" "/dev/shm/cushim-budget-$BUDGET"' EXIT
export CUSHIM_LOG=error
for r in $(seq 1 "$OUTER"); do
  env "$BENCH" "$DRV" "$PAIRS" "$ROUNDS" | sed -n 's/^pair_ns //p' >>"$TMP/direct"
  env LD_PRELOAD="$SHIM" "$BENCH" "$DRV" "$PAIRS" "$ROUNDS" | sed -n 's/^pair_ns //p' >>"$TMP/shim"
  env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$PLUGIN:limit=64GiB" "$BENCH" "$DRV" "$PAIRS" "$ROUNDS" |
    sed -n 's/^pair_ns //p' >>"$TMP/quota"
  env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$PLUGIN:limit=64GiB,budget=$BUDGET" "$BENCH" "$DRV" "$PAIRS" "$ROUNDS" |
    sed -n 's/^pair_ns //p' >>"$TMP/shared"
done
med() { sort -g "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
d=$(med "$TMP/direct"); s=$(med "$TMP/shim"); q=$(med "$TMP/quota"); b=$(med "$TMP/shared")
echo "| configuration | ns per cuMemAlloc+cuMemFree pair (median of $OUTER runs x median of $ROUNDS x $PAIRS) | vs shim |"
echo "| --- | --- | --- |"
echo "| fake driver, no shim | $d | |"
echo "| shim, no plugin | $s | |"
awk -v q="$q" -v s="$s" 'BEGIN { printf "| shim + memlimit (limit=64GiB) | %s | %+.1f ns |\n", q, q - s }'
awk -v q="$b" -v s="$s" 'BEGIN { printf "| shim + memlimit, shared budget | %s | %+.1f ns |\n", q, q - s }'
