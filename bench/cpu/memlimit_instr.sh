#!/usr/bin/env bash
# memlimit_instr.sh - instructions per cuMemAlloc_v2+cuMemFree_v2 pair under the shim + memlimit (limit=64GiB),
# private and shared budget, against the fake driver: callgrind over bench_memlimit.c's loop at two pair counts
# (the difference over the extra pairs: start-up cancels), main thread from main() on. Stable on a loaded
# machine, unlike the ns of memlimit.sh. PLUGIN (default the build's memlimit.so) lets two builds of the plugin
# be compared against the same shim and driver. SPEC (e.g. ',oversubscribe=2' or ',on_full=wait:5') is appended to
# every configuration's options, LIMIT (default 64GiB) is the quota (LIMIT=128 SPEC=,oversubscribe=64: every
# 256-byte allocation host-backed), DRV another libcuda.so.1 (a fake with cuMemAdvise, for the host-backed path).
# KIND=vmm counts cuMemCreate(2 MiB)+cuMemRelease pairs instead, with the fake's host locations on
# (FAKE_CUDA_HOST_VMM=1, in every configuration so the environment stays the same): LIMIT=1MiB SPEC=,oversubscribe=64
# makes every handle host-located.
#
# FUNCS="f g" adds each function's inclusive instructions per pair (callgrind_annotate, the same two counts): the
# plugin's own share, e.g. FUNCS="ml_pre ml_post" (its hooks; what they call in the driver included: subtract the
# driver's function by its file, e.g. FUNCS="ml_pre ml_post fake_vmm.c:cuMemCreate"; a bare cu* name is the shim's
# wrapper, the whole call).
#
# USAGE: [SPEC=...] [LIMIT=...] [DRV=...] [KIND=vmm] [FUNCS=...] bench/cpu/memlimit_instr.sh [build dir] [memlimit.so]
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
PLUGIN=${2:-$BUILD/plugins/memlimit.so}
BENCH=$BUILD/bench/cpu/cushim_bench_memlimit
SHIM=$BUILD/runtime/libcushim.so
DRV=${DRV:-$BUILD/tests/fake/libcuda.so.1}
LIMIT=${LIMIT:-64GiB} SPEC=${SPEC:-} KIND=${KIND:-} FUNCS=${FUNCS:-}
VMMENV=()
[ "$KIND" = vmm ] && VMMENV=(FAKE_CUDA_HOST_VMM=1)
for f in "$BENCH" "$SHIM" "$DRV" "$PLUGIN"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }
done
N1=${N1:-20000} N2=${N2:-40000}
TMP=$(mktemp -d)
BUDGET=cushim-instr-$$
trap 'rm -rf "$TMP" "/dev/shm/cushim-budget-$BUDGET"' EXIT
export CUSHIM_LOG=error
ir() {   # ir N SPEC: instructions of the main thread from main() on
  rm -f "/dev/shm/cushim-budget-$BUDGET"
  # the knobs are not passed on: the environment's size moves the count (getenv on the path: +121 a pair for SPEC)
  env -u SPEC -u LIMIT -u DRV -u N1 -u N2 -u KIND -u FUNCS "${VMMENV[@]}" LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$2" \
    valgrind --tool=callgrind --toggle-collect=main \
    --callgrind-out-file="$TMP/cg" "$BENCH" "$DRV" "$1" 1 $KIND >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
  sed -n 's/^summary: //p' "$TMP/cg"
  cp "$TMP/cg" "$TMP/cg-$1"
}
incl() {   # incl N FUNC: FUNC's inclusive instructions in the count of N pairs (the driver's line for a cu* name)
  callgrind_annotate --inclusive=yes --threshold=100 "$TMP/cg-$1" 2>/dev/null |
    awk -v f="$2" '$0 !~ /=>/ && (index($0, ":" f " [") || index($0, "/" f " [")) { gsub(",", "", $1); print $1; exit }' |
    grep . || echo 0
}
# shared: memory by library on (its default: a backtrace per allocation, docs/benchmarks.md); shared-nolib:
# by_library=false, what the shared budget costs without it
for cfg in "private:$PLUGIN:limit=$LIMIT$SPEC" "shared:$PLUGIN:limit=$LIMIT,budget=$BUDGET$SPEC" \
           "shared-nolib:$PLUGIN:limit=$LIMIT,budget=$BUDGET,by_library=false$SPEC"; do
  name=${cfg%%:*} spec=${cfg#*:}
  a=$(ir "$N1" "$spec") b=$(ir "$N2" "$spec")
  awk -v n="$name" -v a="$a" -v b="$b" -v d=$((N2 - N1)) 'BEGIN { printf "%s budget: %.1f instructions per pair\n", n, (b - a) / d }'
  for f in $FUNCS; do
    a=$(incl "$N1" "$f") b=$(incl "$N2" "$f")
    awk -v f="$f" -v a="$a" -v b="$b" -v d=$((N2 - N1)) 'BEGIN { printf "  %s: %.1f inclusive per pair\n", f, (b - a) / d }'
  done
done
