#!/usr/bin/env bash
# bench/cpu/ablate.sh - what each part of recording a call costs on this CPU: builds copies of the trace
# plugin with one part left out of the hook of read-only queries such as the benchmark's cuDriverGetVersion
# (bench/cpu/trace_ablate.c, a bench-only copy of plugins/trace/tr_query.c with TR_ABLATE blocks, that a build
# configured with -DCUSHIM_TRACE_ABLATE=N puts in its place; the product has no such switch): 1 hookonly = it
# runs and returns at once, 2 clockonly = it reads the exit clock and writes nothing, 3 noclock = it writes the
# record without reading the exit clock, 4 pad64 = it runs 4 KiB of no-ops first: 64 more code lines a call,
# what a line costs; 2 and 3 have the hook read the exit clock itself (tr_query_core_clock 0), as the plugin
# did before the core read it for an unpaused plugin (trace.c exit_by_core). It then runs bench/cpu/cold.sh
# with them beside the shim without hooks, with empty hooks (untimed, timed, a timed post hook alone) and the
# real plugin, interleaved.
#
# USAGE: bash bench/cpu/ablate.sh [BUILD_DIR]     (BUILD_DIR holds a Release build: tools/build-gpu-bundle.sh)
#   BUILD_ONLY=1: build the copies and stop (on the development machine, before a device run carries them)
#   ROUNDS, ITERS, RUNS, COLD as for cold.sh (default COLD=0: the hot loop)
# The copies go to BUILD_DIR/ablate/<name>/plugins/trace.so, each with the shim beside it (runtime/libcushim.so):
# a directory tests/gpu's traceab takes as TRACE_AB_BASE (the step with that copy against the build's).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
names=(hookonly clockonly noclock pad64)
extra=""
for i in 0 1 2 3; do
  d=$BUILD/ablate/${names[$i]}
  if [ ! -e "$d/plugins/trace.so" ] || [ "${BUILD_ONLY:-0}" = 1 ]; then
    cmake -S . -B "$d" -DCUSHIM_BUILD_CODEGEN=OFF -DCUSHIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUSHIM_TRACE_ABLATE=$((i + 1)) >/dev/null
    cmake --build "$d" --target trace cushim -j "$(nproc)" >/dev/null   # the shim too: a TRACE_AB_BASE
  fi
  extra+="${names[$i]}=$PWD/$d/plugins/trace.so "
done
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0
EXTRA="$extra" CONFIGS="${CONFIGS:-direct shim hook hooktime posttime trace}" COLD=${COLD:-0} bash bench/cpu/cold.sh "$BUILD"
