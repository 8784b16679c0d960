#!/usr/bin/env bash
# tests/gpu/run.sh - the one-command GPU suite of cushim.
#
# USAGE: bash tests/gpu/run.sh [BUILD_DIR] [CHECK...]   (default build-gpu; 'BUILD_DIR=x' works too)
#   CHECK: any of a b c d e f g sdk hami bench (below), the names tests/gpu/checks/*.sh register, or all (the default; also CHECKS="a,b" in the
#   environment). env and build always run.
#   Checks that compare with native PyTorch output (f torch) run c's native run when c is not selected.
#   BUILD_DIR holds runtime/libcushim.so and dropin/libcuda.so.1 (built beforehand).
#   OUT=dir            logs and results (default ./gpu-out): summary.txt, summary.tsv,
#                      gpu-logs.tar.gz, and bench.md/bench-raw.txt when the benchmark ran
#   SKIP_BENCH=1       do not run bench/gpu/run.sh at the end
#   PYTHON=python3     interpreter with torch, cupy and jax
#   CUSHIM_REAL_LIBCUDA=path   the real driver (found from a native process otherwise)
#   CUDA_HOME, GPU_ARCH, CUPTI_INCLUDE, CUPTI_LIB: see tests/gpu/build.sh
#   CHECKS="a b ..."   which checks to run when none is named (space or comma separated); all of them
#                      take over 15 minutes (more with hami): name them over several runs, each with its GPU_SUITE_BUDGET
#
# Checks (each independent, each command under a timeout; docs/gpu.md says what each proves):
#   a  app_driver (static cudart): native, shim, shim+CUPTI counter (counts compared)
#   b  app_driver (shared cudart): the same, and the shim must see runtime API calls
#   c  PyTorch training loop: losses bitwise identical native / shim / shim+CUPTI; counts
#   d  CuPy and JAX: numerically checked native / shim / shim+CUPTI; counts
#   e  cuGetProcAddress_v2 over every base name x version x flags: real driver vs shim
#   f  drop-in libcuda.so.1 (no LD_PRELOAD) on app_driver and the PyTorch loop
#   g  examples/vecadd through the tools/cushim launcher (the README's main job), result checked
#   sdk  plugins under PyTorch: faultinject's out-of-memory reaches PyTorch as its own OOM error;
#        the SDK's C example plugin (built out of tree) in preload and drop-in mode
#   bench  bench/gpu/run.sh (launch rate, cuCtxGetCurrent; native, shim, shim+hooks, cupti, trace: the trace
#          plugin's added ns per call against CUPTI's, issue 11) if time allows
#   hami   the shim stacked with HAMi-core (built from .hami/, see tests/gpu/hami_stack.sh): its 4 GiB
#          quota holds and the shim sees every call, in both LD_PRELOAD orders
#   hamibuild  only build HAMi-core's libvgpu.so (for smlimit's and memlimit's side-by-side figures)
# The summary table is printed last, then 'N passed, N failed, N skipped'. Exit 0 when
# nothing failed and every check ran to the end; 1 when one failed; 2 when none failed but the time budget
# (GPU_SUITE_BUDGET) cut some short (they count as skipped).
set -u
unset LD_PRELOAD CUSHIM_COUNTS CUDA_INJECTION64_PATH CUPTI_COUNTER_OUT
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/gpu
BUILD_DIR=${1:-build-gpu}
BUILD_DIR=${BUILD_DIR#BUILD_DIR=}
shift $(($# > 0 ? 1 : 0))
[ $# -gt 0 ] && CHECKS="$*"   # checks named on the command line win over CHECKS=
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
OUT=${OUT:-$ROOT/gpu-out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
mkdir -p "$OUT"
rm -f "$OUT"/summary.txt "$OUT"/summary.tsv "$OUT"/gpu-logs.tar.gz "$OUT"/bench.md "$OUT"/bench-raw.txt
WORK=${GPU_WORK:-${TMPDIR:-/tmp}/cushim-gpu-suite}
rm -rf "$WORK"
mkdir -p "$WORK/bin" "$WORK/logs" "$WORK/data"
LOGS=$WORK/logs
DATA=$WORK/data
BIN=$WORK/bin
PY=${PYTHON:-python3}
SHIM=$BUILD_DIR/runtime/libcushim.so
DROPIN=$BUILD_DIR/dropin
GEN=${CUSHIM_GEN_DIR:-$ROOT/generated/cuda-13.0}
APIS=$GEN/apis.tsv
SUMMARY=$OUT/summary.tsv
CHECKS=" $(echo "${CHECKS:-all}" | tr ',' ' ') "
# want CHECK: was CHECK selected ('all' selects every check)
want() {
    case $CHECKS in *" $1 "*|*" all "*) return 0 ;; *) return 1 ;; esac
}
BUDGET=${GPU_SUITE_BUDGET:-480}   # seconds for everything; commands are cut to fit
DEADLINE=$(($(date +%s) + BUDGET))
: >"$SUMMARY"
trap 'result interrupted FAIL "suite interrupted after ${SECONDS}s"; finish; exit 1' TERM INT
export CUBLAS_WORKSPACE_CONFIG=:4096:8 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
export PYTHONDONTWRITEBYTECODE=1 TF_CPP_MIN_LOG_LEVEL=2

# result CHECK PASS|FAIL|SKIP DETAIL. A FAIL from a check that the suite's time budget cut short (one of its
# commands refused or stopped by the deadline: budget_out) is reported as SKIP - it did not run to the end, so
# no verdict either way - with the reason in front of what it found. Only that check's results: each check
# starts with the mark cleared (run_check). The suite then exits 2 unless something failed (finish).
result() {
    local st=$2 detail=$3
    if [ "$st" = FAIL ] && [ "$1" != interrupted ] && [ -e "$WORK/.cut" ]; then
        st=SKIP detail="not run to the end: GPU_SUITE_BUDGET=${BUDGET}s ran out (raise it or name fewer checks); as far as it ran: $detail"
    fi
    set -- "$1" "$st" "$detail"
    printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$SUMMARY"
    printf '[%5ds] %-24s %-4s %s\n' "$SECONDS" "$1" "$2" "$3"
}
# median: the median of the numbers on stdin, one a line (of an even count: the mean of the two middle ones);
# an empty line for none. For the checks in tests/gpu/checks/*.sh.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
                   else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# time_left: seconds until the suite's deadline
time_left() { echo $((DEADLINE - $(date +%s))); }
# budget_out: the budget cut the running check short (a command refused or stopped at the deadline; called by
# tmo, and by checks that stop themselves for lack of time). Files, as this often runs in a subshell ($(...)):
# .cut for the check (result), .out-of-time for the suite (finish)
budget_out() { : >"$WORK/.cut"; : >"$WORK/.out-of-time"; }
# finish: the summary table and logs; the exit status (defined here: the TERM/INT trap calls it)
finish() {
    trap - EXIT TERM INT
    cp "$SUMMARY" "$BIN"/build-*.log "$LOGS/" 2>/dev/null
    [ -d "$WORK/bench" ] && cp -r "$WORK/bench" "$LOGS/bench" 2>/dev/null
    rm -f "$LOGS/bench/launch_bench"
    tar -czf "$OUT/gpu-logs.tar.gz" -C "$WORK" logs data
    local pass fail skip
    pass=$(awk -F'\t' '$2 == "PASS"' "$SUMMARY" | wc -l)
    fail=$(awk -F'\t' '$2 == "FAIL"' "$SUMMARY" | wc -l)
    skip=$(awk -F'\t' '$2 == "SKIP"' "$SUMMARY" | wc -l)
    {
        echo
        echo "cushim GPU suite ($(date -u '+%Y-%m-%d %H:%M UTC'), ${SECONDS}s; logs in $OUT/gpu-logs.tar.gz)"
        echo
        echo "| check | result | detail |"
        echo "| --- | --- | --- |"
        awk -F'\t' '{ gsub(/\|/, "/", $3); printf "| %s | %s | %s |\n", $1, $2, $3 }' "$SUMMARY"
        echo
        echo "$pass passed, $fail failed, $skip skipped"
        [ -e "$WORK/.out-of-time" ] &&
            echo "the time budget (GPU_SUITE_BUDGET=${BUDGET}s) ran out: checks were cut short or not run ($(grep -c 'GPU_SUITE_BUDGET=.*ran out' "$SUMMARY") results read SKIP for it)"
    } >"$OUT/summary.txt"
    [ -f "$OUT/bench.md" ] && { echo; cat "$OUT/bench.md"; }
    cat "$OUT/summary.txt"
    [ "$fail" -eq 0 ] || return 1
    [ ! -e "$WORK/.out-of-time" ] || return 2   # nothing failed, but not everything ran
}
# run_check FUNCTION ARGS...: one check, in a subshell, its budget mark cleared first
run_check() {
    rm -f "$WORK/.cut"
    ( "$@" )
}
# tmo SECONDS CMD...: a command under a timeout (killed 5 s after TERM), never past the
# deadline; exits 124 at once when no time is left
tmo() {
    local s=$1 left
    shift
    left=$(($(time_left) - 5))
    if [ "$left" -lt 5 ]; then
        echo "run.sh: no time left for: $*" >&2
        budget_out
        return 124
    fi
    local cut=0 rc=0 t0
    [ "$s" -gt "$left" ] && s=$left cut=1
    t0=$(date +%s)
    timeout -k 5 "$s" "$@" || rc=$?
    # stopped by the deadline, not by its own timeout: the budget ran out (a 124 or 137 before the deadline -
    # an OOM kill, the command's own exit status - is the command's)
    if [ "$cut" = 1 ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && [ $(($(date +%s) - t0)) -ge "$s" ]; then
        budget_out
    fi
    return "$rc"
}
# shim_count FILE NAME: the shim's count for NAME summed over FILE and FILE.<pid>
shim_count() {
    cat "$1" "$1".[0-9]* 2>/dev/null | awk -F'\t' -v n="$2" '$1 == n { s += $2 } END { print s + 0 }'
}
# shim_lines FILE REGEX: how many distinct API names matching REGEX the shim counted
shim_lines() {
    cat "$1" "$1".[0-9]* 2>/dev/null | awk -F'\t' -v r="$2" '$1 ~ r && $2 > 0 && !($1 in n) { n[$1] = 1; c++ } END { print c + 0 }'
}
SHIM_ENV=(LD_PRELOAD="$SHIM")
CALIB=$DATA/cupti-self.tsv   # CUPTI's own calls, proven on app_static (deterministic)
CUPTI_ENV=()   # set below once the counter is built

# ---------------------------------------------------------------- environment and build
env_check() {
    {
        date -u
        nvidia-smi 2>&1 | head -n 20
        echo "BUILD_DIR=$BUILD_DIR"; ls -la "$BUILD_DIR/runtime" "$DROPIN" 2>&1
        echo "real libcuda: $REAL_LIBCUDA"
        "$PY" -c 'import sys; print(sys.version)' 2>&1
        # versions from package metadata: importing torch and jax here would cost 20 s
        "$PY" -c '
import importlib.metadata as md, re
for d in sorted(md.distributions(), key=lambda d: d.metadata["Name"].lower()):
    n = d.metadata["Name"]
    if re.search(r"torch|cupy|jax|nvidia|numpy", n, re.I):
        print(n, d.version)' 2>&1
    } >"$LOGS/env.log" 2>&1
    local missing=""
    [ -f "$SHIM" ] || missing="$missing $SHIM"
    [ -f "$DROPIN/libcuda.so.1" ] || missing="$missing $DROPIN/libcuda.so.1"
    [ -n "$REAL_LIBCUDA" ] || missing="$missing real-libcuda"
    local gpu
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
    [ -n "$gpu" ] || missing="$missing GPU(nvidia-smi)"
    # membarrier(2) (x86_64 syscall 324): without it every hooked call fences (runtime/epoch.c ep_fence), which
    # the hook benchmarks then include; MEMBARRIER_CMD_QUERY answers the supported commands' mask
    local mb
    mb=$("$PY" -c 'import ctypes; r = ctypes.CDLL(None, use_errno=True).syscall(324, 0, 0, 0); print("membarrier private expedited" if r > 0 and r & 8 else "NO membarrier private expedited (hooked calls fence)")' 2>/dev/null)
    # what one TSC read costs on the machine lent (it differs between machines of one kind: 14-23 ns seen; a
    # recorded call reads it twice): bench/cpu/hostprobe.c, when the bundle built it
    local tsc="" probe=$BUILD_DIR/bench/cpu/cushim_hostprobe
    [ -x "$probe" ] && tsc=$(timeout 60 "$probe" 200000 2>/dev/null | awk '$1 == "rdtsc" { print "; rdtsc " $2 " ns" }')
    if [ -n "$missing" ]; then
        result env FAIL "missing:$missing; GPU: ${gpu:-none}"
    else
        result env PASS "GPU: ${gpu:-?}; real driver $REAL_LIBCUDA; ${mb:-membarrier unknown}$tsc"
    fi
}

find_real_libcuda() {
    if [ -n "${CUSHIM_REAL_LIBCUDA:-}" ]; then echo "$CUSHIM_REAL_LIBCUDA"; return; fi
    local p
    # what the dynamic loader really picks for libcuda.so.1 in a native process
    p=$("$PY" -c '
import ctypes
ctypes.CDLL("libcuda.so.1")
for l in open("/proc/self/maps"):
    f = l.split()[-1]
    if "/libcuda.so" in f:
        print(f); break' 2>/dev/null)
    if [ -z "$p" ]; then
        p=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ { print $NF; exit }')
    fi
    for c in /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1; do
        [ -n "$p" ] && break
        [ -e "$c" ] && p=$c
    done
    echo "$p"
}

REAL_LIBCUDA=$(find_real_libcuda)
if [ -z "${GPU_ARCH:-}" ]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
    export GPU_ARCH=sm_${cc:-90}
fi
env_check
if bash "$HERE/build.sh" "$BIN" >"$LOGS/build.log" 2>&1; then
    result build PASS "all targets built ($GPU_ARCH)"
else
    result build FAIL "$(grep -c '^FAILED' "$LOGS/build.log") target(s) failed: $(grep '^FAILED' "$LOGS/build.log" | cut -c1-120 | tr '\n' ';')"
fi
[ -f "$BIN/libcupti_counter.so" ] && CUPTI_ENV=(CUDA_INJECTION64_PATH="$BIN/libcupti_counter.so")

# run_trio NAME TIMEOUT CMD...: runs CMD natively, under the shim, and under shim + CUPTI
# counter; stdout to $DATA/NAME.{native,shim,both}.out, stderr to logs; returns nothing,
# sets RC_native RC_shim RC_both.
run_trio() {
    local name=$1 t=$2
    shift 2
    rm -f "$DATA/$name".*
    tmo "$t" env "$@" >"$DATA/$name.native.out" 2>"$LOGS/$name.native.err"
    RC_native=$?
    tmo "$t" env "${SHIM_ENV[@]}" CUSHIM_COUNTS="$DATA/$name.shim.counts" "$@" \
        >"$DATA/$name.shim.out" 2>"$LOGS/$name.shim.err"
    RC_shim=$?
    if [ ${#CUPTI_ENV[@]} -gt 0 ]; then
        tmo "$t" env "${SHIM_ENV[@]}" "${CUPTI_ENV[@]}" CUSHIM_COUNTS="$DATA/$name.both.counts" \
            CUPTI_COUNTER_OUT="$DATA/$name.cupti" "$@" >"$DATA/$name.both.out" 2>"$LOGS/$name.both.err"
        RC_both=$?
    else
        RC_both=127
    fi
}

# counts_check CHECK NAME [compare_counts options]: CUPTI vs shim counts of run_trio NAME
counts_check() {
    local check=$1 name=$2
    shift 2
    if [ ${#CUPTI_ENV[@]} -eq 0 ]; then
        result "$check" FAIL "CUPTI counter not built (see build.log)"
        return
    fi
    if [ "$RC_both" -ne 0 ]; then
        result "$check" FAIL "shim+CUPTI run exited $RC_both (logs/$name.both.err)"
        return
    fi
    "$PY" "$HERE/compare_counts.py" --shim "$DATA/$name.both.counts" --cupti "$DATA/$name.cupti" \
        --shim-alone "$DATA/$name.shim.counts" --apis "$APIS" --label "$name" --calib "$CALIB" "$@" \
        >"$LOGS/$name.counts.txt" 2>&1
    local rc=$? line
    line=$(grep '^RESULT' "$LOGS/$name.counts.txt" | tail -n 1)
    line=${line#RESULT PASS }
    line=${line#RESULT FAIL }
    if [ $rc -eq 0 ]; then
        result "$check" PASS "$line"
    else
        result "$check" FAIL "${line:-compare_counts.py failed, see logs/$name.counts.txt} $(grep -m 3 '^UNEXPLAINED' "$LOGS/$name.counts.txt" | awk '{print $2}' | tr '\n' ' ')"
    fi
}

# ---------------------------------------------------------------- (a), (b) app_driver
check_app() {
    local tag=$1 exe=$BIN/$2
    if [ ! -x "$exe" ]; then
        result "$tag native" FAIL "not built"; return
    fi
    run_trio "$2" 90 "$exe" "$BIN/kern.cubin" "$BIN/kern.ptx"
    local nat shim
    nat=$(grep -h 'app_driver:' "$DATA/$2.native.out" | tail -n 1)
    if [ "$RC_native" -eq 0 ]; then result "$tag native" PASS "$nat"
    else result "$tag native" FAIL "rc $RC_native: $nat $(head -c 200 "$LOGS/$2.native.err" | tr '\n' ' ')"; fi
    shim=$(grep -h 'app_driver:' "$DATA/$2.shim.out" | tail -n 1)
    local launches rt_apis drv_apis
    launches=$(shim_count "$DATA/$2.shim.counts" cuLaunchKernel)
    drv_apis=$(shim_lines "$DATA/$2.shim.counts" '^cu[A-Z]')
    rt_apis=$(shim_lines "$DATA/$2.shim.counts" '^cuda[A-Z]')
    local detail="rc $RC_shim; shim counted $drv_apis driver APIs, $rt_apis runtime APIs, cuLaunchKernel=$launches"
    if [ "$RC_shim" -ne 0 ]; then
        result "$tag shim" FAIL "$detail; $shim $(head -c 200 "$LOGS/$2.shim.err" | tr '\n' ' ')"
    elif [ "$launches" -lt 4 ]; then
        result "$tag shim" FAIL "$detail (expected >= 4 cuLaunchKernel: shim did not see the driver calls)"
    elif [ "$2" = app_shared ] && [ "$rt_apis" -lt 5 ]; then
        result "$tag shim" FAIL "$detail (shared cudart: expected the runtime API calls to be counted)"
    else
        result "$tag shim" PASS "$detail"
    fi
    local calib=()
    [ "$2" = app_static ] && calib=(--write-calib "$CALIB")
    counts_check "$tag counts" "$2" --require cuLaunchKernel --require cuModuleLoadData \
        --require cuMemCreate --require cuMemMap --require cuGraphLaunch "${calib[@]}"
}

# ---------------------------------------------------------------- (c) PyTorch
check_torch() {
    run_trio torch 150 "$PY" "$HERE/torch_train.py" 40
    if [ "$RC_native" -ne 0 ]; then
        result "c torch native" FAIL "rc $RC_native (not the shim): $(tail -n 2 "$LOGS/torch.native.err" | tr '\n' ' ' | cut -c1-200)"
    else
        result "c torch native" PASS "$(grep -c '^loss' "$DATA/torch.native.out") losses, last $(grep '^loss' "$DATA/torch.native.out" | tail -n 1 | cut -d' ' -f3)"
    fi
    local v
    for v in shim both; do
        local tag="c torch $v"
        [ $v = both ] && tag="c torch shim+cupti"
        if [ "$(eval echo \$RC_$v)" -ne 0 ]; then
            result "$tag" FAIL "rc $(eval echo \$RC_$v): $(tail -n 2 "$LOGS/torch.$v.err" | tr '\n' ' ' | cut -c1-200)"
        elif [ "$RC_native" -ne 0 ]; then
            result "$tag" FAIL "native run failed: nothing to compare"
        elif cmp -s "$DATA/torch.native.out" "$DATA/torch.$v.out"; then
            result "$tag" PASS "$(grep -c '^loss' "$DATA/torch.$v.out") losses + params bitwise identical to native"
        else
            result "$tag" FAIL "outputs differ: $(diff "$DATA/torch.native.out" "$DATA/torch.$v.out" | head -n 3 | tr '\n' ' ')"
        fi
    done
    counts_check "c torch counts" torch --require-prefix cuLaunchKernel
}

# ---------------------------------------------------------------- (d) CuPy, JAX
check_py() {   # check_py NAME SCRIPT TIMEOUT
    local name=$1 script=$2 t=$3
    run_trio "$name" "$t" "$PY" "$HERE/$script"
    local v tag
    for v in native shim both; do
        tag="d $name $v"
        [ $v = both ] && tag="d $name shim+cupti"
        local rc out
        rc=$(eval echo \$RC_$v)
        out=$(grep -h "${name}_check:" "$DATA/$name.$v.out" | tail -n 1)
        if [ "$rc" -eq 0 ]; then
            local same=""
            [ $v != native ] && { cmp -s "$DATA/$name.native.out" "$DATA/$name.$v.out" && same="; output identical to native" || same="; output differs from native (numerically OK)"; }
            result "$tag" PASS "$out$same"
        else
            result "$tag" FAIL "rc $rc: ${out:-$(tail -n 2 "$LOGS/$name.$v.err" | tr '\n' ' ' | cut -c1-200)}"
        fi
    done
    counts_check "d $name counts" "$name" --require-prefix cuLaunchKernel
}

# ---------------------------------------------------------------- (e) cuGetProcAddress
check_procaddr() {
    if [ ! -x "$BIN/procaddr_check" ]; then result "e procaddr" FAIL "not built"; return; fi
    local names=$DATA/procaddr-names.txt src="" exports=$DATA/libcuda-exports.txt
    # the real driver's exports (the recorded list of driver 580 if nm cannot read it)
    if [ -z "$REAL_LIBCUDA" ] || ! nm -D --defined-only "$REAL_LIBCUDA" 2>/dev/null |
            awk '$2 ~ /^[TW]$/ { print $3 }' | sed -E 's/@.*$//' | grep -E '^cu[A-Z]' >"$exports" ||
            [ ! -s "$exports" ]; then
        cp "$HERE/fixtures/libcuda-580-exports.txt" "$exports" 2>/dev/null
        src="exports from fixtures/ (nm failed);"
    fi
    {
        if [ -f "$GEN/procaddr.tsv" ]; then
            awk -F'\t' '!/^#/ && $1 != "base_name" && NF >= 4 { print $1 }' "$GEN/procaddr.tsv"
        else
            src="$src no procaddr.tsv!;"
        fi
        cat "$exports"                                              # full names: must be NOT_FOUND
        sed -E 's/_(ptds|ptsz)$//; s/_v[0-9]+$//' "$exports"        # base names
        printf '%s\n' cuNoSuchFunction cudaMalloc cuMemAlloc_v9 cuGetProcAddress
    } | sort -u >"$names"
    local n
    n=$(wc -l <"$names")
    tmo 150 "$BIN/procaddr_check" "$names" "$DATA/procaddr-native.tsv" >"$LOGS/procaddr.native.log" 2>&1
    local rn=$?
    tmo 150 env "${SHIM_ENV[@]}" "$BIN/procaddr_check" "$names" "$DATA/procaddr-shim.tsv" \
        >"$LOGS/procaddr.shim.log" 2>&1
    local rs=$?
    if [ $rn -ne 0 ] || [ $rs -ne 0 ]; then
        result "e procaddr" FAIL "$n names; native rc $rn, shim rc $rs (logs/procaddr.*.log)"
        return
    fi
    "$PY" "$HERE/compare_procaddr.py" "$DATA/procaddr-native.tsv" "$DATA/procaddr-shim.tsv" --apis "$APIS" \
        >"$LOGS/procaddr.compare.txt" 2>&1
    local rc=$? line
    line=$(grep '^RESULT' "$LOGS/procaddr.compare.txt" | tail -n 1)
    line=${line#RESULT PASS }
    line=${line#RESULT FAIL }
    if [ $rc -eq 0 ]; then result "e procaddr" PASS "$n names ($src procaddr.tsv bases, exports, their bases); $line"
    else result "e procaddr" FAIL "$n names; ${line:-compare failed} (logs/procaddr.compare.txt)"; fi
}

# ---------------------------------------------------------------- (f) drop-in libcuda.so.1
check_dropin() {
    local what=$1
    local env_dropin=(LD_LIBRARY_PATH="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CUSHIM_REAL_LIBCUDA="$REAL_LIBCUDA")
    if [ ! -f "$DROPIN/libcuda.so.1" ]; then result "f dropin $what" FAIL "$DROPIN/libcuda.so.1 missing"; return; fi
    if [ "$what" = app ]; then
        local c=$DATA/dropin-app.counts
        tmo 90 env "${env_dropin[@]}" CUSHIM_COUNTS="$c" "$BIN/app_static" "$BIN/kern.cubin" "$BIN/kern.ptx" \
            >"$DATA/dropin-app.out" 2>"$LOGS/dropin-app.err"
        local rc=$? launches
        launches=$(shim_count "$c" cuLaunchKernel)
        local detail
        detail="rc $rc; $(grep -h 'app_driver:' "$DATA/dropin-app.out" | tail -n 1 | cut -c1-80); cuLaunchKernel=$launches"
        if [ $rc -eq 0 ] && [ "$launches" -ge 4 ]; then result "f dropin app" PASS "$detail"
        else result "f dropin app" FAIL "$detail $(head -c 200 "$LOGS/dropin-app.err" | tr '\n' ' ')"; fi
    else
        local c=$DATA/dropin-torch.counts
        tmo 150 env "${env_dropin[@]}" CUSHIM_COUNTS="$c" "$PY" "$HERE/torch_train.py" 40 \
            >"$DATA/dropin-torch.out" 2>"$LOGS/dropin-torch.err"
        local rc=$? apis
        apis=$(shim_lines "$c" '^cu[A-Z]')
        if [ $rc -ne 0 ]; then
            result "f dropin torch" FAIL "rc $rc: $(tail -n 2 "$LOGS/dropin-torch.err" | tr '\n' ' ' | cut -c1-200)"
        elif [ "$apis" -lt 10 ]; then
            result "f dropin torch" FAIL "only $apis driver APIs counted: the drop-in was not used"
        elif cmp -s "$DATA/torch.native.out" "$DATA/dropin-torch.out"; then
            result "f dropin torch" PASS "losses bitwise identical to native; $apis driver APIs counted"
        else
            result "f dropin torch" FAIL "losses differ from native (or native failed): $(diff "$DATA/torch.native.out" "$DATA/dropin-torch.out" | head -n 3 | tr '\n' ' ')"
        fi
    fi
}

# g: the README's main job on a real GPU: examples/vecadd through the cushim launcher.
check_vecadd() {
    local v=$BUILD_DIR/examples/vecadd c=$DATA/vecadd.counts
    if [ ! -x "$v" ]; then result "g vecadd launcher" FAIL "$v missing"; return; fi
    tmo 60 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run --counts="$c" -- "$v" \
        >"$DATA/vecadd.out" 2>"$LOGS/vecadd.err"
    local rc=$? launches
    launches=$(shim_count "$c" cuLaunchKernel)
    local detail="rc $rc; $(head -n 1 "$DATA/vecadd.out" | cut -c1-100); cuLaunchKernel=$launches"
    if [ $rc -eq 0 ] && grep -q 'result OK' "$DATA/vecadd.out" && [ "$launches" = 1 ]; then
        result "g vecadd launcher" PASS "$detail"
    else
        result "g vecadd launcher" FAIL "$detail $(head -c 200 "$LOGS/vecadd.err" | tr '\n' ' ')"
    fi
}


# ---------------------------------------------------------------- (sdk) plugins under PyTorch
# sdk oom: faultinject fails every driver allocation after the warm-up's (counted in a warm-up
# run under the shim): PyTorch must raise its own torch.OutOfMemoryError and keep working.
check_sdk_oom() {
    local c=$DATA/oom-warmup.counts rc n mode
    tmo 120 env "${SHIM_ENV[@]}" CUSHIM_COUNTS="$c" "$PY" "$HERE/torch_oom.py" warmup \
        >"$DATA/oom-warmup.out" 2>"$LOGS/oom-warmup.err"
    rc=$?
    n=$(cat "$c" "$c".[0-9]* 2>/dev/null | awk -F'\t' '$1 ~ /^cuMemAlloc/ { s += $2 } END { print s + 0 }')
    if [ $rc -ne 0 ] || [ "$n" -lt 1 ]; then
        result "sdk oom warmup" FAIL "rc $rc; $n driver allocations counted $(tail -n 2 "$LOGS/oom-warmup.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    for mode in preload dropin; do
        local extra=() out=$DATA/oom-$mode.out err=$LOGS/oom-$mode.err
        [ $mode = dropin ] && extra=(--dropin --real-libcuda="$REAL_LIBCUDA")
        tmo 120 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run "${extra[@]}" \
            --fault="cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:after=$n" -- "$PY" "$HERE/torch_oom.py" oom \
            >"$out" 2>"$err"
        rc=$?
        local line summary
        line=$(grep -h '^oom_check:' "$out" | tail -n 1)
        summary=$(grep -h 'faultinject' "$err" | tail -n 1 | cut -c1-160)
        if [ $rc -eq 0 ] && [[ "$line" == "oom_check: PASS"* ]]; then
            result "sdk oom $mode" PASS "after=$n: ${line#oom_check: PASS }; $summary"
        else
            result "sdk oom $mode" FAIL "rc $rc; ${line:-no oom_check line}; $(tail -n 2 "$err" | tr '\n' ' ' | cut -c1-200)"
        fi
    done
}

# sdk example: the SDK's C example plugin (sdk/examples/c-plugin, built out of tree against the
# installed SDK by tools/build-gpu-bundle.sh) counts PyTorch's driver calls in preload and drop-in
# mode; the training loop's output stays bitwise identical to native.
check_sdk_example() {
    local ex=$BUILD_DIR/sdk-examples/c-plugin/callcount.so mode
    if [ ! -f "$ex" ]; then result "sdk example" FAIL "$ex missing (tools/build-gpu-bundle.sh builds it)"; return; fi
    [ -s "$DATA/torch.native.out" ] || tmo 150 "$PY" "$HERE/torch_train.py" 40 >"$DATA/torch.native.out" 2>"$LOGS/torch.native.err"
    for mode in preload dropin; do
        local extra=() rep=$DATA/callcount-$mode.txt out=$DATA/callcount-$mode.out err=$LOGS/callcount-$mode.err rc
        rm -f "$rep"
        [ $mode = dropin ] && extra=(--dropin --real-libcuda="$REAL_LIBCUDA")
        tmo 150 env CUSHIM_LIB="$SHIM" bash "$ROOT/tools/cushim" run "${extra[@]}" \
            --plugin="$ex:select=lib:driver,output=$rep" -- "$PY" "$HERE/torch_train.py" 40 >"$out" 2>"$err"
        rc=$?
        local launches total
        launches=$(awk '$1 == "callcount:" && $2 ~ /^cuLaunchKernel/ { s += $3 } END { print s + 0 }' "$rep" 2>/dev/null)
        total=$(grep -h 'calls of' "$rep" 2>/dev/null | head -n 1 | cut -c1-80)
        if [ $rc -ne 0 ]; then
            result "sdk example $mode" FAIL "rc $rc: $(tail -n 2 "$err" | tr '\n' ' ' | cut -c1-200)"
        elif ! cmp -s "$DATA/torch.native.out" "$out"; then
            result "sdk example $mode" FAIL "losses differ from native: $(diff "$DATA/torch.native.out" "$out" | head -n 3 | tr '\n' ' ')"
        elif [ "$launches" -lt 40 ]; then
            result "sdk example $mode" FAIL "report: ${total:-none}; cuLaunchKernel* $launches (< 40)"
        else
            result "sdk example $mode" PASS "losses identical to native; ${total#callcount: }; cuLaunchKernel* $launches"
        fi
    done
}

# hami: tests/gpu/hami_stack.sh's PASS/FAIL/SKIP lines become results 'hami <check>'
check_hami() {
    local cupti="" only=${1:-0}
    [ ${#CUPTI_ENV[@]} -gt 0 ] && cupti=$BIN/libcupti_counter.so
    HAMI_BUILD_ONLY=$only CUPTI_COUNTER=$cupti CALIB=$CALIB PYTHON=$PY HAMI_WORK="$WORK/hami" tmo 600 bash "$HERE/hami_stack.sh" "$BUILD_DIR" \
        >"$LOGS/hami.txt" 2>"$LOGS/hami.err"
    local rc=$? st name detail
    while IFS=$'\t' read -r st name detail; do
        case $st in PASS|FAIL|SKIP) result "hami $name" "$st" "$detail" ;; esac
    done <"$LOGS/hami.txt"
    grep -qE '^(PASS|FAIL|SKIP)' "$LOGS/hami.txt" || result "hami" FAIL "hami_stack.sh rc $rc, no result: $(tail -n 2 "$LOGS/hami.err" | tr '\n' ' ' | cut -c1-200)"
    [ $rc -eq 124 ] && result "hami" FAIL "hami_stack.sh timed out"
    cp -r "$WORK/hami" "$LOGS/hami" 2>/dev/null
    rm -f "$LOGS"/hami/libvgpu.so "$LOGS"/hami/*.cache
}

# ---------------------------------------------------------------- checks of the plugins
# Each tests/gpu/checks/NAME.sh defines its check functions and registers them with
# gpu_check NAME FUNCTION (NAME is what CHECKS= and the command line select; one file per feature,
# so features add checks without editing this file). They run after the built-in checks, in file order.
GPU_EXTRA=()
gpu_check() { GPU_EXTRA+=("$1:$2"); }
for f in "$HERE"/checks/*.sh; do
    [ -f "$f" ] && . "$f"
done

# ---------------------------------------------------------------- run them
want g && run_check check_vecadd
# b's calibration of CUPTI's own calls comes from a's static run
{ want a || want b || want c || want d; } && run_check check_app "a static" app_static
want b && run_check check_app "b shared" app_shared
want e && run_check check_procaddr
want f && run_check check_dropin app
if want c; then
    run_check check_torch
elif want f; then   # f torch compares with c's native output
    tmo 150 "$PY" "$HERE/torch_train.py" 40 >"$DATA/torch.native.out" 2>"$LOGS/torch.native.err"
fi
want f && run_check check_dropin torch
want d && run_check check_py cupy cupy_check.py 120
want d && run_check check_py jax jax_check.py 150
want sdk && run_check check_sdk_oom
want sdk && run_check check_sdk_example
if want hami; then
    run_check check_hami
elif want hamibuild; then
    run_check check_hami 1
fi
for c in "${GPU_EXTRA[@]}"; do
    want "${c%%:*}" && run_check "${c#*:}"
done

# bench: bench/gpu/run.sh with the rounds that fit in the time left
check_bench() {
    local rounds fit
    if [ "${SKIP_BENCH:-0}" = 1 ]; then
        result bench SKIP "SKIP_BENCH=1"
        return
    fi
    if [ "$(time_left)" -lt 60 ]; then
        budget_out
        result bench SKIP "not run: GPU_SUITE_BUDGET=${BUDGET}s ran out (${SECONDS}s used)"
        return
    fi
    # about 10 s per round (5 processes: native shim shim+hooks cupti trace); keep 15 s for the summary;
    # bench/gpu/run.sh also stops starting rounds after BENCH_MAX_S (240) s
    rounds=${BENCH_ROUNDS:-15}
    fit=$((($(time_left) - 15) / 10))
    if [ -z "${BENCH_ROUNDS:-}" ] && [ "$fit" -lt "$rounds" ]; then
        rounds=$fit
        [ "$rounds" -lt 3 ] && rounds=3
    fi
    if OUT="$OUT" BENCH_ROUNDS=$rounds BENCH_WORK="$WORK/bench" tmo 600 \
            bash "$ROOT/bench/gpu/run.sh" "$BUILD_DIR" >"$LOGS/bench.log" 2>&1; then
        result bench PASS "$(grep -o '^GPU launch benchmark: [0-9]* rounds' "$OUT/bench.md" | cut -d' ' -f4) of $rounds rounds x $(grep -c '^| [a-z+-]* | [0-9]' "$OUT/bench.md") configs, table in bench.md; $(cat "$WORK/bench/verdict.txt" 2>/dev/null)"
    else
        result bench FAIL "see logs/bench.log $(grep -m 2 'failed' "$LOGS/bench.log" | tr '\n' ' ' | cut -c1-200)"
    fi
}
want bench && run_check check_bench

# ---------------------------------------------------------------- logs and summary

finish
