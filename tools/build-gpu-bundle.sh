#!/usr/bin/env bash
# build-gpu-bundle.sh - build what the GPU suite needs here (the GPU machine has no libclang, cmocka or Lua)
# into build-gpu/, which the device run carries: the shim, the drop-in, the shipped plugins, an install of
# the SDK (build-gpu/prefix) and the SDK's C example plugin built out of tree against that install
# (build-gpu/sdk-examples/c-plugin/callcount.so). Then on the GPU machine: bash tests/gpu/run.sh build-gpu
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
# nvml.h (the 13.0 tree interposes NVML; the toolkit lacks it): pinned wheel, fetched once.
[ -f build/cuda-headers/nvml-13.0/include/nvml.h ] || bash tools/fetch-cuda-headers.sh build/cuda-headers
cmake -S . -B build-gpu -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_BUILD_TESTS=OFF -DCUSHIM_BUILD_GPUAB=ON \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-gpu -j "$(nproc)"
rm -rf build-gpu/prefix
cmake --install build-gpu --prefix "$top/build-gpu/prefix" >/dev/null
cmake -S sdk/examples/c-plugin -B build-gpu/sdk-examples/c-plugin -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$top/build-gpu/prefix" >/dev/null
cmake --build build-gpu/sdk-examples/c-plugin -j "$(nproc)"
# The lua plugin opens liblua5.4.so.0 at run time; the GPU machine has no Lua: a copy next to the plugin,
# where the plugin looks when the system has none.
# (awk reads all of ldconfig's output: an early exit would SIGPIPE it and fail this script under pipefail)
lualib=$(ldconfig -p 2>/dev/null | awk '/liblua5\.4\.so\.0 .*x86-64/ && !f { print $NF; f = 1 }')
if [ -n "$lualib" ] && [ -f build-gpu/plugins/lua.so ]; then
  cp -L "$lualib" build-gpu/plugins/liblua5.4.so.0
fi
# The GPU check 'dlchurn': tests/e2e/e2e_dlchurn.c built here (it includes the generated params header, hence
# CUDA's GL/EGL/VDPAU interop headers, which the GPU machine lacks) into build-gpu/dlchurn.
mkdir -p build-gpu/dlchurn
${CC:-gcc} -shared -fPIC -O1 tests/e2e/e2e_dlchurn_lib.c -o build-gpu/dlchurn/libe2e_dlchurn_lib.so
cuda_inc=${CUSHIM_CUDA_ROOT:-/usr/local/cuda}/include
${CC:-gcc} -std=gnu11 -O1 -Wall -Wextra -Werror -Wno-deprecated-declarations -Itests/e2e -Igenerated/cuda-13.0 \
  -I"$cuda_inc" -Isdk/include -Itests/fake -DE2E_HAVE_NVML -DE2E_CUDART_SONAME='"libcudart.so.13"' \
  -DE2E_DLCHURN_LIB='"libe2e_dlchurn_lib.so"' tests/e2e/e2e_dlchurn.c tests/e2e/e2e_common.c \
  -o build-gpu/dlchurn/e2e_dlchurn -ldl -lpthread
# The GPU check 'remotert liar': the hostile client speaking the wire itself (tests/e2e/e2e_remote_liar.c, linked
# with the remote library, no shared library of the tree) is a test program, which this Release tree does not
# build: taken from the test tree build/ where it is configured.
if [ -f build/CMakeCache.txt ] && cmake --build build --target e2e_remote_liar >/dev/null 2>&1; then
  mkdir -p build-gpu/tests/e2e && cp build/tests/e2e/e2e_remote_liar build-gpu/tests/e2e/
else
  echo "build-gpu-bundle: no test tree build/ to build e2e_remote_liar in: 'remotert liar' will SKIP" >&2
