#!/usr/bin/env bash
# sdk_examples.sh SRC_DIR BUILD_DIR VECADD LIBDIR
# The plugin SDK as a vendor meets it: 'cmake --install' the build into a fresh prefix; build each example
# of sdk/examples/ as a separate CMake project that sees only that prefix (find_package(cushim) through
# CMAKE_PREFIX_PATH), and once more with pkg-config (PKG_CONFIG_PATH) and its Makefile; install the C one
# among the shipped plugins; then load them into vecadd under the installed shim and fake driver, preloaded
# and as the drop-in libcuda.so.1, and check what they do: the C plugin's counts (equal to the shim's own
# CUSHIM_COUNTS) and a denied call's error (the fake driver never saw the call), the C++ plugin's
# allocation cap and report; fail-closed and optional loading.
# shellcheck disable=SC2015 # ok() never fails
set -u
src=$1 build=$2 vecadd=$3 libdir=$4
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
p=$t/prefix
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
die() { echo "FAIL: $*"; exit 1; }
# Nothing from the caller's environment may point the examples at another cushim.
unset CUSHIM_PLUGINS CUSHIM_LIB CUSHIM_BUILD_DIR CUSHIM_COUNTS CUSHIM_LOG CUSHIM_LOG_FILE LD_PRELOAD \
      CMAKE_PREFIX_PATH PKG_CONFIG_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH

cmake --install "$build" --prefix "$p" >"$t/install.log" 2>&1 || { cat "$t/install.log"; die "cmake --install failed"; }
cushim=$p/bin/cushim
export PKG_CONFIG_PATH=$p/$libdir/pkgconfig

# --- pkg-config and the CMake package ----------------------------------------------------------------
cflags=$(pkg-config --cflags cushim) || die "pkg-config --cflags cushim failed"
read -r cflags <<<"$cflags"   # pkg-config ends it with a space
inc=${cflags#-I}
[ "$(realpath "$inc")" = "$(realpath "$p/include")" ] && ok "pkg-config --cflags: $cflags" \
  || fail "pkg-config --cflags gave '$cflags', not the prefix's include directory"
pdir=$(pkg-config --variable=plugindir cushim)
[ "$(realpath -m "$pdir")" = "$(realpath -m "$p/$libdir/cushim/plugins")" ] && ok "pkg-config --variable=plugindir" \
  || fail "plugindir '$pdir'"
[ "$(pkg-config --variable=abi_version cushim)" = "$(sed -n 's/^#define CUSHIM_ABI_MAJOR \([0-9]*\)$/\1/p' \
   "$p/include/cushim/cushim.h").$(sed -n 's/^#define CUSHIM_ABI_MINOR \([0-9]*\)$/\1/p' "$p/include/cushim/cushim.h")" ] \
  || fail "pkg-config abi_version '$(pkg-config --variable=abi_version cushim)' disagrees with cushim.h"

# configure_example NAME SRC: a separate CMake project against the prefix only.
configure_example() {
  local name=$1 dir=$2
  if ! cmake -S "$dir" -B "$t/$name" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
        >"$t/$name.cfg.log" 2>&1; then
    cat "$t/$name.cfg.log"; fail "$name: configure failed"; return 1
  fi
  local found
  found=$(sed -n 's/^cushim_DIR:PATH=//p' "$t/$name/CMakeCache.txt")
  [ "$(realpath "$found")" = "$(realpath "$p/$libdir/cmake/cushim")" ] \
    || { fail "$name: find_package(cushim) found '$found', not the prefix's package"; return 1; }
  if ! cmake --build "$t/$name" >"$t/$name.build.log" 2>&1; then
    cat "$t/$name.build.log"; fail "$name: build failed"; return 1
  fi
  ok "$name: built as its own CMake project against $p only"
}
configure_example c "$src/sdk/examples/c-plugin"
configure_example cpp "$src/sdk/examples/cpp-plugin"
# Only the entry point is exported (cushim_add_plugin's version script), and nothing is left undefined
# that would have to come from the shim.
for so in "$t/c/callcount.so" "$t/cpp/memcap.so"; do
  [ -f "$so" ] || { fail "$so not built"; continue; }
  exports=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TWDBVR]$/ {print $3}' | tr '\n' ' ')
  [ "$exports" = "cushim_plugin_entry " ] || fail "$(basename "$so") exports: $exports"
  nm -D --undefined-only "$so" | grep -q ' cushim_' && fail "$(basename "$so") references a cushim symbol"
