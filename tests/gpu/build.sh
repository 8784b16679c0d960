#!/usr/bin/env bash
# tests/gpu/build.sh - builds the GPU suite's programs (no GPU needed to build).
#
# USAGE: bash tests/gpu/build.sh OUTDIR
#   CUDA_HOME (default /usr/local/cuda), GPU_ARCH (default sm_90),
#   CUPTI_INCLUDE / CUPTI_LIB (the directory with cupti.h / the libcupti.so file;
#   found under CUDA_HOME when unset).
# Builds each target on its own (one failure does not stop the others) into OUTDIR:
#   kern.cubin kern.ptx       kernels for cuModuleLoadData
#   app_static app_shared     app_driver.cu with static / shared cudart, -lcuda
#   procaddr_check            cuGetProcAddress_v2 recorder
#   libcupti_counter.so       CUPTI injection library (CUDA_INJECTION64_PATH)
#   libcupti_activity.so      CUPTI activity tracing alone (injection; the check 'tracebench')
# Each target's compiler output goes to OUTDIR/build-<target>.log. Exit status: the
# number of targets that failed.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:?usage: build.sh OUTDIR}
mkdir -p "$OUTDIR"
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
command -v "$NVCC" >/dev/null 2>&1 || NVCC=nvcc
ARCH=${GPU_ARCH:-sm_90}
LIBCUDA_L="-L$CUDA/lib64 -L$CUDA/lib64/stubs -L$CUDA/targets/x86_64-linux/lib/stubs"
CC=${CC:-gcc}

find_cupti() {
    if [ -z "${CUPTI_INCLUDE:-}" ]; then
        for d in "$CUDA/extras/CUPTI/include" "$CUDA/include" "$CUDA/targets/x86_64-linux/include"; do
            if [ -f "$d/cupti.h" ]; then CUPTI_INCLUDE=$d; break; fi
        done
    fi
    if [ -z "${CUPTI_LIB:-}" ]; then
        for f in "$CUDA/extras/CUPTI/lib64/libcupti.so" "$CUDA/lib64/libcupti.so" \
                 "$CUDA/targets/x86_64-linux/lib/libcupti.so" "$CUDA/lib/libcupti.so"; do
            if [ -e "$f" ]; then CUPTI_LIB=$f; break; fi
        done
    fi
    if [ -z "${CUPTI_LIB:-}" ]; then
        CUPTI_LIB=$(ls "$CUDA"/extras/CUPTI/lib64/libcupti.so.* "$CUDA"/lib64/libcupti.so.* 2>/dev/null | head -n 1)
    fi
}

failed=0
step() {   # step TARGET COMMAND...
    local target=$1
    shift
    if "$@" >"$OUTDIR/build-$target.log" 2>&1; then
        echo "built $target"
    else
        echo "FAILED to build $target (see $OUTDIR/build-$target.log):"
        tail -n 20 "$OUTDIR/build-$target.log"
        failed=$((failed + 1))
    fi
}

step kern.cubin "$NVCC" -arch="$ARCH" -cubin -o "$OUTDIR/kern.cubin" "$HERE/kern.cu"
step kern.ptx "$NVCC" -arch="$ARCH" -ptx -o "$OUTDIR/kern.ptx" "$HERE/kern.cu"
step app_static "$NVCC" -arch="$ARCH" -O2 -Xcompiler -Wall -o "$OUTDIR/app_static" "$HERE/app_driver.cu" \
    $LIBCUDA_L -lcuda
step app_shared "$NVCC" -arch="$ARCH" -O2 -Xcompiler -Wall -cudart shared -o "$OUTDIR/app_shared" \
    "$HERE/app_driver.cu" $LIBCUDA_L -lcuda -Xlinker -rpath -Xlinker "$CUDA/lib64"
step procaddr_check "$CC" -std=gnu11 -O2 -Wall -Wextra -I"$CUDA/include" -o "$OUTDIR/procaddr_check" \
    "$HERE/procaddr_check.c" $LIBCUDA_L -lcuda -ldl

find_cupti
if [ -n "${CUPTI_INCLUDE:-}" ] && [ -n "${CUPTI_LIB:-}" ]; then
    CUPTI_LIBDIR=$(dirname "$CUPTI_LIB")
    step libcupti_counter.so "$CC" -std=gnu11 -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden \
        -I"$CUPTI_INCLUDE" -I"$CUDA/include" -o "$OUTDIR/libcupti_counter.so" "$HERE/cupti_counter.c" \
        "$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIBDIR"
    step libcupti_activity.so "$CC" -std=gnu11 -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden \
        -I"$CUPTI_INCLUDE" -I"$CUDA/include" -o "$OUTDIR/libcupti_activity.so" "$HERE/trace/cupti_activity.c" \
        "$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIBDIR"
    echo "CUPTI: include $CUPTI_INCLUDE, library $CUPTI_LIB"
else
    echo "FAILED to build libcupti_counter.so and libcupti_activity.so: cupti.h or libcupti.so not found under $CUDA" \
         "(set CUPTI_INCLUDE and CUPTI_LIB)"
    failed=$((failed + 1))
fi
exit "$failed"
