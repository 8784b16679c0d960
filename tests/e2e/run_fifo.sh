#!/bin/sh
# run_fifo.sh CASE VECADD DROPIN_DIR LUA TRACE INFO STATS LAUNCHER LUA_EXAMPLES
# Nothing blocks on a file (issue 42): a FIFO where the shim, a plugin or a tool expects a file is refused with
# one line, at once. Opening a FIFO waits for the other end (dlopen of one, for a writer; an open for writing,
# for a reader), and no one ever comes: each case ran until 'timeout 10' killed it before the fix. ctest sets
# LD_PRELOAD (the shim, after a sanitizer runtime) and LD_LIBRARY_PATH (the fake driver); LUA and TRACE are
# empty where the plugin is not built (the case is skipped, 77). Each run must end in under 5 s.
#   plugin    CUSHIM_PLUGINS names a FIFO (optional: the program runs; required: it fails closed)
#   info      cushim-info plugins FIFO, by path and as a shipped name; 'cushim plugins ./FIFO' (the launcher)
#   lualib    the lua plugin's lualib=FIFO
#   report    the lua plugin's report=FIFO
#   summary   the trace plugin's summary_file=FIFO (opened at exit)
#   cupti     the trace plugin's cupti=FIFO (gpu=1; skipped where the build has no CUPTI headers)
#   logfile   CUSHIM_LOG_FILE=FIFO (cushim run --log-file=)
#   counts    CUSHIM_COUNTS: the <path>.<pid> of a second process of the run is a FIFO
#   realdrv   drop-in mode, CUSHIM_REAL_LIBCUDA=FIFO: the driver search goes on and finds the fake
#   stats     cushim stats FIFO; cushim stats --close FILE FIFO
set -u
case_=$1 vecadd=$2 dropin=$3 lua=$4 trace=$5 info=$6 stats=$7 launcher=$8 luaex=$9
# the shim (and a sanitizer runtime before it) for the programs only, not for sh and the tools
preload=${LD_PRELOAD-}
unset LD_PRELOAD
shim=${preload##*:}
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/fifo.$case_
rm -rf "$dir"
mkdir -p "$dir" || exit 1
cd "$dir" || exit 1
mkfifo fifo fifo.so || { echo "mkfifo failed"; exit 1; }
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null' EXIT

fail() {
    echo "FAIL [$case_]: $*"
    [ -f err ] && sed 's/^/  err: /' err | head -n 30
    exit 1
}
# to RC CMD...: CMD under 'timeout 10', stdout+stderr in 'err'; fails when it hung, took 5 s or more, or exited
# with another status than RC ('any': whatever it is, as long as it ended by itself)
to() {
    want=$1
    shift
    t0=$(date +%s)
    timeout -k 2 10 "$@" >err 2>&1
    rc=$?
    t=$(($(date +%s) - t0))
    case $rc in 124 | 137) fail "hung on the FIFO (killed by 'timeout 10'): $*" ;; esac
    [ "$t" -lt 5 ] || fail "took $t s: $*"
    [ "$want" = any ] || [ "$rc" = "$want" ] || fail "exit status $rc, expected $want: $*"
}
# said LINE: 'err' has LINE exactly once
said() {
    n=$(grep -cF -- "$1" err)
    [ "$n" = 1 ] || fail "'$1' said $n times, expected once"
}
# prog RC VAR=VALUE...: vecadd with the shim and these variables, under to()
prog() {
    want_=$1
    shift
    to "$want_" env LD_PRELOAD="$preload" "$@" "$vecadd" 1024
}
need() { [ -n "$1" ] || { echo "the $2 plugin is not built"; exit 77; }; }
notreg="is not a regular file (a FIFO, device, socket or directory)"

case $case_ in
plugin)
    prog 0 CUSHIM_PLUGINS="?$dir/fifo.so"
    said "plugin 'fifo.so': '$dir/fifo.so' $notreg (optional: the others keep working)"
    prog any CUSHIM_PLUGINS="$dir/fifo.so"
    [ "$rc" != 0 ] || fail "a required plugin that is a FIFO: the program ran as if it were loaded"
    said "plugin 'fifo.so': '$dir/fifo.so' $notreg; failing closed"
    ;;