done

# The same sources through pkg-config and the examples' Makefiles.
mkdir -p "$t/pc"
for ex in c-plugin cpp-plugin; do
  if make -s -C "$src/sdk/examples/$ex" O="$t/pc" >"$t/pc-$ex.log" 2>&1; then ok "$ex: built with pkg-config (Makefile)"
  else cat "$t/pc-$ex.log"; fail "$ex: pkg-config build failed"; fi
done

# The guide's first example (docs/plugin-sdk.md, step 2), built with its one-line pkg-config command: the
# text a vendor copies must compile and do what it says.
sed -n '/^\/\* nomem.c /,/^CUSHIM_PLUGIN(nomem)$/p' "$src/docs/plugin-sdk.md" >"$t/nomem.c"
# shellcheck disable=SC2046 # pkg-config output is meant to split into words
if [ -s "$t/nomem.c" ] && (cd "$t" && cc $(pkg-config --cflags cushim) -std=c11 -Wall -Wextra -Werror -shared -fPIC \
      -fvisibility=hidden -Wl,-z,defs -o nomem.so nomem.c) >"$t/nomem.log" 2>&1; then
  "$cushim" run --fake "--plugin=$t/nomem.so" -- "$vecadd" 1000 >/dev/null 2>"$t/nomem.err"
  grep -q 'cuMemAlloc(.*) failed: CUDA_ERROR_OUT_OF_MEMORY' "$t/nomem.err" && ok "the guide's nomem.c builds and works" \
    || fail "the guide's nomem.c: $(head -c 300 "$t/nomem.err")"
else cat "$t/nomem.log"; fail "the guide's nomem.c does not build (or was not found in docs/plugin-sdk.md)"; fi

# cushim::params: the typed parameter structs, with the CUDA headers the build used.
mkdir -p "$t/params-src"
cat >"$t/params-src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(params_check C)
find_package(cushim REQUIRED)
add_library(params_check MODULE params_check.c)
target_link_libraries(params_check PRIVATE cushim::params)
EOF
cat >"$t/params-src/params_check.c" <<'EOF'
#include <stddef.h>
#include <cushim/cushim.h>
#include <cushim/cushim_api_ids.h>
#include <cushim/cushim_params.h>
_Static_assert(offsetof(cushim_params_cuMemAlloc_v2, bytesize) == sizeof(CUdeviceptr *), "params layout");
unsigned params_check_id(void) { return CUSHIM_API_cuMemAlloc_v2; }
EOF
if cmake -S "$t/params-src" -B "$t/params" -DCMAKE_PREFIX_PATH="$p" >"$t/params.log" 2>&1 \
   && cmake --build "$t/params" >>"$t/params.log" 2>&1; then ok "cushim::params: <cushim/cushim_params.h> compiles"
else cat "$t/params.log"; fail "cushim::params"; fi

# Installed with the shim's prefix, the C example becomes a shipped plugin: found by name.
cmake --install "$t/c" --prefix "$p" >/dev/null 2>&1 || fail "installing the C example into the prefix"
"$cushim" plugins callcount >"$t/desc.out" 2>&1
if grep -q '^callcount 1.0.0$' "$t/desc.out" && grep -q '^    top=int, default .0.$' "$t/desc.out" \
   && grep -q '^    deny=string, repeatable$' "$t/desc.out"; then ok "cushim plugins callcount (installed by name)"
else fail "cushim plugins callcount: $(cat "$t/desc.out")"; fi
"$cushim" plugins "$t/cpp/memcap.so" >"$t/desc.out" 2>&1
grep -q '^    max_bytes=bytes, default .0.$' "$t/desc.out" && grep -q '^    slow_ms=double' "$t/desc.out" \
  && grep -q '^    verbose=bool' "$t/desc.out" && ok "cushim plugins PATH describes memcap" \
  || fail "cushim plugins memcap.so: $(cat "$t/desc.out")"

