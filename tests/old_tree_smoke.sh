#!/usr/bin/env bash
# old_tree_smoke.sh - a shim built from generated/cuda-11.8 (no fakes of CUDA 11's API: tools/test.sh builds it
# with tests off) in front of the main build's fake driver, which answers every 11.8 driver call. Checks what
# a CUDA 11 user relies on beyond compiling (docs/generator.md, "An earlier release"):
#   - its runtime exports carry CUDA 11's version node (cudaMalloc@@libcudart.so.11.0);
#   - the trace plugin records build/examples/vecadd and names its launch 'vecadd' although the 11.8 headers
#     predate cuFuncGetName (it asks the driver's cuGetProcAddress);
#   - memlimit refuses an allocation past its limit with the driver's own error, and NVML's memory queries
#     (the fake libnvidia-ml.so.1, through dlsym: the 11.8 tree interposes NVML) report its quota;
#   - the shipped launches.lua runs (its name queries are not in this build: the handle stands for the name).
# USAGE: bash tests/old_tree_smoke.sh OLD_BUILD MAIN_BUILD
set -u
old=$(cd "$1" && pwd) main=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "old_tree_smoke: FAIL $*"; fails=$((fails + 1)); }
run() {   # run PLUGINS: vecadd under the old shim, output in $tmp/out, status in $rc
  LD_LIBRARY_PATH="$main/tests/fake" LD_PRELOAD="$old/runtime/libcushim.so" CUSHIM_PLUGINS="$1" CUSHIM_LOG=warn \
    timeout 60 "$main/examples/vecadd" >"$tmp/out" 2>&1
  rc=$?
}
# (grep -c reads all of objdump's output: grep -q would close the pipe early, a failure under pipefail)
[ "$(objdump -T "$old/runtime/libcushim.so" | grep -c ' libcudart\.so\.11\.0 *cudaMalloc$')" = 1 ] ||
  fail "cudaMalloc is not exported as cudaMalloc@@libcudart.so.11.0"
run "$old/plugins/trace.so:file=$tmp/t.json,summary=0"
[ $rc -eq 0 ] || fail "vecadd traced: rc $rc: $(tail -n 2 "$tmp/out")"
python3 - "$tmp/t.json" <<'PY' || fail "the trace: see above"
import json, sys
d = json.load(open(sys.argv[1]))
launches = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("name") == "cuLaunchKernel"]
names = [e["args"].get("kernel") for e in launches]
if names != ["vecadd"]:
    sys.exit("old_tree_smoke: the trace's launches name %r, expected ['vecadd']" % names)
PY
run "$old/plugins/memlimit.so:limit=1MiB"
[ $rc -ne 0 ] && grep -q 'CUDA_ERROR_OUT_OF_MEMORY' "$tmp/out" ||
  fail "memlimit limit=1MiB: rc $rc, no out-of-memory error: $(tail -n 2 "$tmp/out")"
LD_LIBRARY_PATH="$main/tests/fake" LD_PRELOAD="$old/runtime/libcushim.so" FAKE_CUDA_DEVICES=2 CUSHIM_LOG=warn \
  CUSHIM_PLUGINS="$old/plugins/memlimit.so:limit=1GiB" timeout 60 "$main/tests/e2e/e2e_memlimit" nvml 1073741824 \
  1073741824 0 >"$tmp/out" 2>&1 || fail "memlimit's quota in NVML: $(grep FAIL "$tmp/out" | head -n 2)"
run "$old/plugins/lua.so:script=$src/plugins/lua/examples/launches.lua"
[ $rc -eq 0 ] && grep -q "^launches	1	total" "$tmp/out" && grep -q "^launches	1	<function 0x" "$tmp/out" ||
  fail "launches.lua: rc $rc: $(tail -n 3 "$tmp/out")"
[ $fails -eq 0 ] && echo "old_tree_smoke: the 11.8 shim and its plugins work in front of the fake driver"
exit $((fails > 0))
