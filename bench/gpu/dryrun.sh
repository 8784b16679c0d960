#!/usr/bin/env bash
# bench/gpu/dryrun.sh - the GPU benchmarks' plumbing without a GPU: the checks 'tracebench' and 'universal bench'
# (tests/gpu/checks/trace.sh, universal.sh), bench/gpu/run.sh and bench/gpu/cupti_cost.sh, run against the test suite's fake libraries
# with stand-ins for what needs a GPU: a 'python' whose trace_gpu.py runs the fake vecadd (under the shim and the
# trace plugin when the launcher put them there) and prints an invented step time, a launch_bench that prints
# invented figures, an nsys that runs its command. The figures mean nothing; what is checked is that every
# configuration runs, the trace plugin's cost line is parsed, the tables and verdict lines come out, and each
# result is PASS. The ctest 'gpubench_dryrun' runs it.
#
# USAGE: bench/gpu/dryrun.sh BUILD_DIR   (needs BUILD_DIR/runtime/libcushim.so, plugins/trace.so, examples/vecadd,
#                                         tests/fake; gcc for bench_libs.c; python3)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$(cd "${1:?usage: dryrun.sh BUILD_DIR}" && pwd)
HERE=$ROOT/tests/gpu
SHIM=$BUILD_DIR/runtime/libcushim.so
FAKE=$BUILD_DIR/tests/fake
# the fake cuBLAS is libcublas.so.<the tree's CUDA major>
cublas=$(cd "$FAKE" 2>/dev/null && ls libcublas.so.[0-9]* 2>/dev/null | head -n 1)
for f in "$SHIM" "$BUILD_DIR/plugins/trace.so" "$BUILD_DIR/examples/vecadd" "$FAKE/libnvidia-ml.so.1" "$FAKE/${cublas:-libcublas.so.N}"; do
    [ -e "$f" ] || { echo "dryrun: $f missing" >&2; exit 2; }
done
export BENCH_LIBS_CUBLAS_SONAME=$cublas
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cushim-dryrun.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LOGS=$WORK/logs DATA=$WORK/data BIN=$WORK/bin S=$WORK/standin
mkdir -p "$LOGS" "$DATA" "$BIN" "$S"
export LD_LIBRARY_PATH=$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset LD_PRELOAD

cat >"$S/python" <<EOF
#!/bin/bash
case \${1:-} in
*/trace_gpu.py)
    "$BUILD_DIR/examples/vecadd" 1024 >/dev/null || exit 1
    [ -n "\${CUPTI_ACTIVITY_OUT:-}" ] && printf 'kernel 1\nmemcpy 3\n' >"\$CUPTI_ACTIVITY_OUT"
    echo "median_step_ns \$((1400000 + RANDOM))" ;;
*) exec python3 "\$@" ;;
esac
EOF
cat >"$S/nsys" <<'EOF'
#!/bin/bash
[ "${1:-}" = --version ] && { echo "stand-in nsys"; exit 0; }
shift
while [[ ${1:-} == --* ]]; do shift; done
exec "$@"
EOF
cat >"$S/launch_bench" <<EOF
#!/bin/bash
case \$BENCH_LABEL in
native) c=8.7 ;; shim) c=10.7 ;; shim+hooks) c=30.9 ;; cupti) c=128.2 ;; trace) c=60.0 ;; trace-base) c=90.0 ;; *) c=1 ;;
esac
[ "\${BENCH_LABEL#trace}" != "\$BENCH_LABEL" ] && { "$BUILD_DIR/examples/vecadd" 1024 >/dev/null || exit 1; }
i=\$((3500 + RANDOM % 500))
# as the real one: BENCH_AB without a switch is refused (a configuration must not inherit it)
case \$BENCH_LABEL in
ab-*) ;;
*) [ -n "\${BENCH_AB:-}" ] && { echo "launch_bench: BENCH_AB needs BENCH_HOOKS, BENCH_CUPTI or BENCH_AB_SIGNAL" >&2; exit 1; } ;;
esac
[ "\$BENCH_LABEL" = ab-hooks ] && [ "\${BENCH_HOOKS_TIME:-}" != 2 ] && { echo "ab-hooks: not the trace plugin's hooks" >&2; exit 1; }
ab=""
if [ -n "\${BENCH_AB:-}" ]; then
    case \$BENCH_LABEL in ab-hooks) ab=" ab_pairs=4 ab_ctx_ns=20.0 ab_burst_ns=30.0" ;; ab-cupti) ab=" ab_pairs=4 ab_ctx_ns=90.0 ab_burst_ns=200.0" ;;
    ab-trace) ab=" ab_pairs=4 ab_ctx_ns=30.0 ab_burst_ns=60.0" ;;
    ab-vs) [ "\${BENCH_AB_VS:-}" = 1 ] && [ "\${BENCH_CUPTI:-}" = 1 ] || { echo "ab-vs: BENCH_AB_VS, BENCH_CUPTI" >&2; exit 1; }
           case \${CUSHIM_PLUGINS:-} in *toggle=USR2*unhook=1*paused=1*) ;; *) echo "ab-vs: plugin options" >&2; exit 1 ;; esac
           ab=" ab_vs_cycles=1 ab_vs_trace_ctx_ns=40.00 ab_vs_cupti_ctx_ns=100.00 ab_vs_floor_ctx_ns=30.00 ab_vs_trace_burst_ns=90.0 ab_vs_cupti_burst_ns=150.0 ab_vs_floor_burst_ns=45.0 ab_vs_ratio_ctx=0.400 ab_vs_ratio_burst=0.600 ab_vs_floor_ratio_ctx=0.300 ab_vs_floor_ratio_burst=0.300 ab_vs_trace_lmed_ns=60.0 ab_vs_cupti_lmed_ns=140.0 ab_vs_floor_lmed_ns=40.0 ab_vs_ratio_lmed=0.429 ab_vs_floor_ratio_lmed=0.286" ;; esac
