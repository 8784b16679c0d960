#!/bin/sh
# run_gpubench_ab.sh BENCH SHIM TRACE_SO OUT [FAKE_CUPTI [GPUAB_SO [FLIGHT_AB_SO]]]: launch_bench's BENCH_AB inside
# one process, on the fake driver (tests/e2e/gpubench.cmake). Checks the plumbing, never the timings: a result line with its pairs,
# every block switched (hooks removed and added again; the trace's recording toggled: the trace holds the calls
# of the recording blocks and not those of the paused ones), a refusal without anything to switch, and with the
# stand-in libcupti BENCH_AB_VS (trace, CUPTI and the floor in turns: the trace holds its blocks' calls alone);
# with the gpu-ab copy of the plugin (GPUAB_SO, the GPU check tracegpuab's instrument) its CUPTI switch: API records
# in the paused blocks, CUPTI detached and attached again on each resume, the recording blocks' launches linked;
# with the flight recorder's A/B copy (FLIGHT_AB_SO, the GPU check flightab's instrument) BENCH_AB_VS switching it.
set -u
bench=$1 shim=$2 trace=$3 out=$4/gpubench_ab cupti=${5:-} gpuab=${6:-} flightab=${7:-}
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
# 4. BENCH_AB_VS: 2 cycles of 8 blocks (none, trace, CUPTI, floor, floor, CUPTI, trace, none) of 1000 calls, 2
#    bursts timed whole and 2 with each launch timed, every burst behind the gate kernel (BENCH_GATE); the trace
#    starts paused with its hooks out (unhook) and records the 4 trace blocks alone
if [ -n "$cupti" ]; then
    env BENCH_LABEL=ab-vs BENCH_CUPTI=1 BENCH_CUPTI_LIB="$cupti" BENCH_AB=16 BENCH_AB_VS=1 BENCH_AB_CALLS=1000 \
        BENCH_AB_BURSTS=2 BENCH_AB_GAP_MS=50 BENCH_GATE=1 LD_PRELOAD="$shim" \
        CUSHIM_PLUGINS="$trace:file=$out/vs.json,summary=0,toggle=USR2,unhook=1,paused=1" "$bench" 512 1000 \
        >vs.out 2>vs.err || fail "ab-vs run: $(cat vs.err)"
    grep -Eq '^label=ab-vs .* cupti=1 gate=1 ab_vs_cycles=2 ab_vs_trace_ctx_ns=-?[0-9.]+ ab_vs_cupti_ctx_ns=-?[0-9.]+ ab_vs_floor_ctx_ns=-?[0-9.]+ .* ab_vs_floor_ratio_burst=(-?[0-9.]+|-?nan) ab_vs_trace_lmed_ns=-?[0-9.]+ .* ab_vs_floor_ratio_lmed=(-?[0-9.]+|-?nan)$' vs.out ||
        fail "ab-vs line: $(cat vs.out)"
    python3 - "$out/vs.json" <<'PY' || fail "the ab-vs trace's counts"
import json, sys
d = json.load(open(sys.argv[1]))
X = [e for e in d["traceEvents"] if e.get("ph") == "X"]
n = sum(1 for e in X if e["name"] == "cuCtxGetCurrent")
k = sum(1 for e in X if e["name"] == "cuLaunchKernel")
# 4 trace blocks of 4 bursts of 256 launches, each burst after one launch of the gate kernel
if (n, k) != (4 * 1000, 4 * 4 * (256 + 1)):
    sys.exit("cuCtxGetCurrent %d, cuLaunchKernel %d; want 4000, 4112 (the trace blocks alone)" % (n, k))
PY
    # with BENCH_AB_VS but no CUPTI: refused
    if env BENCH_LABEL=ab-vs BENCH_AB=8 BENCH_AB_VS=1 BENCH_AB_SIGNAL=1 LD_PRELOAD="$shim" \
        CUSHIM_PLUGINS="$trace:file=$out/vs2.json,summary=0,toggle=USR2" "$bench" 512 1000 >vs2.out 2>vs2.err; then
        fail "BENCH_AB_VS without BENCH_CUPTI ran"
    fi
    grep -q 'BENCH_AB_VS needs BENCH_CUPTI' vs2.err || fail "no reason given: $(cat vs2.err)"