fi
# Runtimes of earlier majors, the pinned PyPI wheels' (the GPU machine has no registry), fetched once into
# build/cuMM-wheel and copied to build-gpu/cuMM; skipped offline. libcudart.so.12: the 'copies' check (two majors
# of libcudart in one process) and 'release12'; libcudart.so.11.0: 'release11'.
# wheel_runtime MM PIN FILE
wheel_runtime() {
  local d=build/cu$1-wheel
  if [ ! -f "$d/lib/$3" ]; then
    rm -rf "$d" && mkdir -p "$d"
    if timeout 120 python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
         --python-version 3.11 "$2" -d "$d" >/dev/null 2>&1; then
      python3 - "$d" "$3" <<'PY' || true
import glob, os, sys, zipfile
d, want = sys.argv[1], sys.argv[2]
for whl in glob.glob(os.path.join(d, "*.whl")):
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if os.path.basename(n) == want:
                os.makedirs(os.path.join(d, "lib"), exist_ok=True)
                with open(os.path.join(d, "lib", want), "wb") as f:
                    f.write(z.read(n))
PY
    fi
  fi
  if [ -f "$d/lib/$3" ]; then
    mkdir -p "build-gpu/cu$1" && cp "$d/lib/$3" "build-gpu/cu$1/"
  else
    echo "build-gpu-bundle: no $2 wheel (offline?): the GPU checks that need it will look for $3 there" >&2
  fi
}
wheel_runtime 12 nvidia-cuda-runtime-cu12==12.9.79 libcudart.so.12
wheel_runtime 11 nvidia-cuda-runtime-cu11==11.8.89 libcudart.so.11.0

# The GPU checks 'release12' and 'release11': the shim and the trace plugin built from generated/cuda-12.9 and
# generated/cuda-11.8 (build-gpu/r12.9, build-gpu/r11.8, a build tree's layout), and a program of that release
# built here against its headers and the wheel's runtime (found through $ORIGIN/../cuMM on the GPU machine, which
# has neither). release_tree TREE MM RUNTIME
release_tree() {
  [ -f "build/cu$2-wheel/lib/$3" ] || return 0
  [ -f "build/cuda-headers/$1/include/cuda.h" ] || bash tools/fetch-cuda-headers.sh build/cuda-headers
  cmake -S . -B "build-gpu-$1" -DCUSHIM_CUDA_VERSION="$1" -DCUSHIM_CUDA_INCLUDE="$top/build/cuda-headers/$1/include" \
        -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "build-gpu-$1" -j "$(nproc)" --target cushim trace memlimit
  rm -rf "build-gpu/r$1" && mkdir -p "build-gpu/r$1/runtime" "build-gpu/r$1/plugins"
  cp "build-gpu-$1/runtime/libcushim.so" "build-gpu/r$1/runtime/"
  cp "build-gpu-$1/plugins/trace.so" "build-gpu-$1/plugins/memlimit.so" "build-gpu/r$1/plugins/"
  cp "generated/cuda-$1/apis.tsv" "build-gpu/r$1/"
  ${CC:-gcc} -std=gnu11 -O1 -Wall -Wextra -Werror -Wno-deprecated-declarations -I"build/cuda-headers/$1/include" \
    tests/gpu/release/rt_main.c -o "build-gpu/r$1/rt_main" "build/cu$2-wheel/lib/$3" -Wl,-rpath,"\$ORIGIN/../cu$2"
  # a tree that interposes NVML, cuBLAS and NCCL (12.9): a program of that release using them ('release12 libs')
  if [ -f "generated/cuda-$1/cushim_nccl_params.h" ]; then
    ${CC:-gcc} -std=gnu11 -O1 -Wall -Wextra -Werror -Wno-deprecated-declarations -I"build/cuda-headers/$1/include" \
      -I"build/cuda-headers/nvml-$1/include" tests/gpu/release/libs_main.c -o "build-gpu/r$1/libs_main" \
      "build/cu$2-wheel/lib/$3" -ldl -Wl,-rpath,"\$ORIGIN/../cu$2"
  fi
}
release_tree 12.9 12 libcudart.so.12
release_tree 11.8 11 libcudart.so.11.0
du -sh build-gpu

# The GPU check 'tracegpuab': the shim beside the trace plugin's gpu-ab copy (bench/gpu/trace_gpuab.c in place of
# plugins/trace/tr_gdetach.c: while paused with unhook, CUPTI records every API call as activity instead, what CUPTI activity tracing alone
# pays), in build-gpu/gpuab (a build tree's layout) for one process to time --trace-gpu against CUPTI activity tracing.
rm -rf build-gpu/gpuab
if [ -f build-gpu/plugins-gpuab/trace.so ]; then
  mkdir -p build-gpu/gpuab/runtime build-gpu/gpuab/plugins
  cp build-gpu/runtime/libcushim.so build-gpu/gpuab/runtime/
  cp build-gpu/plugins-gpuab/trace.so build-gpu/gpuab/plugins/
else
  echo "build-gpu-bundle: no CUPTI headers, no gpu-ab copy of the trace plugin: the check tracegpuab will say so" >&2
fi
