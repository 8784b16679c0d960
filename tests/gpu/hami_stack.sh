#!/usr/bin/env bash
# tests/gpu/hami_stack.sh - cushim stacked with HAMi-core (GPU memory quota, libvgpu.so) on a GPU.
#
# USAGE: bash tests/gpu/hami_stack.sh [BUILD_DIR]      (run.sh runs it as check 'hami')
#   BUILD_DIR        holds runtime/libcushim.so (default build-gpu)
#   HAMI_SRC=dir     HAMi-core's sources (default <repo>/.hami), filled beforehand with
#                    git -C <HAMi-core clone> archive HEAD | tar -x -C .hami   (the GPU machine has no
#                    network; the folder is git-ignored, so carry it: run ... carry=[".hami", ...])
#   HAMI_WORK=dir    build and run outputs (default ${TMPDIR:-/tmp}/cushim-hami)
#   CUPTI_COUNTER=path  libcupti_counter.so (run.sh passes the one it built; else built here by build.sh)
#   HAMI_BUILD_ONLY=1  step 1 only (run.sh's check 'hamibuild': HAMi-core for smlimit's and memlimit's
#                    side-by-side figures without the stacking runs)
#   PYTHON=python3, CUDA_HOME=/usr/local/cuda, HAMI_LIMIT=4g, HAMI_STEPS=20, HAMI_TIMEOUT=150 (s per run)
#   CALIB=file       CUPTI self-call calibration (run.sh's, from check a), optional
#   HAMI_NVML_INCLUDE=dir, HAMI_NVML_LIB=file   nvml.h / libnvidia-ml when not found (see 1.); nvml.h may
#                    also be dropped into .hami/include/ (pip wheel nvidia-nvml-dev has it:
#                    nvidia/cu13/include/nvml.h)
#
# What it does:
#   1. builds HAMi-core's libvgpu.so from HAMI_SRC the way its build.sh configures it (Debug,
#      DLSYM_HOOK_ENABLE, MULTIPROCESS_LIMIT_ENABLE, HOOK_MEMINFO_ENABLE, HOOK_NVML_ENABLE), with gcc
#      directly (its CMake files need CMake < 4 and FindCUDA for the tests we do not build). Needs
#      cuda.h and nvml.h (CUDA toolkit, nvml.h from cuda-nvml-dev), libcuda (the toolkit's stub) and
#      libnvidia-ml (stub or the driver's) to link: each missing one is named in a FAIL line;
#   2. installs it where HAMi expects it, /usr/local/vgpu/libvgpu.so (when writable), and always
#      sets CUDA_REDIRECT to the file preloaded (HAMi dlopens that for its dlsym);
#   3. runs tests/gpu/hami_oom.py (torch_train.py's loop, then a 5 GiB allocation) natively, with
#      HAMi alone, HAMi before the shim and the shim before HAMi (LD_PRELOAD order), each with
#      CUDA_DEVICE_MEMORY_LIMIT=$HAMI_LIMIT (HAMi's variable: a number with g/m/k) and a fresh
#      shared region (CUDA_DEVICE_MEMORY_SHARED_CACHE); each stacked order twice: with CUSHIM_COUNTS
#      alone, and with CUSHIM_COUNTS plus the CUPTI callback counter;
#   4. checks: native allocates 5 GiB; HAMi alone refuses it (so the quota works here at all); in
#      both orders the losses are bitwise those of the native run, the 5 GiB allocation raises
#      PyTorch's OOM (HAMi's effect held), the shim counted the driver calls (thousands, kernel
#      launches among them: its effect held), and its per-API counts agree with CUPTI's
#      (compare_counts.py): HAMi first, exactly (the shim is the layer next to the driver: every
#      call that reached the driver passed it once); shim first, exactly for every API HAMi does
#      not hook - the APIs HAMi hooks may differ only by HAMi's own calls (its bookkeeping calls
#      go from HAMi to the driver) and the calls it refused.
# Prints 'PASS|FAIL|SKIP<TAB>check<TAB>detail' lines, logs under HAMI_WORK; exit 0 when nothing failed.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/gpu
BUILD_DIR=${1:-build-gpu}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
SHIM=$BUILD_DIR/runtime/libcushim.so
SRC=${HAMI_SRC:-$ROOT/.hami}
HW=${HAMI_WORK:-${TMPDIR:-/tmp}/cushim-hami}
PY=${PYTHON:-python3}
CUDA=${CUDA_HOME:-/usr/local/cuda}
LIMIT=${HAMI_LIMIT:-4g}
STEPS=${HAMI_STEPS:-20}
T=${HAMI_TIMEOUT:-150}
APIS=${CUSHIM_GEN_DIR:-$ROOT/generated/cuda-13.0}/apis.tsv
failed=0
rm -rf "$HW"
mkdir -p "$HW"