info)
    to 1 "$info" plugins "$dir/fifo.so"
    said "cushim-info: $dir/fifo.so: cannot load: '$dir/fifo.so' $notreg"
    to 1 "$info" plugins --dir "$dir" fifo
    said "'$dir/fifo.so' $notreg"
    to 1 "$info" plugins --dir "$dir"
    said "'$dir/fifo.so' $notreg"
    to 1 env CUSHIM_LIB="$shim" bash "$launcher" plugins ./fifo.so
    said "'./fifo.so' $notreg"
    ;;
lualib)
    need "$lua" lua
    prog 0 CUSHIM_PLUGINS="?$lua:script=$luaex/deny.lua,lualib=$dir/fifo.so"
    said "cannot load lualib=$dir/fifo.so: '$dir/fifo.so' $notreg"
    ;;
report)
    need "$lua" lua
    prog 0 CUSHIM_PLUGINS="?$lua:script=$luaex/deny.lua,report=$dir/fifo"
    said "report=$dir/fifo: not a regular file (a FIFO, device, socket or directory)"
    ;;
summary)
    need "$trace" trace
    prog 0 CUSHIM_PLUGINS="$trace:file=$dir/t.json,summary_file=$dir/fifo"
    said "cannot open the summary file '$dir/fifo': not a regular file (a FIFO, device, socket or directory)"
    grep -q "cuLaunchKernel" err || fail "the table is not on stderr"
    ;;
cupti)
    need "$trace" trace
    prog 0 CUSHIM_PLUGINS="?$trace:file=$dir/t.json,gpu=1,cupti=$dir/fifo.so"
    if grep -q "this build has no CUPTI headers" err; then echo "built without CUPTI headers"; exit 77; fi
    said "warn: trace: GPU tracing is off: cannot load CUPTI ($dir/fifo.so): '$dir/fifo.so' $notreg"
    ;;
logfile)
    prog 0 CUSHIM_LOG_FILE="$dir/fifo" CUSHIM_LOG=info
    said "CUSHIM_LOG_FILE=\"$dir/fifo\": not a regular file (a FIFO, device, socket or directory); logging to stderr"
    grep -q "info: real driver" err || fail "the log is not on stderr"
    ;;
counts)
    # a process of the run that never counts holds it open; the first vecadd writes c.tsv, the second (the
    # pid of its shell, kept through exec) c.tsv.<pid>: a FIFO
    env LD_PRELOAD="$preload" CUSHIM_COUNTS="$dir/c.tsv" sleep 30 &
    holder=$!
    # the holder must have opened the file first: one that started after vecadd's exit would be the first of a
    # new run and truncate what vecadd wrote (the test failed so, now and then, under load)
    i=0
    until ls -l "/proc/$holder/fd" 2>/dev/null | grep -q "$dir/c.tsv"; do
        i=$((i + 1)); [ $i -lt 250 ] || fail "the holder never opened $dir/c.tsv"; sleep 0.02
    done
    prog 0 CUSHIM_COUNTS="$dir/c.tsv"
    [ -s c.tsv ] || fail "the first process wrote no c.tsv"
    # shellcheck disable=SC2016
    to 0 sh -c 'mkfifo c.tsv.$$ && exec env LD_PRELOAD="$1" CUSHIM_COUNTS="$2" "$3" 1024' sh "$preload" \
        "$dir/c.tsv" "$vecadd"
    said "cannot write call counts to $dir/c.tsv."
    said "not a regular file (a FIFO, device, socket or directory)"
    ;;
realdrv)
    # drop-in mode: no preload; the drop-in first on the path, the fake after it (run_dropin.sh)
    to 0 env LD_PRELOAD="${preload%"$shim"}" LD_LIBRARY_PATH="$dropin:${LD_LIBRARY_PATH-}" \
        CUSHIM_REAL_LIBCUDA="$dir/fifo.so" "$vecadd" 1024
    said "'$dir/fifo.so' $notreg: not tried as the real driver"
    ;;
stats)
    printf '{"traceEvents":[\n' > cut.json
    to 1 "$stats" fifo
    said "cushim stats: fifo: not a regular file (a FIFO, device, socket or directory)"
    to 1 "$stats" --close cut.json fifo
    said "cushim stats: --close: fifo: not a regular file (a FIFO, device, socket or directory)"
    [ -p fifo ] || fail "--close removed or replaced the FIFO"
    ;;
*)
    echo "unknown case $case_"
    exit 2
    ;;
esac
echo "ok [$case_]"