fi
echo "label=\$BENCH_LABEL launches_per_s=\$((1000000000 / i)) issue_ns=\$i burst_ns=\$((i / 2)) ctxgetcurrent_ns=\$c hooks=0 cupti=0\$ab"
EOF
chmod +x "$S/python" "$S/nsys" "$S/launch_bench"
: >"$BIN/libcupti_activity.so"   # present: the stand-in python writes its counts

# what tests/gpu/run.sh gives a check
PY=$S/python
CHECKS=" tracebench universal "
want() { case $CHECKS in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
DEADLINE=$(($(date +%s) + 300))
time_left() { echo $((DEADLINE - $(date +%s))); }
tmo() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
RESULTS=$WORK/results.tsv
result() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" | tee -a "$RESULTS"; }
gpu_check() { :; }
# shellcheck source=../../tests/gpu/checks/trace.sh
. "$HERE/checks/trace.sh"
# shellcheck source=../../tests/gpu/checks/universal.sh
. "$HERE/checks/universal.sh"

fail=0
expect() {   # expect CHECK REGEX...: CHECK's result is PASS and its detail matches every REGEX
    local name=$1 line
    shift
    line=$(awk -F'\t' -v n="$name" '$1 == n' "$RESULTS" | tail -n 1)
    case $line in
    *$'\t'PASS$'\t'*) ;;
    *) echo "dryrun: FAIL: $name is not PASS: ${line:-no result}"; fail=1; return ;;
    esac
    for re in "$@"; do
        grep -qE -- "$re" <<<"$line" || { echo "dryrun: FAIL: $name: no '$re' in: $line"; fail=1; }
    done
}

TRACE_BENCH_ROUNDS=2 TRACE_BENCH_STEPS=5 TRACE_BENCH_NSYS=$S/nsys check_trace_bench
expect tracebench '2 rounds' '--trace [+-][0-9.]+% paired.*target (met|missed)' \
    'trace-gpu / nsys profile per round.*target (met|missed)' 'record B and [0-9]+ file B per call, writer' \
    'CUPTI activity alone recorded 1 kernels'
UNIV_BENCH_ROUNDS=2 UNIV_BENCH_BLOCKS=3 BENCH_LIBS_CUBLAS_FN=cublasGetVersion_v2 check_universal_bench
expect "universal bench" 'cublas: same process: .*target (met|missed); processes: .*target (met|missed)' \
    'nvml: same process: .*target (met|missed); processes: .*target (met|missed)'

if OUT=$WORK/out BENCH_WORK=$WORK/bench BENCH_BIN=$S/launch_bench BENCH_ROUNDS=2 \
        BENCH_TRACE_BASE="$BUILD_DIR/plugins/trace.so" BENCH_AB=4 bash "$ROOT/bench/gpu/run.sh" "$BUILD_DIR" >"$LOGS/bench.out" 2>&1; then
    result bench PASS "$(cat "$WORK/bench/verdict.txt")"
else
    result bench FAIL "bench/gpu/run.sh: $(tail -n 3 "$LOGS/bench.out" | tr '\n' ' ')"
fi
expect bench 'cuCtxGetCurrent trace \+[0-9.]+ vs cupti \+[0-9.]+ ns \(target (met|missed)\)' \
    'cuLaunchKernel trace [+-][0-9.]+ vs cupti [+-][0-9.]+ ns' '[0-9]+ record B/call, writer [0-9.]+ M calls/s'
grep -q '^| trace | 2 |' "$WORK/out/bench.md" || { echo "dryrun: FAIL: no trace row in bench.md"; fail=1; }
grep -q '^| trace-base | 2 |' "$WORK/out/bench.md" || { echo "dryrun: FAIL: no trace-base row in bench.md"; fail=1; }
grep -q '^cuCtxGetCurrent, in one process: trace (recording + timed hooks) +50.00 ns vs cupti +90.00 ns: 0.56 - target missed' \
    "$WORK/out/bench.md" || { echo "dryrun: FAIL: no in-process verdict in bench.md"; fail=1; }