say() {   # say PASS|FAIL|SKIP CHECK DETAIL
    printf '%s\t%s\t%s\n' "$1" "$2" "$3"
    [ "$1" = FAIL ] && failed=$((failed + 1))
    return 0
}
first() { for f in "$@"; do [ -e "$f" ] && { echo "$f"; return 0; }; done; return 1; }

# ---------------------------------------------------------------- 1. build HAMi-core
build_hami() {
    [ -f "$SRC/src/libvgpu.c" ] || {
        say FAIL build "no HAMi-core sources in $SRC (fill it: git -C <clone> archive HEAD | tar -x -C $SRC; carry it)"
        return 1
    }
    [ -f "$SHIM" ] || { say FAIL build "no shim at $SHIM"; return 1; }
    local cc=${CC:-gcc} missing="" nvml_inc="" cuda_inc="" lcuda="" lnvml=""
    command -v "$cc" >/dev/null 2>&1 || missing="$missing $cc"
    cuda_inc=$(dirname "$(first "$CUDA/include/cuda.h" "$CUDA/targets/x86_64-linux/include/cuda.h")" 2>/dev/null)
    [ -n "$cuda_inc" ] && [ -f "$cuda_inc/cuda.h" ] || missing="$missing cuda.h(under $CUDA)"
    local nvml_h
    nvml_h=$(first "${HAMI_NVML_INCLUDE:-/nonexistent}/nvml.h" "$CUDA/include/nvml.h" \
        "$CUDA/targets/x86_64-linux/include/nvml.h" "$SRC/include/nvml.h" /usr/include/nvml.h /usr/local/include/nvml.h)
    if [ -z "$nvml_h" ]; then   # e.g. a pip wheel's nvidia/*/include (nvidia-nvml-dev-*)
        nvml_h=$("$PY" - <<'EOF' 2>/dev/null
import glob, os, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for f in glob.glob(os.path.join(d, "nvidia", "*", "include", "nvml.h")):
        print(f); raise SystemExit
EOF
)
    fi
    [ -n "$nvml_h" ] && nvml_inc=$(dirname "$nvml_h") || missing="$missing nvml.h(cuda-nvml-dev)"
    lcuda=$(first "$CUDA/lib64/stubs/libcuda.so" "$CUDA/targets/x86_64-linux/lib/stubs/libcuda.so" \
        /usr/lib/x86_64-linux-gnu/libcuda.so /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1) ||
        missing="$missing libcuda(stub)"
    lnvml=$(first "${HAMI_NVML_LIB:-/nonexistent}" "$CUDA/lib64/stubs/libnvidia-ml.so" "$CUDA/targets/x86_64-linux/lib/stubs/libnvidia-ml.so" \
        /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 /usr/local/nvidia/lib64/libnvidia-ml.so.1 \
        "$(ldconfig -p 2>/dev/null | awk '/libnvidia-ml\.so\.1 .*x86-64/ { print $NF; exit }')") ||
        missing="$missing libnvidia-ml"
    if [ -n "$missing" ]; then
        say FAIL build "cannot build HAMi-core, missing:$missing"
        return 1
    fi
    # HAMi-core's build.sh: CMAKE_BUILD_TYPE=Debug (-shared -fPIC -g -D_GNU_SOURCE -Wall, symbols
    # stay visible) and these options, which CMake writes into config/static_config.h.
    mkdir -p "$HW/config"
    cat >"$HW/config/static_config.h" <<'EOF'
#define MULTIPROCESS_LIMIT_ENABLE
#define DLSYM_HOOK_ENABLE
#define HOOK_MEMINFO_ENABLE
#define HOOK_NVML_ENABLE
extern size_t GIT_HASH_cushim_test;
extern size_t GIT_BRANCH_cushim_test;
EOF
    local srcs=() s
    for s in libvgpu.c utils.c log_utils.c nvml/nvml_entry.c nvml/hook.c cuda/context.c cuda/device.c cuda/hook.c \
             cuda/event.c cuda/memory.c cuda/stream.c cuda/graph.c allocator/allocator.c \
             multiprocess/multiprocess_memory_limit.c multiprocess/multiprocess_utilization_watcher.c; do
        [ -f "$SRC/src/$s" ] || { say FAIL build "HAMi-core source src/$s missing (its layout changed?)"; return 1; }
        srcs+=("$SRC/src/$s")
    done
    if ! "$cc" -shared -fPIC -g -D_GNU_SOURCE -Wall -I"$cuda_inc" -I"$nvml_inc" -I"$SRC/src" -I"$HW/config" \
            -o "$HW/libvgpu.so" "${srcs[@]}" "$lcuda" "$lnvml" -lpthread -ldl -lrt >"$HW/build.log" 2>&1; then
        say FAIL build "gcc failed: $(grep -m 3 -E 'error' "$HW/build.log" | tr '\n' ' ' | cut -c1-300)"
        return 1
    fi
    local exp
    exp=$(nm -D --defined-only "$HW/libvgpu.so" | awk '$3 == "dlsym" || $3 == "cuMemAlloc_v2" || $3 == "cuGetProcAddress_v2"' | wc -l)
    if [ "$exp" -ne 3 ]; then
        say FAIL build "libvgpu.so lacks dlsym/cuMemAlloc_v2/cuGetProcAddress_v2 exports ($exp of 3)"
        return 1
    fi
    VGPU=$HW/libvgpu.so
    if mkdir -p /usr/local/vgpu 2>/dev/null && cp "$HW/libvgpu.so" /usr/local/vgpu/libvgpu.so 2>/dev/null; then
        VGPU=/usr/local/vgpu/libvgpu.so
    fi
    say PASS build "libvgpu.so from $(basename "$SRC") (${#srcs[@]} sources; nvml.h $nvml_h; installed $VGPU)"
}

