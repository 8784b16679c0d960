#!/usr/bin/env bash
# test.sh - the whole test suite, as CI runs it (README: "Run the tests").
#
# 1. installs the Debian packages it needs (when run as root and one is missing; CUSHIM_NO_INSTALL=1 skips),
# 2. fetches the pinned CUDA 13.5, 12.9 and 11.8 headers from PyPI for verify-generated,
# 3. builds everything with -Werror and runs ctest (cmocka units, e2e programs under the preloaded shim),
# 4. checks that generated/ is exactly what cushim-gen emits (verify-generated), built with libclang 14 and 16,
# 5. builds the shim from the newest other release's tree (generated/cuda-13.5) and from the last 12.x
#    (generated/cuda-12.9) and runs the suite on each against fakes of that release (tools/test-release.sh), and
#    builds it from generated/cuda-11.8,
# 6. rebuilds the shim, the fakes and the tests with ASan+UBSan and runs them again,
# 7. rebuilds with TSan and runs the concurrency tests,
# 8. fuzzes the parsers (tools/fuzz.sh, 10 s a harness here: FUZZ_SECONDS).
# With --build-only: steps 1 and 3's build only (the README's first command).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
jobs=$(nproc 2>/dev/null || echo 2)
pkgs="cmake gcc g++ make pkg-config binutils libclang-dev libcmocka-dev liblua5.4-dev liblua5.3-dev lua5.4 zlib1g-dev
      libgl-dev libegl-dev libvdpau-dev python3 python3-pip valgrind libclang-16-dev clang"

step() { printf '\n=== %s (at %ss) ===\n' "$*" "$SECONDS"; }

if [ "${CUSHIM_NO_INSTALL:-0}" != 1 ]; then
  missing=""
  for p in $pkgs; do
    case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" in
      *" installed") ;;
      *) missing="$missing $p" ;;
    esac
  done
  if [ -n "$missing" ]; then
    step "installing Debian packages:$missing"
    if [ "$(id -u)" = 0 ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends $missing >/dev/null
    else
      echo "test.sh: missing packages:$missing (run as root, or install them)" >&2; exit 1
    fi
  fi
fi

cuda_root=${CUSHIM_CUDA_ROOT:-/usr/local/cuda}
[ -f "$cuda_root/include/cuda.h" ] || { echo "test.sh: no CUDA toolkit headers at $cuda_root/include (set CUSHIM_CUDA_ROOT)" >&2; exit 1; }

if [ "${1:-}" = --build-only ]; then
  step "build"
  cmake -S . -B build -DCUSHIM_CUDA_ROOT="$cuda_root" >/dev/null
  cmake --build build -j "$jobs"
  exit 0
fi

step "fetching pinned CUDA 13.5 / 12.9 / 11.8 headers from PyPI"
bash tools/fetch-cuda-headers.sh build/cuda-headers

step "build (Release with -Werror) and ctest"
cmake -S . -B build -DCUSHIM_CUDA_ROOT="$cuda_root" -DCUSHIM_EXTRA_HEADERS_DIR="$top/build/cuda-headers" >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

step "verify-generated (generated/ equals what cushim-gen emits, all versions, with libclang 14 and 16)"
for v in 14 16; do
  llvm=/usr/lib/llvm-$v
  [ -f "$llvm/include/clang-c/Index.h" ] || { echo "test.sh: libclang $v headers missing ($llvm)" >&2; exit 1; }
  cmake -S codegen -B "build-gen$v" -DCUSHIM_LIBCLANG_INCLUDE="$llvm/include" -DCUSHIM_LIBCLANG="$llvm/lib/libclang.so" \
        -DCUSHIM_CUDA_ROOT="$cuda_root" -DCUSHIM_EXTRA_HEADERS_DIR="$top/build/cuda-headers" >/dev/null
  cmake --build "build-gen$v" --target verify-generated
  echo "libclang $v: generated/ verified"
done

step "the shim from generated/cuda-13.5 and from generated/cuda-12.9, and their tests (tools/test-release.sh); 11.8 built"
bash tools/test-release.sh 13.5 build-13.5
bash tools/test-release.sh 12.9 build-12.9
# 11.8: the shim and its plugins build (no fakes of CUDA 11's API) and work in front of the main build's fake
# driver; the runtime's exports carry CUDA 11's node libcudart.so.11.0 (tests/old_tree_smoke.sh)
cmake -S . -B build-11.8 -DCUSHIM_CUDA_VERSION=11.8 -DCUSHIM_BUILD_TESTS=OFF -DCUSHIM_BUILD_CODEGEN=OFF >/dev/null
cmake --build build-11.8 -j "$jobs"
bash tests/old_tree_smoke.sh build-11.8 build

step "ASan+UBSan build and tests"
cmake -S . -B build-asan -DCUSHIM_SANITIZE=address -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_CUDA_ROOT="$cuda_root" >/dev/null
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE no_asan

step "TSan build and concurrency tests"
cmake -S . -B build-tsan -DCUSHIM_SANITIZE=thread -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_CUDA_ROOT="$cuda_root" >/dev/null
cmake --build build-tsan -j "$jobs"
ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L concurrency

step "fuzzing (tools/fuzz.sh: each parser harness FUZZ_SECONDS, 10 s here)"
FUZZ_SECONDS=${FUZZ_SECONDS:-10} bash tools/fuzz.sh

step "all test stages passed"