grep -q '^| ab-trace: .* | 2 | +30.00 (+30.00..+30.00) | +60.00 (+60.00..+60.00) |' "$WORK/out/bench.md" ||
    { echo "dryrun: FAIL: no ab-trace row in bench.md"; fail=1; }
grep -q '^- cuCtxGetCurrent: trace +[0-9.]*, trace-base +[0-9.]* ns; trace - trace-base per round -30.00' "$WORK/out/bench.md" ||
    { echo "dryrun: FAIL: no trace vs trace-base line in bench.md"; fail=1; }

# the in-process configurations alone (BENCH_CONFIGS): they run, the others do not, the in-process verdict comes out
if OUT=$WORK/out-ab BENCH_WORK=$WORK/bench-ab BENCH_BIN=$S/launch_bench BENCH_ROUNDS=2 BENCH_AB=4 \
        BENCH_CONFIGS="ab-hooks ab-cupti ab-trace ab-vs" bash "$ROOT/bench/gpu/run.sh" "$BUILD_DIR" >"$LOGS/bench-ab.out" 2>&1 &&
        grep -q '^cuCtxGetCurrent, in one process: trace (recording + timed hooks) +50.00 ns vs cupti +90.00 ns' \
            "$WORK/out-ab/bench.md" &&
        grep -q '^cuCtxGetCurrent, paired in one process: trace / CUPTI median 0.400 over 2 processes (0.400..0.400) - target met; the floor of any recorder / CUPTI 0.300' \
            "$WORK/out-ab/bench.md" &&
        grep -q '^cuLaunchKernel, paired in one process: trace / CUPTI median 0.600 over 2 processes .* - target missed' \
            "$WORK/out-ab/bench.md" &&
        grep -q '^cuLaunchKernel, the median launch, paired in one process: trace / CUPTI median 0.429 over 2 processes .* - target met; the floor of any recorder / CUPTI 0.286' \
            "$WORK/out-ab/bench.md" &&
        grep -q '^| cuLaunchKernel (the median launch) | 2 | +60.00' "$WORK/out-ab/bench.md" &&
        ! grep -q '^label=native' "$WORK/bench-ab/bench-raw.txt" 2>/dev/null &&
        ! grep -q '^label=native' "$WORK/out-ab/bench-raw.txt" 2>/dev/null; then
    echo "dryrun: bench (BENCH_CONFIGS, in-process alone) PASS"
else
    echo "dryrun: FAIL: bench with BENCH_CONFIGS (see $LOGS/bench-ab.out)"; fail=1
fi
if env OUT=$WORK/out-bad BENCH_WORK=$WORK/bench-bad BENCH_BIN=$S/launch_bench BENCH_ROUNDS=1 BENCH_CONFIGS=nosuch \
        bash "$ROOT/bench/gpu/run.sh" "$BUILD_DIR" >"$LOGS/bench-bad.out" 2>&1 ||
        ! grep -q 'names no configuration' "$LOGS/bench-bad.out"; then
    echo "dryrun: FAIL: BENCH_CONFIGS=nosuch was not refused"; fail=1
fi

# bench/gpu/cupti_cost.sh: the five configurations run under the launcher (the stand-in python runs vecadd, the
# injection library is a file the fake driver never loads), the table has each one's step and call figures
if OUT=$WORK/out-cc CUPTI_COST_LIB="$BUILD_DIR/examples/vecadd" PY="$S/python" ROUNDS=2 STEPS=10 \
        CUSHIM_BUILD_DIR="$BUILD_DIR" bash "$ROOT/bench/gpu/cupti_cost.sh" "$BUILD_DIR" >"$LOGS/cupti_cost.out" 2>&1 &&
        [ "$(grep -cE '^\| (trace|gpu|gpu\+cb|trace-gpu|gpu\+api) \| 14[0-9]{5}(\.[0-9])? \| ' "$WORK/out-cc/cupti_cost.md")" = 5 ] &&
        grep -Eq '^\| trace \| [0-9.]+ \|( [0-9.-]+ \|)* [0-9]+\.[0-9] \|$' "$WORK/out-cc/cupti_cost.md" &&
        [ -f "$WORK/out-cc/cupti_cost.logs.tar.gz" ]; then
    echo "dryrun: cupti_cost PASS"
else
    echo "dryrun: FAIL: bench/gpu/cupti_cost.sh (see $LOGS/cupti_cost.out)"; fail=1
fi

if [ $fail -ne 0 ]; then
    for f in "$LOGS"/*; do echo "== $f"; tail -n 20 "$f"; done
    exit 1
fi
echo "dryrun: PASS (tracebench, universal bench, bench, cupti_cost)"
