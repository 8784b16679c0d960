#!/usr/bin/env bash
# libs.sh - the no-hook cost of a library call through the shim, in instructions (callgrind), against the fake
# NVML of the test suite: bench/gpu/bench_libs.c's loop (nvmlDeviceGetCount_v2), direct and with the shim
# preloaded, each at two call counts; the difference of the two runs over the difference of calls is the
# per-call count, start-up excluded. Instruction counts are stable on a shared machine, unlike ns (issue 7:
# "within 2 ns of direct"; the GPU check 'universal bench' measures ns on the real libraries).
#
# USAGE: bench/cpu/libs.sh [build dir]   (default ./build; needs valgrind, gcc, the fake libraries)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHIM=$BUILD/runtime/libcushim.so
FAKE=$BUILD/tests/fake
[ -e "$SHIM" ] && [ -e "$FAKE/libnvidia-ml.so.1" ] || { echo "missing $SHIM or $FAKE/libnvidia-ml.so.1" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
gcc -O2 -o "$TMP/bench_libs" "$ROOT/bench/gpu/bench_libs.c" -ldl
N1=${N1:-100000} N2=${N2:-200000}
irefs() {   # irefs N [preload]: the program's total instructions for 7 rounds of N calls and one of warm-up
    env LD_LIBRARY_PATH="$FAKE" ${2:+LD_PRELOAD="$2"} CUSHIM_LOG=error valgrind --tool=callgrind \
        --callgrind-out-file="$TMP/cg" "$TMP/bench_libs" nvml "$1" 2>&1 >/dev/null |
        sed -n 's/.*I *refs: *//p' | tr -d ,
}
d1=$(irefs "$N1") d2=$(irefs "$N2") s1=$(irefs "$N1" "$SHIM") s2=$(irefs "$N2" "$SHIM")
awk -v d1="$d1" -v d2="$d2" -v s1="$s1" -v s2="$s2" -v n1="$N1" -v n2="$N2" 'BEGIN {
    d = (d2 - d1) / (8 * (n2 - n1)); s = (s2 - s1) / (8 * (n2 - n1));
    print "| path (fake NVML, nvmlDeviceGetCount_v2) | instructions / call |"
    print "| --- | ---: |"
    printf "| direct | %.2f |\n| through the shim, no hook | %.2f |\n| difference | **%+.2f** |\n", d, s, s - d }'
