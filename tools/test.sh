#!/usr/bin/env bash
# test.sh - the whole test suite, as CI runs it (README: "Run the tests").
#
# 1. installs the Debian packages it needs (when run as root and one is missing; CUSHIM_NO_INSTALL=1 skips),
# 1b. runs the README's first set-up command as written (on CI's clean clone, a fresh checkout's first build),
# 2. fetches the pinned CUDA 13.5, 12.9 and 11.8 headers from PyPI for verify-generated, while the parsers that
#    need no build tree are fuzzed (step 8's first part: the download waits on the network, not on the cores),
# 3. builds everything with -Werror and runs ctest (cmocka units, e2e programs under the preloaded shim),
# 4. checks that generated/ is exactly what cushim-gen emits (verify-generated), built with libclang 14 and 16,
# 5. builds the shim from the newest other release's tree (generated/cuda-13.5) and from the last 12.x
#    (generated/cuda-12.9) and runs the suite on each against fakes of that release (tools/test-release.sh), and
#    builds it from generated/cuda-11.8,
# 6. rebuilds the shim, the fakes and the tests with ASan+UBSan and runs them again,
# 7. rebuilds what the concurrency tests need with TSan (tools/ctest-targets.py) and runs them,
# 8. fuzzes the parsers (tools/fuzz.sh, 10 s a harness here: FUZZ_SECONDS): those that need no build tree during
#    step 2, the rest at the end.
# With --build-only: steps 1 and 3's build only (the README's first command).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
jobs=$(nproc 2>/dev/null || echo 2)
pkgs="cmake gcc g++ make pkg-config binutils libclang-dev libcmocka-dev liblua5.4-dev liblua5.3-dev lua5.4 zlib1g-dev libyajl-dev
      libgl-dev libegl-dev libvdpau-dev python3 python3-pip valgrind libclang-16-dev clang locales libssl-dev
      protobuf-compiler"

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

# The README's first command exactly as written, before anything else fetches or builds: on CI's clean clone this
# is a fresh checkout's first build (it fetches nvml.h itself), so the README's first command cannot rot unseen.
step "the README's first set-up command, as written"
readme_cmd=$(sh tools/readme-command.sh "$top") || { echo "test.sh: the README has no first set-up command" >&2; exit 1; }
echo "$readme_cmd"
[ -d build ] && echo "(build/ exists already: this is not a fresh checkout's first build)"
env -u LD_PRELOAD sh -c "$readme_cmd" > build-readme.log 2>&1 || { tail -30 build-readme.log; echo "test.sh: the README's first command failed" >&2; exit 1; }
tail -3 build-readme.log

fuzz_seconds=${FUZZ_SECONDS:-10}
step "fetching pinned CUDA 13.5 / 12.9 / 11.8 headers from PyPI, meanwhile fuzzing the parsers that need no build tree (tools/fuzz.sh --standalone, ${fuzz_seconds} s a harness)"
mkdir -p build
bash tools/fetch-cuda-headers.sh build/cuda-headers > build/fetch-cuda-headers.log 2>&1 &
fetch_pid=$!
trap 'kill "$fetch_pid" 2>/dev/null || true' EXIT
FUZZ_SECONDS=$fuzz_seconds bash tools/fuzz.sh --standalone
fetch_rc=0
wait "$fetch_pid" || fetch_rc=$?
trap - EXIT
cat build/fetch-cuda-headers.log
[ "$fetch_rc" = 0 ] || { echo "test.sh: tools/fetch-cuda-headers.sh failed (exit $fetch_rc)" >&2; exit 1; }

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
# The release trees leave out, besides the default, the tests that wait on simulated time - smlimit's schedulers
# and the trace writer's timers (~80 s of a tree's ~165): their logic reads no generated table beyond the launch
# wrappers, which every other test of the tree runs; the 13.0 build (and its ASan and TSan builds) runs them
# (docs/testing.md). The suite's 15 minutes on CI's 2 cores have room for two whole reruns but not three.
sleepers='smlimit_.*|trace_timed.*|trace_gpu_detach|trace_nvtx_signal|trace_pf_reset'
RELEASE_CTEST_EXCLUDE="^(ml_unit|rt_sdk_reclaim_test|gpubench_dryrun|gpubench_ab|bench_cpu_smoke|$sleepers)\$" \
    bash tools/test-release.sh 13.5 build-13.5
RELEASE_CTEST_EXCLUDE="^(ml_unit|rt_sdk_reclaim_test|gpubench_dryrun|gpubench_ab|bench_cpu_smoke|$sleepers)\$" \
    bash tools/test-release.sh 12.9 build-12.9
# 11.8: the shim and its plugins build (no fakes of CUDA 11's API) and work in front of the main build's fake
# driver; the runtime's exports carry CUDA 11's node libcudart.so.11.0 (tests/old_tree_smoke.sh)
cmake -S . -B build-11.8 -DCUSHIM_CUDA_VERSION=11.8 -DCUSHIM_BUILD_TESTS=OFF -DCUSHIM_BUILD_CODEGEN=OFF >/dev/null
cmake --build build-11.8 -j "$jobs"
bash tests/old_tree_smoke.sh build-11.8 build

step "ASan+UBSan build and tests"
cmake -S . -B build-asan -DCUSHIM_SANITIZE=address -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_CUDA_ROOT="$cuda_root" >/dev/null
cmake --build build-asan -j "$jobs"
# Less the simulated-time tests that the TSan stage runs again under its sanitizer (~37 s of ASan's ~190 s of test
# time; the plain build runs them too): the CI budget (docs/testing.md).
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE no_asan \
      -E '^(trace_timed|trace_gpu_detach|smlimit_devmap|smlimit_priolatency|smlimit_limit|smlimit_policy)$'

step "TSan build of what the concurrency tests need, and those tests"
# CMake's file API lists each target's files; tools/ctest-targets.py picks the libraries and the tests' programs
mkdir -p build-tsan/.cmake/api/v1/query
touch build-tsan/.cmake/api/v1/query/codemodel-v2
cmake -S . -B build-tsan -DCUSHIM_SANITIZE=thread -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_CUDA_ROOT="$cuda_root" \
      -DCUSHIM_SELECTED_TARGETS= >/dev/null
tsan_targets=$(python3 tools/ctest-targets.py build-tsan concurrency | paste -sd';')
cmake -S . -B build-tsan -DCUSHIM_SELECTED_TARGETS="$tsan_targets" >/dev/null
cmake --build build-tsan -j "$jobs" --target selected
ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L concurrency

step "fuzzing the parsers that need the build tree (tools/fuzz.sh --build-tree, ${fuzz_seconds} s a harness)"
FUZZ_SECONDS=$fuzz_seconds bash tools/fuzz.sh --build-tree

step "all test stages passed"
