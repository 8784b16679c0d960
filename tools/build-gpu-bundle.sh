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
cmake -S . -B build-gpu -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
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
# A CUDA 12 runtime for the 'copies' check (two majors of libcudart in one process): the pinned PyPI wheel's
# libcudart.so.12, fetched once into build/cu12-wheel (the GPU machine has no registry); skipped offline.
cu12=nvidia-cuda-runtime-cu12==12.9.79
if [ ! -f build/cu12-wheel/lib/libcudart.so.12 ]; then
  rm -rf build/cu12-wheel && mkdir -p build/cu12-wheel
  if timeout 120 python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
       --python-version 3.11 "$cu12" -d build/cu12-wheel >/dev/null 2>&1; then
    python3 - build/cu12-wheel <<'PY' || true
import glob, os, sys, zipfile
d = sys.argv[1]
for whl in glob.glob(os.path.join(d, "*.whl")):
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if os.path.basename(n).startswith("libcudart.so.12"):
                os.makedirs(os.path.join(d, "lib"), exist_ok=True)
                with open(os.path.join(d, "lib", "libcudart.so.12"), "wb") as f:
                    f.write(z.read(n))
PY
  fi
fi
if [ -f build/cu12-wheel/lib/libcudart.so.12 ]; then
  mkdir -p build-gpu/cu12 && cp build/cu12-wheel/lib/libcudart.so.12 build-gpu/cu12/
else
  echo "build-gpu-bundle: no $cu12 wheel (offline?): the GPU check 'copies' will look for a CUDA 12 runtime there" >&2
fi
# The GPU check 'release12': the shim and the trace plugin built from generated/cuda-12.9 (build-gpu/r12.9), and
# a CUDA 12 program built here against the 12.9 headers and the wheel's libcudart.so.12 (found through
# $ORIGIN/../cu12 on the GPU machine, which has neither).
if [ -f build/cu12-wheel/lib/libcudart.so.12 ]; then
  [ -f build/cuda-headers/12.9/include/cuda.h ] || bash tools/fetch-cuda-headers.sh build/cuda-headers
  cmake -S . -B build-gpu-12.9 -DCUSHIM_CUDA_VERSION=12.9 -DCUSHIM_CUDA_INCLUDE="$top/build/cuda-headers/12.9/include" \
        -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-gpu-12.9 -j "$(nproc)" --target cushim trace
  rm -rf build-gpu/r12.9 && mkdir -p build-gpu/r12.9/runtime build-gpu/r12.9/plugins   # a build tree's layout
  cp build-gpu-12.9/runtime/libcushim.so build-gpu/r12.9/runtime/
  cp build-gpu-12.9/plugins/trace.so build-gpu/r12.9/plugins/
  ${CC:-gcc} -std=gnu11 -O1 -Wall -Wextra -Werror -Wno-deprecated-declarations -Ibuild/cuda-headers/12.9/include \
    tests/gpu/release12/rt12_main.c -o build-gpu/r12.9/rt12_main build/cu12-wheel/lib/libcudart.so.12 \
    -Wl,-rpath,'$ORIGIN/../cu12'
fi
du -sh build-gpu
