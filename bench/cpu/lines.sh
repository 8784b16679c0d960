#!/usr/bin/env bash
# bench/cpu/lines.sh - the code one recorded call runs, per object and function: distinct instructions and
# distinct 64-byte code lines (each line a call runs costs it ~2-3 ns inside a real program on the GPU
# machine, where the program's own code evicts the shim's between calls: docs/benchmarks.md "The floor of
# any recorder"). Deterministic: valgrind's callgrind with --dump-instr=yes over cushim_bench_cpu's calls of
# cuDriverGetVersion through the shim with the trace plugin recording; an instruction counts when it ran at
# least once a call (90% of the calls: the rare paths drop out).
#
# USAGE: bash bench/cpu/lines.sh [BUILD_DIR [CONFIG]]    CONFIG: trace (default), paused, posttime, hooktime
#   BASE_DIR=DIR: the same for another build (DIR/runtime/libcushim.so, DIR/plugins/trace.so), after
#   FP_DRIVER=PATH: the fake driver (a Release build has none: build/tests/fake/libcuda.so.1)
#   CALLS=20000   LINES_DETAIL=1: each line's offset from the object's first line run, and its instructions
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
CFG=${2:-trace}
CALLS=${CALLS:-20000}
DRV=${FP_DRIVER:-$BUILD/tests/fake/libcuda.so.1}
[ -e "$DRV" ] || { echo "lines.sh: no fake driver at $DRV (set FP_DRIVER)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "lines.sh: needs valgrind" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
one() {   # one DIR: the table of that build
  local dir=$1 extra=() plug=""
  case $CFG in
    trace) plug="$dir/plugins/trace.so:file=$TMP/t.json,summary=0,buffer=1GiB" ;;
    paused) plug="$dir/plugins/trace.so:file=$TMP/t.json,summary=0,paused=1" ;;
    posttime|hooktime) extra=("$CFG") ;;
    *) echo "lines.sh: unknown config $CFG" >&2; exit 2 ;;
  esac
  BENCH_WARMUP_MS=0 CUSHIM_LOG=error LD_PRELOAD="$dir/runtime/libcushim.so" CUSHIM_PLUGINS="$plug" \
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$TMP/cg" --toggle-collect=cuDriverGetVersion \
    "$BUILD/bench/cpu/cushim_bench_cpu" "$DRV" "$CALLS" 1 "${extra[@]}" >/dev/null 2>"$TMP/err" ||
    { tail -5 "$TMP/err" >&2; exit 1; }
  python3 "$(dirname "$0")/lines.py" "$TMP/cg" "$CALLS" "${LINES_DETAIL:-0}"
}
echo "== $CFG, $BUILD"
one "$BUILD"
if [ -n "${BASE_DIR:-}" ]; then
  echo "== $CFG, $(cd "$BASE_DIR" && pwd) (BASE_DIR)"
  one "$(cd "$BASE_DIR" && pwd)"
fi
