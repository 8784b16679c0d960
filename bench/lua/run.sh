#!/usr/bin/env bash
# run.sh - the Lua policy benchmark (docs/benchmarks.md, "Lua policies").
#
# USAGE: bench/lua/run.sh [build dir] [max threads]      (default ./build, 16)
#
# 1. Per-call cost on one thread of cuCtxGetCurrent with (c) an empty C pre+post hook and (lua) the lua
#    plugin running bench/lua/policy.lua (a before and an after hook, the after one reading a parameter),
#    ROUNDS interleaved rounds of each in the same run; the table gives the medians and the difference.
# 2. Thread scaling: 1, 2, 4, ... max threads calling the Lua-hooked cuCtxGetCurrent; calls per second
#    and the speedup over one thread; the same with the empty C hook (4x the calls) beside it (SCALE=0:
#    only part 1).
# The driver: the fake one of the build when LD_LIBRARY_PATH does not already give a libcuda.so.1 (on a
# GPU machine set BENCH_REAL=1 to use the real driver found by the loader).
# env: ROUNDS, ITERS, SITERS (above); POLICY (default policy.lua; policy_before.lua reads the output in the
# before hook, where the driver has not written it: through cushim_read_mem); PLUGIN (the lua.so measured,
# default the build's); PLUGIN_B (a second
# lua.so, e.g. an older commit's build, measured in the same interleaved rounds: a before/after row).
# Instruction counts, which do not depend on the machine's load: bench/lua/instr.sh.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
MAXT=${2:-16}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$BUILD/bench/lua/cushim_bench_lua"
SHIM="$BUILD/runtime/libcushim.so"
PLUGIN=${PLUGIN:-$BUILD/plugins/lua.so}
PLUGIN_B=${PLUGIN_B:-}
ROUNDS=${ROUNDS:-7}
ITERS=${ITERS:-200000}
SITERS=${SITERS:-1000000}
for f in "$BENCH" "$SHIM" "$PLUGIN"; do [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }; done
[ "${BENCH_REAL:-0}" = 1 ] || export LD_LIBRARY_PATH="$BUILD/tests/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
POLICY=${POLICY:-$HERE/policy.lua}
LUA="$PLUGIN:script=$POLICY,reload=false"
LUA_B="$PLUGIN_B:script=$POLICY,reload=false"
TMPF=$(mktemp)
trap 'rm -f "$TMPF" "$TMPF".*' EXIT
c=() l=() b=()
for r in $(seq "$ROUNDS"); do
  c+=("$(LD_PRELOAD=$SHIM "$BENCH" c percall "$ITERS" 5 | awk '{print $3}')")
  l+=("$(LD_PRELOAD=$SHIM CUSHIM_PLUGINS="$LUA" "$BENCH" none percall "$ITERS" 5 | awk '{print $3}')")
  [ -z "$PLUGIN_B" ] ||
    b+=("$(LD_PRELOAD=$SHIM CUSHIM_PLUGINS="$LUA_B" "$BENCH" none percall "$ITERS" 5 | awk '{print $3}')")
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else if (NR) print (a[NR/2]+a[NR/2+1])/2}'; }
spread() { printf '%s\n' "$@" | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {print lo "-" hi}'; }
mc=$(med "${c[@]}") ml=$(med "${l[@]}")
echo "| hook on cuCtxGetCurrent | median ns/call ($ROUNDS interleaved rounds, each the median of 5 x $ITERS)" \
     "| rounds' min-max |"
echo "| --- | ---: | ---: |"
echo "| empty C pre+post | $mc | $(spread "${c[@]}") |"
echo "| Lua before+after, reads one parameter | $ml | $(spread "${l[@]}") |"
echo "| difference (the Lua hook's cost) | $(awk -v a="$ml" -v b="$mc" 'BEGIN{printf "%.1f", a-b}') | |"
if [ -n "$PLUGIN_B" ]; then
  mb=$(med "${b[@]}")
  echo "| Lua, PLUGIN_B ($PLUGIN_B) | $mb | $(spread "${b[@]}") |"
  echo "| difference, PLUGIN_B | $(awk -v a="$mb" -v b="$mc" 'BEGIN{printf "%.1f", a-b}') | |"
fi
echo
[ "${SCALE:-1}" = 0 ] && exit 0
# the empty C hook's scaling beside it: what the host's hooked path alone allows on this machine
LD_PRELOAD=$SHIM CUSHIM_PLUGINS="$LUA" "$BENCH" none scale "$MAXT" "$SITERS" >"$TMPF.lua"
LD_PRELOAD=$SHIM "$BENCH" c scale "$MAXT" "$((SITERS * 4))" >"$TMPF.c"
echo "| threads | calls/s (Lua hook) | speedup | calls/s (empty C hook) | speedup |"
echo "| ---: | ---: | ---: | ---: | ---: |"
paste -d' ' "$TMPF.lua" "$TMPF.c" | awk '{printf "| %s | %s | %s | %s | %s |\n", $4, $6, $8, $14, $16}'
echo
echo "cores: $(nproc); $(uname -m); driver: ${BENCH_REAL:+real}${BENCH_REAL:-fake}"
