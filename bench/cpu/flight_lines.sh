#!/usr/bin/env bash
# bench/cpu/flight_lines.sh - the code one call recorded by the flight recorder runs (plugins/flight): the same
# measurement as bench/cpu/lines.sh (valgrind's callgrind over cushim_bench_cpu's calls of cuDriverGetVersion
# through the shim, an instruction counted when it ran at least once a call; bench/cpu/lines.py reads it), for
# four configurations, so that the recorder's own part can be told from the host's:
#   no hook     the call through the shim, nothing hooked
#   hooktime    an empty pre and post hook, the host reading the entry clock (cushim_bench_cpu hooktime)
#   posttime    an empty post hook alone, the host reading the entry clock: the core's part of a query that the
#               flight recorder times with the host's clock (clock=host)
#   post        an empty post hook alone, no clock: the core's part of a query the recorder times with the TSC
#   flight      the flight plugin recording every call (its ring in a temporary directory), as it runs here
#               (clock=auto: the TSC read in its hooks where it can be, docs/plugins/flight.md "Time")
#   flight, host clock   the same with clock=host (the host's clocks, CUSHIM_HOOK_TIME | CUSHIM_HOOK_EXIT_TIME)
#   trace       the trace plugin, for comparison (as bench/cpu/lines.sh)
# and then the same for a launch: tests/e2e/e2e_flight's 'launches' (cuLaunchKernel of a kernel with three
# arguments, 64 bytes of params; the recorder also copies the 20 bytes of arguments after the call) with no hook,
# with the flight recorder and with the trace plugin (its TSC clock, and clock=host: the core's clocks), and a
# cuCtxGetCurrent (e2e_flight's 'queries') with no hook, the flight recorder and the trace. Each configuration ends with the instructions executed a
# call split by part of the work (bench/cpu/parts.py: the host's clock reads and dispatch, the plugin's record,
# its copies of the params and kernel arguments, its work on the launched function), from the source lines of a
# build with debug information (RelWithDebInfo; a Release build's figures lack the split).
#
# USAGE: bash bench/cpu/flight_lines.sh [BUILD_DIR]      CALLS=20000  FP_DRIVER=PATH  LINES_DETAIL=1 (also each
#        source function's share in parts.py's split)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
CALLS=${CALLS:-20000}
DRV=${FP_DRIVER:-$BUILD/tests/fake/libcuda.so.1}
[ -e "$DRV" ] || { echo "flight_lines.sh: no fake driver at $DRV (set FP_DRIVER)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "flight_lines.sh: needs valgrind" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SRC=${PARTS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}   # the sources the build was made from (parts.py)
# lines.py counts the shim's, the trace plugin's, ld.so's and libc's code: flight.so's too here
sed 's/"trace.so", /"trace.so", "flight.so", /' "$(dirname "$0")/lines.py" >"$TMP/lines.py"
one() {   # one NAME PLUGINS [BENCH_CONFIG]
  echo "== cuDriverGetVersion, $1"
  BENCH_WARMUP_MS=0 CUSHIM_LOG=error LD_PRELOAD="$BUILD/runtime/libcushim.so" CUSHIM_PLUGINS="$2" \
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$TMP/cg" --toggle-collect=cuDriverGetVersion \
    "$BUILD/bench/cpu/cushim_bench_cpu" "$DRV" "$CALLS" 1 ${3:-} >/dev/null 2>"$TMP/err" ||
    { tail -5 "$TMP/err" >&2; exit 1; }
  python3 "$TMP/lines.py" "$TMP/cg" "$CALLS" "${LINES_DETAIL:-0}"
  executed
  python3 "$(dirname "$0")/parts.py" "$TMP/cg" "$CALLS" "$SRC" "${LINES_DETAIL:-0}"
}
# the instructions executed per call in the shim, the plugins, ld.so and libc (loops counted; the driver and the
# program left out, as lines.py leaves them out): every instruction's exclusive cost, by object, over CALLS
executed() {
  python3 - "$TMP/cg" "$CALLS" <<'PY'
import collections, re, sys
names, ob, skip, total, per = {}, None, False, 0, collections.Counter()
for line in open(sys.argv[1]):
    if line.startswith(("ob=", "cob=")):
        m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
        if m and m.group(2):
            names[m.group(1)] = m.group(2)
        if line.startswith("ob="):
            ob = names.get(m.group(1), "") if m else line[3:]
    elif line.startswith("calls="):
        skip = True
    else:
        m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)", line)
        if m:
            if skip:
                skip = False
            else:
                k = [k for k in ("libcushim", "trace.so", "flight.so", "ld-linux", "libc.so") if k in (ob or "")]
                if k:
                    total += int(m.group(2))
                    per[k[0]] += int(m.group(2))
n = int(sys.argv[2])
print("executed per call: %.1f instructions (%s)" % (total / n, ", ".join("%s %.1f" % (k, v / n) for k, v in sorted(per.items()))))
PY
}
launch() {   # launch NAME PLUGINS [API MODE]: cuLaunchKernel (e2e_flight launches), or API called by MODE
  echo "== ${3:-cuLaunchKernel}, $1"
  CUSHIM_LOG=error LD_PRELOAD="$BUILD/runtime/libcushim.so" LD_LIBRARY_PATH="$(dirname "$DRV")" CUSHIM_PLUGINS="$2" \
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$TMP/cg" --toggle-collect="${3:-cuLaunchKernel}" \
    "$BUILD/tests/e2e/e2e_flight" "${4:-launches}" "$CALLS" >/dev/null 2>"$TMP/err" || { tail -5 "$TMP/err" >&2; exit 1; }
  python3 "$TMP/lines.py" "$TMP/cg" "$CALLS" "${LINES_DETAIL:-0}"
  executed
  python3 "$(dirname "$0")/parts.py" "$TMP/cg" "$CALLS" "$SRC" "${LINES_DETAIL:-0}"
}
one "no hook" ""
one "empty pre hook with the entry clock (cushim_bench_cpu hooktime)" "" hooktime
one "empty post hook alone with the entry clock (cushim_bench_cpu posttime)" "" posttime
one "empty post hook alone, no clock (cushim_bench_cpu post)" "" post
one "flight" "$BUILD/plugins/flight.so:dir=$TMP,n=1024"
one "flight, host clock" "$BUILD/plugins/flight.so:dir=$TMP,n=1024,clock=host"
one "trace" "$BUILD/plugins/trace.so:file=$TMP/t.json,summary=0,buffer=1GiB"
if [ -x "$BUILD/tests/e2e/e2e_flight" ]; then
  launch "no hook" ""
  launch "flight" "$BUILD/plugins/flight.so:dir=$TMP,n=1024"
  launch "flight, host clock" "$BUILD/plugins/flight.so:dir=$TMP,n=1024,clock=host"
  launch "trace" "$BUILD/plugins/trace.so:file=$TMP/t2.json,summary=0,buffer=1GiB"
  launch "trace, host clock" "$BUILD/plugins/trace.so:file=$TMP/t2.json,summary=0,buffer=1GiB,clock=host"
  # cuCtxGetCurrent (e2e_flight queries): the query of the benchmarks against CUPTI (bench/gpu/run.sh)
  launch "no hook" "" cuCtxGetCurrent queries
  launch "flight" "$BUILD/plugins/flight.so:dir=$TMP,n=1024" cuCtxGetCurrent queries
  launch "trace" "$BUILD/plugins/trace.so:file=$TMP/t3.json,summary=0,buffer=1GiB" cuCtxGetCurrent queries
fi