# ---------------------------------------------------------------- 2. runs
# run NAME PRELOAD [VAR=VALUE...]: hami_oom.py under PRELOAD (may be empty); rc in RC_<NAME>
run() {
    local name=$1 pre=$2 rc
    shift 2
    timeout -k 5 "$T" env ${pre:+LD_PRELOAD="$pre"} "$@" "$PY" "$HERE/hami_oom.py" "$STEPS" 5 \
        >"$HW/$name.out" 2>"$HW/$name.err"
    rc=$?
    eval "RC_${name//-/_}=$rc"
}
hami_env() {   # the quota, a fresh shared region per run, HAMi finding itself
    echo CUDA_DEVICE_MEMORY_LIMIT="$LIMIT" CUDA_DEVICE_MEMORY_SHARED_CACHE="$HW/$1.cudevshr.cache" \
        CUDA_REDIRECT="$VGPU"
}
losses() { grep -E '^(loss|params) ' "$1"; }
alloc() { grep -m 1 '^alloc ' "$1" | awk '{print $3}'; }
rcof() { eval echo "\${RC_${1//-/_}:-127}"; }

check_run() {   # check_run NAME LABEL WANT_ALLOC
    local name=$1 label=$2 want=$3 rc a
    rc=$(rcof "$name")
    a=$(alloc "$HW/$name.out")
    if [ "$rc" -ne 0 ]; then
        say FAIL "$label" "rc $rc: $(tail -n 3 "$HW/$name.err" | tr '\n' ' ' | cut -c1-250)"
    elif [ "$name" != native ] && ! diff -q <(losses "$HW/native.out") <(losses "$HW/$name.out") >/dev/null; then
        say FAIL "$label" "losses differ from native: $(diff <(losses "$HW/native.out") <(losses "$HW/$name.out") | head -n 2 | tr '\n' ' ')"
    elif [ "$a" != "$want" ]; then
        say FAIL "$label" "5 GiB allocation: '${a:-none}', expected '$want' (quota $LIMIT)"
    else
        say PASS "$label" "$(losses "$HW/$name.out" | grep -c '^loss') losses$([ "$name" != native ] && echo " bitwise as native"); 5 GiB allocation: $a"
    fi
}

# HAMi's hooked APIs, from its own table (src/cuda/hook.c: {.name = "cuMemAlloc_v2"}, ...).
hami_hooked() { grep -o '\.name = "cu[A-Za-z0-9_]*"' "$SRC/src/cuda/hook.c" | cut -d'"' -f2 | sort -u; }