# --- loaded under the installed shim and fake driver ------------------------------------------------------
# run_vecadd TAG ARGS...: the installed launcher, fake driver; stdout/stderr in $t/TAG.{out,err}, status $rc,
# the fake driver's own counts in $t/TAG.drv, the shim's in $t/TAG.shim.
run_vecadd() {
  local tag=$1; shift
  FAKE_CUDA_COUNTS="$t/$tag.drv" "$cushim" run --fake --counts="$t/$tag.shim" "$@" \
    >"$t/$tag.out" 2>"$t/$tag.err"
  rc=$?
}
for mode in preload dropin; do
  m=""
  [ $mode = dropin ] && m=--dropin

  # Counting: a selector union (',' escaped in CUSHIM_PLUGINS), report to a file; equal to the shim's counts.
  run_vecadd cc-$mode $m "--plugin=$t/c/callcount.so:select=cuLaunchKernel\\,base:cuMemAlloc,output=$t/cc-$mode.txt" \
    -- "$vecadd" 1000
  if [ $rc -eq 0 ] && [ -f "$t/cc-$mode.txt" ]; then
    got=$(grep -v '^callcount: pid' "$t/cc-$mode.txt" | sed 's/^callcount: //' | sort)
    want=$(grep -E '^(cuLaunchKernel|cuMemAlloc_v2)	' "$t/cc-$mode.shim" | tr '\t' ' ' | sort)
    if [ -n "$want" ] && [ "$got" = "$want" ] && grep -q '^cuMemAlloc_v2 3$' <<<"$got"; then
      ok "$mode: callcount counted the selected APIs exactly as the shim did ($(tr "\n" " " <<<"$got"))"
    else fail "$mode: callcount report '$got', shim counts '$want'"; fi
  else fail "$mode: callcount run rc $rc: $(head -c 400 "$t/cc-$mode.err")"; fi

  # fork_child: the child's counters restart at zero and it reports to OUTPUT.<pid>; the parent keeps its own.
  # (Python's fork() then sys.exit: the child exits normally, so its flush runs.)
  rm -f "$t/fork-$mode.txt"*
  py=python3
  [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # not a version manager's shim script: fewer processes
  "$cushim" run --fake $m "--plugin=$t/c/callcount.so:select=cuInit,output=$t/fork-$mode.txt" \
    -- "$py" -c '
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuInit(0)
pid = os.fork()
if pid == 0:
    cuda.cuInit(0); cuda.cuInit(0)
    print(os.getpid())
    sys.exit(0)
sys.exit(os.waitpid(pid, 0)[1] != 0)' >"$t/fork-$mode.out" 2>"$t/fork-$mode.err"
  rc=$?
  child=$(cat "$t/fork-$mode.out")
  files=("$t/fork-$mode.txt"*)
  if [ $rc -eq 0 ] && [ -n "$child" ] && grep -qx 'callcount: cuInit 1' "$t/fork-$mode.txt" \
     && grep -qx 'callcount: cuInit 2' "$t/fork-$mode.txt.$child" \
     && [ ${#files[@]} = 2 ]; then
    ok "$mode: callcount's fork_child: parent 1 cuInit, child 2 in its own file"
  else fail "$mode: fork: rc $rc, child '$child', files: ${files[*]} $(head -c 300 "$t/fork-$mode.err")"; fi

  # Denying, by shipped name: the call never reaches the driver, vecadd sees CUDA_ERROR_NOT_PERMITTED.
  run_vecadd deny-$mode $m --plugin=callcount:deny=cuStreamCreate -- "$vecadd" 1000
  if [ $rc -ne 0 ] && grep -q 'cuStreamCreate(.*) failed: CUDA_ERROR_NOT_PERMITTED' "$t/deny-$mode.err" \
     && grep -q '^callcount: pid [0-9]*: [0-9]* calls of [0-9]* APIs, 1 denied$' "$t/deny-$mode.err" \
     && ! grep -q '^cuStreamCreate' "$t/deny-$mode.drv" && grep -q '^cuStreamCreate	1$' "$t/deny-$mode.shim"; then
    ok "$mode: callcount deny=cuStreamCreate: CUDA_ERROR_NOT_PERMITTED, the driver never saw the call"
  else fail "$mode: deny: rc $rc: $(head -c 400 "$t/deny-$mode.err")"; fi

  # The pkg-config build, with an explicit error.
  run_vecadd deny2-$mode $m "--plugin=$t/pc/callcount.so:deny=cuMemcpyHtoD,error=CUDA_ERROR_INVALID_VALUE" \
    -- "$vecadd" 1000
  if [ $rc -ne 0 ] && grep -q 'cuMemcpyHtoD(.*) failed: CUDA_ERROR_INVALID_VALUE' "$t/deny2-$mode.err"; then
    ok "$mode: pkg-config-built callcount with error=CUDA_ERROR_INVALID_VALUE"
  else fail "$mode: pkg-config callcount: rc $rc: $(head -c 400 "$t/deny2-$mode.err")"; fi

  # memcap (C++): 4 MiB allocations over a 1 MiB cap fail with out-of-memory; under an 8 MiB cap they pass.
  run_vecadd cap-$mode $m "--plugin=$t/cpp/memcap.so:max_bytes=1M" -- "$vecadd"
  if [ $rc -ne 0 ] && grep -q 'cuMemAlloc(.*) failed: CUDA_ERROR_OUT_OF_MEMORY' "$t/cap-$mode.err" \
     && grep -q '^memcap: cuMemAlloc_v2 calls=1 bytes=0 denied=1$' "$t/cap-$mode.err"; then
    ok "$mode: memcap max_bytes=1M denies vecadd's 4 MiB cuMemAlloc"
  else fail "$mode: memcap 1M: rc $rc: $(head -c 400 "$t/cap-$mode.err")"; fi
  # slow_ms=0.000001 (1 ns): every allocation is "slow", so each is timed (pre's slot read back in post) and logged.
  run_vecadd cap8-$mode $m "--plugin=$t/pc/memcap.so:max_bytes=8MiB,slow_ms=0.000001" -- "$vecadd"
  if [ $rc -eq 0 ] && grep -q '^memcap: cuMemAlloc_v2 calls=3 bytes=12582912 denied=0$' "$t/cap8-$mode.err" \
     && [ "$(grep -c '^cushim\[[0-9]*\] warn: memcap: cuMemAlloc_v2 took [0-9.]* ms$' "$t/cap8-$mode.err")" = 3 ]; then
    ok "$mode: memcap max_bytes=8MiB lets vecadd's three 4 MiB allocations through, sums and times them"
  else fail "$mode: memcap 8MiB: rc $rc: $(head -c 400 "$t/cap8-$mode.err")"; fi

  # A plugin whose init fails (no API of 'select' has the size parameter): every CUDA call fails (fail
  # closed) unless the spec is optional ('?').
  run_vecadd closed-$mode $m "--plugin=$t/cpp/memcap.so:select=cuInit" -- "$vecadd" 1000
  if [ $rc -ne 0 ] && grep -q 'vecadd: cuInit(0) failed' "$t/closed-$mode.err" \
     && ! grep -q '^cuInit' "$t/closed-$mode.drv" 2>/dev/null; then
    ok "$mode: a plugin failing init makes the shim fail closed"
  else fail "$mode: fail closed: rc $rc: $(head -c 400 "$t/closed-$mode.err")"; fi
  run_vecadd open-$mode $m "--plugin=?$t/cpp/memcap.so:select=cuInit" -- "$vecadd" 1000
  [ $rc -eq 0 ] && ok "$mode: the same plugin marked optional fails open" \
    || fail "$mode: optional: rc $rc: $(head -c 400 "$t/open-$mode.err")"
done

# Without the launcher, as the guide shows: LD_PRELOAD and CUSHIM_PLUGINS by hand.
env LD_PRELOAD="$p/$libdir/libcushim.so" LD_LIBRARY_PATH="$p/$libdir/cushim/fake" \
    CUSHIM_PLUGINS="callcount:select=cuLaunchKernel" "$vecadd" 1000 >"$t/raw.out" 2>"$t/raw.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^callcount: cuLaunchKernel 1$' "$t/raw.err" && ok "raw CUSHIM_PLUGINS with LD_PRELOAD" \
  || fail "raw CUSHIM_PLUGINS: rc $rc: $(head -c 400 "$t/raw.err")"

[ $failures -eq 0 ] && { echo "sdk_examples: all checks passed"; exit 0; }
echo "sdk_examples: $failures check(s) failed"
exit 1
