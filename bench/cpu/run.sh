#!/usr/bin/env bash
# run.sh - CPU overhead of the shim on one cheap driver call, as a markdown table.
#
# USAGE: bench/cpu/run.sh [build dir]        (default: ./build)
#
# Measures cuDriverGetVersion of the fake driver (build/tests/fake/libcuda.so.1,
# else the stand-in build/bench/cpu/standin/libcuda.so.1):
#   (a) direct       the driver's function, no shim
#   (b) shim         LD_PRELOAD=libcushim.so, no hook (the fast path)
#   (c) shim+hook    one empty pre and one empty post hook (the slow path)
#   (d) shim+hook+time  the same hooks added with CUSHIM_HOOK_TIME (call->t_enter_ns filled)
#   (e) trace        the trace plugin recording every call (build/plugins/trace.so; file in a temp dir):
#                    instructions of the calling thread inside main() (callgrind --separate-threads
#                    --toggle-collect=main); the rendering's instructions per event are reported below
# Instructions per call: valgrind --tool=callgrind, difference between runs of
# N1 and N2 iterations (start-up cancels). Time per call: median of RUNS means.
# Init: extra instructions of a whole run with one call (shim start-up plus lazy
# resolution), first-call latency, and the wall time of /bin/true with the shim.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
BENCH="$BUILD/bench/cpu/cushim_bench_cpu"
SHIM="$BUILD/runtime/libcushim.so"
DRV="$BUILD/tests/fake/libcuda.so.1"
[ -e "$DRV" ] || DRV="$BUILD/bench/cpu/standin/libcuda.so.1"
for f in "$BENCH" "$SHIM" "$DRV"; do
  [ -e "$f" ] || { echo "missing $f: build targets cushim, cushim_bench_cpu, cushim_fake_cuda" >&2; exit 1; }
done
N1=${N1:-200000}
N2=${N2:-400000}
ITERS=${ITERS:-2000000}
RUNS=${RUNS:-21}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUSHIM_LOG=error

# run <mode> <cmd...>: mode direct|shim|hook
run() {
  local mode=$1; shift
  case $mode in
    direct) env "$@" ;;
    shim) env LD_PRELOAD="$SHIM" "$@" ;;
    hook) env LD_PRELOAD="$SHIM" "$@" hook ;;
    hooktime) env LD_PRELOAD="$SHIM" "$@" hooktime ;;
    trace) env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$TRACE:file=$TMP/trace.json,summary=0,buffer=2GiB" "$@" ;;
  esac
}

ir() {   # ir <mode> <iters>: total instructions of one run (trace: of the calling thread inside main())
  local out="$TMP/cg.$1.$2"
  if [ "$1" = trace ]; then
    # the calling thread while in main(): the recording (the exit flush runs after main returns)
    run "$1" valgrind --tool=callgrind --separate-threads=yes --toggle-collect=main --callgrind-out-file="$out" \
      "$BENCH" "$DRV" "$2" 1 >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$out-01"
    # every thread, the whole run: recording + rendering + writing, for the writer's cost per event
    run "$1" valgrind --tool=callgrind --callgrind-out-file="$out.all" "$BENCH" "$DRV" "$2" 1 >/dev/null 2>&1
    awk '/^(summary|totals):/ {print $2; exit}' "$out.all" >"$out.writer"
    return
  fi
  run "$1" valgrind --tool=callgrind --callgrind-out-file="$out" "$BENCH" "$DRV" "$2" 1 >/dev/null 2>&1
  awk '/^(summary|totals):/ {print $2; exit}' "$out"
}

