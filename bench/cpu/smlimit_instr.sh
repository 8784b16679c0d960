#!/usr/bin/env bash
# smlimit_instr.sh - instructions of smlimit's launch pre hook (sml_pre and all it calls, on the launching
# thread) per cuLaunchKernel, against the fake driver's zero-length kernels: callgrind over gpubench_launch_fake
# at two launch counts, the difference over the extra launches (start-up cancels). The plugin runs at limit=99
# with a 10 s window (the limiter admits at once once it has measured a launch), in a group of its own; SPEC adds
# options (SPEC=,priority=high). Only the pre hook is counted: the post hook's cost varies by hundreds of
# instructions a launch between runs (the event free list, the poller's lock), which hides a change of a few.
# PLUGIN (default the build's smlimit.so) lets two builds of the plugin be compared against the same shim.
#
# USAGE: bench/cpu/smlimit_instr.sh [build dir] [smlimit.so]
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
PLUGIN=${2:-$BUILD/plugins/smlimit.so}
PROG=$BUILD/tests/e2e/gpubench_launch_fake
SHIM=$BUILD/runtime/libcushim.so
for f in "$PROG" "$SHIM" "$PLUGIN"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }
done
N1=${N1:-2000} N2=${N2:-4000} SPEC=${SPEC:-}
TMP=$(mktemp -d)
GRP=instr$$
trap 'rm -rf "$TMP"; rm -f /dev/shm/cushim-smlimit*-"$(id -u)-$GRP"' EXIT
export CUSHIM_LOG=error LD_LIBRARY_PATH=$BUILD/tests/fake
for n in "$N1" "$N2"; do
  env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$PLUGIN:limit=99,window_ms=10000,group=$GRP$SPEC" valgrind --tool=callgrind \
    --separate-threads=yes --toggle-collect=sml_pre --callgrind-out-file="$TMP/cg.$n" "$PROG" "$n" 1000 \
    >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
  sed -n 's/^summary: //p' "$TMP/cg.$n-01"
done | paste -sd' ' |
  # launch_bench.c launches N kernels in a loop and N more in bursts: 2 x (N2 - N1) launches added
  awk -v d=$((2 * (N2 - N1))) -v s="${SPEC:-none}" '{ printf "sml_pre: %.1f instructions per launch (options added: %s)\n", ($2 - $1) / d, s }'
