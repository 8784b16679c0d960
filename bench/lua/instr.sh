#!/usr/bin/env bash
# instr.sh - instructions per hooked call of cuCtxGetCurrent, counted by valgrind (docs/benchmarks.md,
# "Lua policies"): the figure that does not depend on the machine's load or clock.
#
# USAGE: bench/lua/instr.sh [build dir]            (default ./build)
#   env: N1, N2 (the two call counts, default 2000 and 12000), LUALIB (a liblua5.4.so.0 to load instead of
#   the system's: one built with symbols lets callgrind_annotate name Lua's own functions),
#   KEEP=DIR (keep the callgrind profiles of the N2 runs in DIR, for callgrind_annotate),
#   PLUGIN (another build's lua.so, e.g. of an older commit, with this build's shim and program),
#   POLICY (another policy on cuCtxGetCurrent instead of bench/lua/policy.lua).
#
# The benchmark program (cushim_bench_lua percall) is run under callgrind twice per mode, with N1 and N2
# calls; the difference of the total instruction counts divided by N2 - N1 is the cost of one call, with
# everything done once (loading, the Lua states, the warm-up) cancelled out. Modes: no hook at all, the empty
# C pre+post hook, and the lua plugin running bench/lua/policy.lua (run.sh's pair). The counts are those of
# this machine's compiler and libc and of the liblua the plugin loads; they vary by a few instructions
# between runs (the warm-up's allocations), not with load.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$BUILD/bench/lua/cushim_bench_lua"
SHIM="$BUILD/runtime/libcushim.so"
PLUGIN=${PLUGIN:-$BUILD/plugins/lua.so}
N1=${N1:-2000}
N2=${N2:-12000}
command -v valgrind >/dev/null || { echo "instr.sh: valgrind is not installed" >&2; exit 1; }
for f in "$BENCH" "$SHIM" "$PLUGIN"; do [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }; done
[ "$N2" -gt "$N1" ] || { echo "instr.sh: N2 must be larger than N1" >&2; exit 2; }
export LD_LIBRARY_PATH="$BUILD/tests/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
POLICY=$(cd "$(dirname "${POLICY:-$HERE/policy.lua}")" && pwd)/$(basename "${POLICY:-policy.lua}")
LUA="$PLUGIN:script=$POLICY,reload=false${LUALIB:+,lualib=$LUALIB}"

# count MODE N [plugins]: the total instructions of one run
count() {
    local out=/dev/null
    [ -n "${KEEP:-}" ] && [ "$2" = "$N2" ] && out="$KEEP/callgrind.$1"
    env LD_PRELOAD="$SHIM" ${3:+CUSHIM_PLUGINS="$3"} valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$BENCH" "$( [ "$1" = c ] && echo c || echo none)" percall "$2" 1 2>&1 >/dev/null |
        awk '/Collected :/ {print $NF}'
}
# percall MODE [plugins]: instructions per call
percall() {
    local a b
    a=$(count "$1" "$N1" "${2:-}")
    b=$(count "$1" "$N2" "${2:-}")
    [ -n "$a" ] && [ -n "$b" ] || { echo "instr.sh: no count from valgrind for mode $1" >&2; exit 1; }
    awk -v a="$a" -v b="$b" -v n="$((N2 - N1))" 'BEGIN {printf "%.0f", (b - a) / n}'
}
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP"
none=$(percall none)
c=$(percall c)
lua=$(percall lua "$LUA")
echo "| cuCtxGetCurrent, one thread | instructions per call (callgrind, ($N2 - $N1) calls) |"
echo "| --- | ---: |"
echo "| no hook | $none |"
echo "| empty C pre+post hook | $c |"
echo "| Lua ($(basename "$POLICY")) | $lua |"
echo "| Lua minus C (the Lua hook's own work) | $((lua - c)) |"
echo
echo "policy: $POLICY; plugin: $PLUGIN; liblua: ${LUALIB:-liblua5.4.so.0 of the system}; $(valgrind --version); $(uname -m)"