TRACE="$BUILD/plugins/trace.so"
MODES="direct shim hook hooktime"
[ -e "$TRACE" ] && MODES="$MODES trace"
declare -A IPC NS FIRST CPU
for m in $MODES; do
  a=$(ir $m "$N1"); b=$(ir $m "$N2")
  IPC[$m]=$(awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" 'BEGIN {printf "%.2f", (b - a) / (n2 - n1)}')
  out=$(run $m "$BENCH" "$DRV" "$ITERS" "$RUNS")
  NS[$m]=$(awk '$1 == "median_ns_per_call" {print $2}' <<<"$out")
  FIRST[$m]=$(awk '$1 == "first_call_ns" {print $2}' <<<"$out")
  CPU[$m]=$(awk '$1 == "median_thread_cpu_ns_per_call" {print $2}' <<<"$out")
done
init_direct=$(ir direct 1); init_shim=$(ir shim 1)

true_ns() {   # median wall ns of /bin/true over 101 runs, optionally preloaded
  local i t0 t1; local -a v=()
  for i in $(seq 101); do
    t0=$(date +%s%N); env ${1:+LD_PRELOAD=$1} /bin/true; t1=$(date +%s%N); v+=($((t1 - t0)))
  done
  printf '%s\n' "${v[@]}" | sort -n | sed -n 51p
}
true_plain=$(true_ns ""); true_shim=$(true_ns "$SHIM")

echo "## cushim CPU benchmark"
echo
echo "driver: \`$DRV\` (cuDriverGetVersion); $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
echo "| path | instructions / call | Δ vs direct | median ns / call | Δ ns | first call (ns) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for m in $MODES; do
  label=$m; [ $m = direct ] && label="(a) direct"; [ $m = shim ] && label="(b) shim, no hook"
  [ $m = hook ] && label="(c) shim, empty pre+post hook"
  [ $m = hooktime ] && label="(d) shim, the same with CUSHIM_HOOK_TIME"
  [ $m = trace ] && label="(e) trace plugin recording every call (calling thread)"
  di=$(awk -v x="${IPC[$m]}" -v y="${IPC[direct]}" 'BEGIN {printf "%+.2f", x - y}')
  dn=$(awk -v x="${NS[$m]}" -v y="${NS[direct]}" 'BEGIN {printf "%+.2f", x - y}')
  echo "| $label | ${IPC[$m]} | $di | ${NS[$m]} | $dn | ${FIRST[$m]} |"
done
echo
echo "| init | direct | shim | Δ |"
echo "| --- | ---: | ---: | ---: |"
echo "| instructions, whole run with one call | $init_direct | $init_shim | $((init_shim - init_direct)) |"
echo "| /bin/true wall time, median of 101 (ns) | $true_plain | $true_shim | $((true_shim - true_plain)) |"
echo
if [ -e "$TRACE" ]; then
  echo "Calling thread's CPU time per call (CLOCK_THREAD_CPUTIME_ID, median of the same runs; the writer thread taking its core does not count): (d) ${CPU[hooktime]} ns, (e) ${CPU[trace]} ns."
  wa=$(cat "$TMP/cg.trace.$N1.writer"); wb=$(cat "$TMP/cg.trace.$N2.writer")
  echo "Trace, every thread over the whole run: $(awk -v a="$wa" -v b="$wb" -v n1="$N1" -v n2="$N2" -v r="${IPC[trace]}" 'BEGIN {printf "%.0f", (b - a) / (n2 - n1) - r}') instructions per event besides the recording (rendering and writing, on the writer thread or in the exit flush)."
  env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$TRACE:file=$TMP/tp.json,summary=0,buffer=2GiB" "$BENCH" "$DRV" 1000000 1 >/dev/null 2>&1
  python3 - "$TMP/tp.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
o = d['otherData']
size = os.path.getsize(sys.argv[1])
print("Trace of 1,000,000 cuDriverGetVersion calls: %.1f record bytes per event in the buffers, %.1f file bytes per "
      "event, writer throughput %.0f events/s (events / writer busy time), %d dropped." % (
      o['record_bytes'] / o['events'], size / o['events'], o['events'] / (o['writer_busy_ns'] / 1e9), o['dropped_events']))
PY
  # the same calls to Perfetto's protobuf format (format=perfetto): its bytes, and the writer's rate from its
  # otherData event, decoded by the tests' independent reader
  env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$TRACE:file=$TMP/tp.perfetto-trace,summary=0,buffer=2GiB" "$BENCH" "$DRV" 1000000 1 >/dev/null 2>&1
  python3 - "$TMP/tp.perfetto-trace" "$(dirname "$0")/../../tests/e2e" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[2])
import pftrace
evs, info = pftrace.events(sys.argv[1])
o = [e for e in evs if e.get('name') == 'otherData'][0]['args']
size = os.path.getsize(sys.argv[1])
print("The same to a Perfetto file (format=perfetto): %.1f file bytes per event, writer throughput %.0f events/s, "
      "%d dropped." % (size / o['events'], o['events'] / (o['writer_busy_ns'] / 1e9), o['dropped_events']))
PY
  echo
fi
echo "Instructions per call include the benchmark loop and the driver's own function; N1=$N1, N2=$N2."
echo "Time: median of $RUNS runs of $ITERS calls each."
