#!/bin/sh
# run_gpubench_ab.sh BENCH SHIM TRACE_SO OUT: launch_bench's BENCH_AB inside one process, on the fake driver
# (tests/e2e/gpubench.cmake). Checks the plumbing, never the timings: a result line with its pairs, every
# block switched (hooks removed and added again; the trace's recording toggled: the trace holds the calls of
# the recording blocks and not those of the paused ones), and a refusal without anything to switch.
set -u
bench=$1 shim=$2 trace=$3 out=$4/gpubench_ab
rm -rf "$out" && mkdir -p "$out" && cd "$out" || exit 1
fail() { echo "gpubench_ab: FAIL: $*"; exit 1; }
export CUSHIM_LOG=error
# 1. hooks: 6 blocks of 1000 calls and 2 bursts of 256 launches
env BENCH_LABEL=ab-hooks BENCH_HOOKS=1 BENCH_HOOKS_TIME=1 BENCH_AB=6 BENCH_AB_CALLS=1000 BENCH_AB_BURSTS=2 \
    LD_PRELOAD="$shim" "$bench" 512 1000 >hooks.out 2>hooks.err || fail "hooks run: $(cat hooks.err)"
grep -Eq '^label=ab-hooks .* hooks=[1-9][0-9]* .* ab_pairs=3 ab_ctx_ns=-?[0-9.]+ ab_burst_ns=-?[0-9.]+$' hooks.out ||
    fail "hooks line: $(cat hooks.out)"
# 1b. the trace plugin's shape of hooks (both clock reads; cuCtxGetCurrent's exit alone), as bench/gpu/run.sh's ab-hooks
env BENCH_LABEL=ab-hooks BENCH_HOOKS=1 BENCH_HOOKS_TIME=2 BENCH_AB=2 BENCH_AB_CALLS=1000 BENCH_AB_BURSTS=2 \
    LD_PRELOAD="$shim" "$bench" 512 1000 >hooks2.out 2>hooks2.err || fail "hooks (trace's shape) run: $(cat hooks2.err)"
grep -Eq '^label=ab-hooks .* ab_pairs=1 ab_ctx_ns=-?[0-9.]+ ab_burst_ns=-?[0-9.]+$' hooks2.out ||
    fail "hooks (trace's shape) line: $(cat hooks2.out)"
# 2. the trace toggled: blocks on, off, off, on, on, off - 3 recording blocks of 1000 cuCtxGetCurrent
env BENCH_LABEL=ab-trace BENCH_AB=6 BENCH_AB_SIGNAL=1 BENCH_AB_CALLS=1000 BENCH_AB_BURSTS=2 BENCH_AB_GAP_MS=5 \
    LD_PRELOAD="$shim" \
    CUSHIM_PLUGINS="$trace:file=$out/t.json,summary=0,toggle=USR2" "$bench" 512 1000 >trace.out 2>trace.err ||
    fail "trace run: $(cat trace.err)"
grep -q ' ab_pairs=3 ' trace.out || fail "trace line: $(cat trace.out)"
# before the blocks: 100000 warm-up calls (launch_bench's own) + 1000 measured; in the blocks: 3 x 1000
python3 - "$out/t.json" <<'PY' || fail "the trace's cuCtxGetCurrent count"
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(1 for e in d["traceEvents"] if e.get("ph") == "X" and e.get("name") == "cuCtxGetCurrent")
want = 100000 + 1000 + 3 * 1000
if n != want:
    sys.exit("cuCtxGetCurrent events %d, want %d" % (n, want))
PY
# 3. nothing to switch: refused
if env BENCH_LABEL=bad BENCH_AB=4 "$bench" 512 1000 >bad.out 2>bad.err; then fail "BENCH_AB without a switch ran"; fi
grep -q 'BENCH_AB needs' bad.err || fail "no reason given: $(cat bad.err)"
echo "gpubench_ab: PASS"
