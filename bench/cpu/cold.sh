#!/usr/bin/env bash
# bench/cpu/cold.sh - the CPU cost of one interposed call with hot and with cold caches, per configuration,
# interleaved: direct, shim (no hook), hooktime (an empty timed pre+post hook), trace (the trace plugin
# recording every call) and, given a second trace.so, trace-base.
#
# USAGE: bash bench/cpu/cold.sh [BUILD_DIR [BASE_TRACE_SO]]
#   COLD="0 256"   KiB written between calls (0: the hot loop, calls timed together; N: calls timed alone
#                  after writing one byte per line of an N KiB buffer - an application's work between its
#                  CUDA calls; bench_cpu.c BENCH_COLD_KB)
#   ROUNDS=3 ITERS=20000 RUNS=5
#   CONFIGS="direct shim hooktime trace"   also: hook (empty pre+post, untimed), posttime (an empty timed post
#                  hook alone: what a post-only recorder costs the core), paused (the trace plugin hooked but
#                  paused), floor (bench/floor.h: two TSC reads and one 64-byte store, no shim), floor-ring (the
#                  same into a 512 MiB ring, FLOOR_RING_MB: streamed to memory), floor-reader (that ring read by a second thread
#                  in passes 1 ms apart, as the trace's writer), trace-exit (the trace plugin with render=exit: no
#                  writer beside the calls); direct must stay in the list
#   BASE_DIR=DIR   another build (DIR/runtime/libcushim.so, DIR/plugins/trace.so): each configuration but
#                  direct runs with it too, as CONFIG@base, interleaved with the others
#   BENCH_COLD_STRIDE=B   passed on (bench_cpu.c): 4160 touches one line per page (the TLB too)
#   BENCH_COLD_BRANCHES=N passed on with COLD > 0 (bench_cpu.c): N steps of a branchy interpreter before each call
#   BENCH_COLD_CODE=N     passed on with COLD > 0 (bench_cpu.c): N KiB of straight-line code run before each call
# Prints, per COLD, the median over rounds of each configuration's ns per call and its difference to direct.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
BASE=${2:-}
BENCH=$BUILD/bench/cpu/cushim_bench_cpu
SHIM=$BUILD/runtime/libcushim.so
DRV=$BUILD/tests/fake/libcuda.so.1
[ -e "$DRV" ] || DRV=$BUILD/bench/cpu/standin/libcuda.so.1
TRACE=$BUILD/plugins/trace.so
for f in "$BENCH" "$SHIM" "$DRV" "$TRACE"; do [ -e "$f" ] || { echo "cold.sh: missing $f" >&2; exit 1; }; done
ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-20000} RUNS=${RUNS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUSHIM_LOG=error
read -r -a configs <<<"${CONFIGS:-direct shim hooktime trace}"
[ -n "$BASE" ] && configs+=(trace-base)
if [ -n "${BASE_DIR:-}" ]; then
  BASE_DIR=$(cd "$BASE_DIR" && pwd)
  for c in "${configs[@]}"; do [ "$c" = direct ] || configs+=("$c@base"); done
fi
# EXTRA="NAME=TRACE_SO ...": more builds of the trace plugin, each a configuration of its own (bench/cpu/ablate.sh)
declare -A extra_so=()
for x in ${EXTRA:-}; do
  extra_so[${x%%=*}]=${x#*=}
  configs+=("${x%%=*}")
  [ -e "${x#*=}" ] || { echo "cold.sh: missing ${x#*=}" >&2; exit 1; }
done
one() {   # one CONFIG COLD: prints ns per call
  local cfg=$1 cold=$2 key=median_ns_per_call SHIM=$SHIM TRACE=$TRACE
  local -a e=(env)
  case $cfg in *@base) cfg=${cfg%@base} SHIM=$BASE_DIR/runtime/libcushim.so TRACE=$BASE_DIR/plugins/trace.so ;; esac
  [ "$cold" -gt 0 ] && { e+=(BENCH_COLD_KB="$cold" BENCH_COLD_STRIDE="${BENCH_COLD_STRIDE:-64}" BENCH_COLD_BRANCHES="${BENCH_COLD_BRANCHES:-0}" BENCH_COLD_CODE="${BENCH_COLD_CODE:-0}"); key=median_cold_ns_per_call; }
  case $cfg in
    direct|floor) ;;
    floor-ring) e+=(BENCH_FLOOR_RING_MB="${FLOOR_RING_MB:-512}") ;;
    floor-reader) e+=(BENCH_FLOOR_RING_MB="${FLOOR_RING_MB:-512}" BENCH_FLOOR_READER=1) ;;
    trace-exit) e+=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$TRACE:file=$TMP/t.json,summary=0,buffer=1GiB,render=exit") ;;
    shim|hook|hooktime|posttime) e+=(LD_PRELOAD="$SHIM") ;;
    trace) e+=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$TRACE:file=$TMP/t.json,summary=0,buffer=1GiB") ;;
    paused) e+=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$TRACE:file=$TMP/t.json,summary=0,paused=1") ;;
    trace-base) e+=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$BASE:file=$TMP/t.json,summary=0,buffer=1GiB") ;;
    *) e+=(LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="${extra_so[$cfg]}:file=$TMP/t.json,summary=0,buffer=1GiB") ;;
  esac
  local extra=()
  case $cfg in hook|hooktime|posttime|floor) extra=("$cfg") ;; floor-*) extra=(floor) ;; esac
  "${e[@]}" "$BENCH" "$DRV" "$ITERS" "$RUNS" "${extra[@]}" | awk -v k="$key" '$1 == k { print $2 }'
}
for cold in ${COLD:-0 256}; do
  : >"$TMP/r.$cold"
  for ((r = 0; r < ROUNDS; r++)); do
    for ((k = 0; k < ${#configs[@]}; k++)); do
      cfg=${configs[$(((k + r) % ${#configs[@]}))]}
      echo "$cfg $(one "$cfg" "$cold")" >>"$TMP/r.$cold"
    done
  done
  python3 - "$TMP/r.$cold" "$cold" "${configs[@]}" <<'PY'
import statistics, sys
f, cold, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
v = {}
for line in open(f):
    c, x = line.split()[:2]
    v.setdefault(c, []).append(float(x))
d = statistics.median(v["direct"])
print("cold %d KiB (%s): ns per call, median of %d rounds (min-max), and minus direct" % (
    cold, "calls timed alone after the buffer writes" if cold else "the hot loop", len(v["direct"])))
for c in configs:
    m = statistics.median(v[c])
    print("  %-10s %8.2f (%.2f-%.2f)  %+8.2f" % (c, m, min(v[c]), max(v[c]), m - d))
PY
done
