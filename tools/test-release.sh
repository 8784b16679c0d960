#!/usr/bin/env bash
# test-release.sh - build the shim from another release's generated tree and run the whole suite against the fake
# driver built from that release's headers (docs/generator.md, "Regenerating for a new release"). CI builds and
# tests the 13.0 tree (tools/test.sh); this is the same for generated/cuda-<X.Y>, run by hand after regenerating.
#
#   bash tools/test-release.sh 13.5 [BUILD_DIR]     (default build-<X.Y>; headers from build/cuda-headers/<X.Y>,
#                                                     fetched by tools/fetch-cuda-headers.sh when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
ver=${1:?usage: tools/test-release.sh X.Y [BUILD_DIR]}
out=${2:-build-$ver}
top=$PWD
[ -f "generated/cuda-$ver/cushim_api_ids.h" ] || { echo "test-release.sh: no generated/cuda-$ver" >&2; exit 2; }
inc=$top/build/cuda-headers/$ver/include
[ -f "$inc/cuda.h" ] || bash tools/fetch-cuda-headers.sh build/cuda-headers
[ -f "$inc/cuda.h" ] || { echo "test-release.sh: no CUDA $ver headers in $inc" >&2; exit 2; }
jobs=$(nproc)
cmake -S . -B "$out" -DCUSHIM_CUDA_VERSION="$ver" -DCUSHIM_CUDA_INCLUDE="$inc" -DCUSHIM_BUILD_CODEGEN=OFF \
      -DCUSHIM_EXTRA_HEADERS_DIR="$top/build/cuda-headers" >/dev/null
cmake --build "$out" -j "$jobs"
ctest --test-dir "$out" --output-on-failure -j "$jobs"
echo "test-release.sh: the shim from generated/cuda-$ver passed its tests ($out)"
