#!/usr/bin/env bash
# test-release.sh - build the shim from another release's generated tree and run the whole suite against the fake
# driver built from that release's headers (docs/generator.md, "Regenerating for a new release"). CI builds and
# tests the 13.0 tree (tools/test.sh); this is the same for generated/cuda-<X.Y>, run by hand after regenerating.
#
#   bash tools/test-release.sh 13.5 [BUILD_DIR]     (default build-<X.Y>; headers from build/cuda-headers/<X.Y>,
#                                                     fetched by tools/fetch-cuda-headers.sh when missing)
#   13.x trees and 12.9 (the fakes of an earlier release are a driver and runtime of that release: docs/generator.md);
#   11.8 builds the shim but not its fakes.
#   RELEASE_CTEST_EXCLUDE: tests left out (a ctest -E regex; '' runs all). By default the slowest that no
#   generated tree reaches: ml_unit (memlimit's host-free parts), rt_sdk_reclaim_test (hook chains retired under
#   32 threads, whatever the APIs), and the benchmarks' plumbing (gpubench_dryrun, gpubench_ab, bench_cpu_smoke:
#   their scripts and stand-ins, ~15 s a tree); the 13.0 build runs them in CI.
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
exclude=${RELEASE_CTEST_EXCLUDE-^(ml_unit|rt_sdk_reclaim_test|gpubench_dryrun|gpubench_ab|bench_cpu_smoke)\$}
ctest --test-dir "$out" --output-on-failure -j "$jobs" ${exclude:+-E "$exclude"}
echo "test-release.sh: the shim from generated/cuda-$ver passed its tests ($out)"
