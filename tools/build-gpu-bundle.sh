#!/usr/bin/env bash
# build-gpu-bundle.sh - build what the GPU suite needs here (the GPU machine has no libclang, cmocka or Lua)
# into build-gpu/, which the device run carries. Then on the GPU machine: bash tests/gpu/run.sh build-gpu
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-gpu -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-gpu -j "$(nproc)"
du -sh build-gpu
