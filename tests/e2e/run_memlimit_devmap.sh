#!/bin/sh
# run_memlimit_devmap.sh PROGRAM PLUGIN: per-device quotas and a shared budget under reordered
# CUDA_VISIBLE_DEVICES (HAMi-core #319, #225): limits are given by physical device (0:8MiB,1:4MiB,2:2MiB on the
# fake's three devices), and the budget's figures are the physical device's, whatever order a process sees the
# GPUs in. A holder that sees them in order holds 3 MiB on physical 0; a process with CUDA_VISIBLE_DEVICES=1,0
# must see its ordinal 0 as physical 1 (4 MiB, all free) and its ordinal 1 as physical 0 (8 MiB, 5 free), and
# one with 2,0 ordinal 0 as physical 2 (2 MiB); then a holder with 2,0 holds 1 MiB on its ordinal 0 (physical 2)
# and a process with 0,2 sees it on its ordinal 1. The same with HAMi's CUDA_DEVICE_MEMORY_LIMIT_<i> and
# CUDA_DEVICE_MEMORY_SHARED_CACHE. ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes).
set -u
prog=$1 plugin=$2
# the shim (and, in the sanitizer stage, its runtime) only for the program: the tools run plain
preload=${LD_PRELOAD:-}
unset LD_PRELOAD
out=${E2E_OUT:-${TMPDIR:-/tmp}}/memlimit-devmap.$$
region=$out.region
M=1048576
fail() { echo "FAIL: $*"; for f in "$out".*; do [ -f "$f" ] && sed "s|^|  $f: |" "$f"; done; exit 1; }
pids=
trap 'for p in $pids; do kill -KILL $p 2>/dev/null; done; rm -f "$out".* "$region"' EXIT
export FAKE_CUDA_DEVICES=3 CUSHIM_LOG=warn
# hold NAME VISIBLE BYTES: a holder of the budget with CUDA_VISIBLE_DEVICES=VISIBLE ('' unset), BYTES on its ordinal 0
hold() {
    if [ -n "$2" ]; then
        CUDA_VISIBLE_DEVICES=$2 LD_PRELOAD=$preload "$prog" hold $((8 * M)) "$3" >"$out.$1" 2>&1 &
    else
        LD_PRELOAD=$preload "$prog" hold $((8 * M)) "$3" >"$out.$1" 2>&1 &
    fi
    pids="$pids $!"
    i=0
    while ! grep -q held "$out.$1" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 500 ] || fail "holder $1 did not start"; sleep 0.02
    done
    grep -q FAIL "$out.$1" && fail "holder $1 could not allocate"
}
# check VISIBLE T0 F0 T1 F1
check() {
    CUDA_VISIBLE_DEVICES=$1 LD_PRELOAD=$preload "$prog" devmap "$2" "$3" "$4" "$5" >"$out.check" 2>&1 ||
        fail "CUDA_VISIBLE_DEVICES=$1: $(grep FAIL "$out.check" | head -n 3)"
    echo "CUDA_VISIBLE_DEVICES=$1: ordinal 0 total $(($2 / M)) MiB free $(($3 / M)) MiB, ordinal 1 total $(($4 / M)) MiB free $(($5 / M)) MiB"
}
for how in option hami; do
    rm -f "$region"
    if [ $how = option ]; then
        export CUSHIM_PLUGINS="$plugin:limit=0:8MiB\\,1:4MiB\\,2:2MiB,budget=$region"
    else
        unset CUSHIM_PLUGINS
        export CUDA_DEVICE_MEMORY_LIMIT_0=8m CUDA_DEVICE_MEMORY_LIMIT_1=4m CUDA_DEVICE_MEMORY_LIMIT_2=2m \
            CUDA_DEVICE_MEMORY_SHARED_CACHE=$region
    fi
    echo "== limits by $how"
    hold a "" $((3 * M))
    check 1,0 $((4 * M)) $((4 * M)) $((8 * M)) $((5 * M))
    check 2,0 $((2 * M)) $((2 * M)) $((8 * M)) $((5 * M))
    hold b 2,0 $M
    check 0,2 $((8 * M)) $((5 * M)) $((2 * M)) $M
    check 2,1 $((2 * M)) $M $((4 * M)) $((4 * M))
    for p in $pids; do kill -KILL $p 2>/dev/null; wait $p 2>/dev/null; done
    pids=
done
echo "PASS"