check_counts() {   # check_counts ORDER(hami-first|shim-first)
    local o=$1 c=$HW/$1.counts cupti=$HW/$1.cupti n launches allocs
    n=$(cat "$c" "$c".[0-9]* 2>/dev/null | awk -F'\t' '$1 ~ /^cu[A-Z]/ { s += $2 } END { print s + 0 }')
    launches=$(cat "$c" "$c".[0-9]* 2>/dev/null | awk -F'\t' '$1 ~ /^cuLaunchKernel/ { s += $2 } END { print s + 0 }')
    allocs=$(cat "$c" "$c".[0-9]* 2>/dev/null | awk -F'\t' '$1 ~ /^cuMem(Alloc|Create)/ { s += $2 } END { print s + 0 }')
    if [ "$n" -lt 1000 ] || [ "$launches" -eq 0 ] || [ "$allocs" -eq 0 ]; then
        say FAIL "$o shim saw" "$n driver calls, $launches kernel launches, $allocs allocations (the shim was bypassed)"
    else
        say PASS "$o shim saw" "$n driver calls, $launches kernel launches, $allocs allocations"
    fi
    if [ -z "${CUPTI_COUNTER:-}" ] || [ ! -f "$CUPTI_COUNTER" ]; then
        say FAIL "$o counts" "no CUPTI counter library (CUPTI_COUNTER)"
        return
    fi
    local calib=()
    [ -n "${CALIB:-}" ] && [ -f "$CALIB" ] && calib=(--calib "$CALIB")
    "$PY" "$HERE/compare_counts.py" --shim "$c" --cupti "$cupti" --shim-alone "$HW/$o-alone.counts" --apis "$APIS" \
        --label "hami $o" --require-prefix cuLaunchKernel "${calib[@]}" >"$HW/$o.compare.txt" 2>&1
    local rc=$? line
    line=$(grep '^RESULT' "$HW/$o.compare.txt" | tail -n 1)
    line=${line#RESULT PASS }
    line=${line#RESULT FAIL }
    if [ $rc -eq 0 ]; then
        say PASS "$o counts" "shim = CUPTI per API: $line"
        return
    fi
    local unexplained others
    unexplained=$(awk '/^UNEXPLAINED/ { print $2 }' "$HW/$o.compare.txt" | sort -u)
    if [ "$o" = shim-first ] && ! grep -q '^PROBLEM' "$HW/$o.compare.txt" && [ -n "$unexplained" ]; then
        others=$(comm -23 <(echo "$unexplained") <(hami_hooked))
        if [ -z "$others" ]; then
            say PASS "$o counts" "shim = CUPTI for every API HAMi does not hook; differing only where HAMi calls the driver itself or refused a call: $(echo $unexplained | cut -c1-200)"
            return
        fi
        say FAIL "$o counts" "APIs HAMi does not hook differ: $(echo $others | cut -c1-200) ($line)"
        return
    fi
    say FAIL "$o counts" "${line:-compare_counts.py failed} $(echo $unexplained | cut -c1-200) (see $HW/$o.compare.txt)"
}

main() {
    build_hami || return
    [ "${HAMI_BUILD_ONLY:-0}" = 1 ] && return   # libvgpu.so for the plugins' comparisons only
    if [ -z "${CUPTI_COUNTER:-}" ]; then
        bash "$HERE/build.sh" "$HW/bin" >"$HW/gpu-build.log" 2>&1
        CUPTI_COUNTER=$HW/bin/libcupti_counter.so
    fi
    local cupti=()
    [ -f "$CUPTI_COUNTER" ] && cupti=(CUDA_INJECTION64_PATH="$CUPTI_COUNTER")
    run native ""
    check_run native "native" ok
    run hami "$VGPU" $(hami_env hami)
    check_run hami "hami alone" oom
    run hami-first-alone "$VGPU:$SHIM" $(hami_env hami-first-alone) CUSHIM_COUNTS="$HW/hami-first-alone.counts"
    run hami-first "$VGPU:$SHIM" $(hami_env hami-first) CUSHIM_COUNTS="$HW/hami-first.counts" "${cupti[@]}" \
        CUPTI_COUNTER_OUT="$HW/hami-first.cupti"
    check_run hami-first "hami-first run" oom
    check_counts hami-first
    run shim-first-alone "$SHIM:$VGPU" $(hami_env shim-first-alone) CUSHIM_COUNTS="$HW/shim-first-alone.counts"
    run shim-first "$SHIM:$VGPU" $(hami_env shim-first) CUSHIM_COUNTS="$HW/shim-first.counts" "${cupti[@]}" \
        CUPTI_COUNTER_OUT="$HW/shim-first.cupti"
    check_run shim-first "shim-first run" oom
    check_counts shim-first
}

main
[ "$failed" -eq 0 ]