fi
# 5. the gpu-ab copy: 8 blocks (on off off on on off off on) of 1000 cuCtxGetCurrent and 2 bursts of 256 launches;
#    4 switches, 2 of them resumes (each detaches CUPTI at a launch's exit callback and attaches it again)
if [ -n "$cupti" ] && [ -n "$gpuab" ]; then
    env BENCH_LABEL=ab-trace BENCH_AB=8 BENCH_AB_SIGNAL=1 BENCH_AB_CALLS=1000 BENCH_AB_BURSTS=2 BENCH_AB_GAP_MS=20 \
        LD_PRELOAD="$shim" CUSHIM_PLUGINS="$gpuab:file=$out/ab.json,summary=0,toggle=USR2,unhook=1,gpu=1,cupti=$cupti" \
        "$bench" 512 1000 >gpuab.out 2>gpuab.err || fail "gpu-ab run: $(cat gpuab.err)"
    grep -q ' ab_pairs=4 ' gpuab.out || fail "gpu-ab line: $(cat gpuab.out)"
    line=$(grep '^cushim trace gpu-ab:' gpuab.err) || fail "no gpu-ab line: $(cat gpuab.err)"
    echo "$line" | grep -Eq '^cushim trace gpu-ab: [1-9][0-9]* API activity records while paused, 4 switches, 0 failed, [1-9][0-9]* callbacks switched, 2 detached and attached again$' ||
        fail "gpu-ab: $line"
    python3 - "$out/ab.json" <<'PY' || fail "the gpu-ab trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
X = [e for e in ev if e.get("ph") == "X"]
launches = sum(1 for e in X if e["name"] == "cuLaunchKernel")
kernels = [e for e in X if e.get("cat") == "kernel"]
# recorded: launch_bench's own launches before the blocks, then 4 recording blocks of 2 bursts of 256
if launches < 4 * 2 * 256:
    sys.exit("cuLaunchKernel %d, want at least %d" % (launches, 4 * 2 * 256))
# the stand-in makes a kernel of every launch its callbacks saw: those of the recording blocks, after each
# re-attachment too (the kernels of the paused blocks have no callback: none)
if len(kernels) < 4 * 2 * 256:
    sys.exit("%d kernel events, want at least %d: the callbacks did not come back after a re-attachment" % (len(kernels), 4 * 2 * 256))
PY
fi
# 6. the flight recorder's A/B copy under BENCH_AB_VS (tests/gpu/checks/flight.sh 'flightab'): 2 cycles, the
#    recorder's hooks out at start (ab_paused) and switched 4 times a cycle; the ring kept (keep=1) holds the calls
#    of its blocks: launches of the gate kernel and of the bursts
if [ -n "$cupti" ] && [ -n "$flightab" ]; then
    mkdir -p "$out/fl"
    env CUSHIM_LOG=info BENCH_LABEL=ab-vs BENCH_CUPTI=1 BENCH_CUPTI_LIB="$cupti" BENCH_AB=16 BENCH_AB_VS=1 \
        BENCH_AB_CALLS=1000 BENCH_AB_BURSTS=2 BENCH_AB_GAP_MS=50 BENCH_GATE=1 LD_PRELOAD="$shim" \
        CUSHIM_PLUGINS="$flightab:dir=$out/fl,keep=1,signal=off,ab_paused=1" "$bench" 512 1000 \
        >flab.out 2>flab.err || fail "flight ab-vs run: $(cat flab.err)"
    grep -Eq '^label=ab-vs .* cupti=1 gate=1 ab_vs_cycles=2 ab_vs_trace_ctx_ns=-?[0-9.]+ ' flab.out ||
        fail "flight ab-vs line: $(cat flab.out)"
    grep -q 'hook groups (now out)' flab.err || fail "the A/B copy did not start paused: $(cat flab.err)"
    grep -q 'A/B copy: 8 switches, 0 failures' flab.err || fail "the A/B copy's switches: $(grep 'A/B' flab.err)"
    [ "$(ls "$out/fl" | grep -c '^cushim-flight-.*\.ring$')" = 1 ] || fail "no ring of the recorded blocks: $(ls "$out/fl")"
fi
echo "gpubench_ab: PASS"
