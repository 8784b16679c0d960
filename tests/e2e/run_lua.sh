#!/bin/sh
# run_lua.sh CASE PLUGIN PROGRAM EXAMPLES TESTDIR [EXTRA...]
# The lua plugin loaded by the shim through CUSHIM_PLUGINS, against the fake driver: PROGRAM is e2e_lua
# (one output line per step), EXAMPLES plugins/lua/examples, TESTDIR tests/e2e/lua (test policies).
# ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes). Each CASE checks the program's lines,
# the shim's log on stderr and, where a call was refused, that the fake driver never received it.
set -u
case_=$1 plugin=$2 prog=$3 ex=$4 td=$5
shift 5
out=${E2E_OUT:-${TMPDIR:-/tmp}}/lua.$case_
# two tests run the embed case (5.4 and 5.3), maybe at once: each its own files
[ "$case_" = embed ] && out=$out$(printf '%s' "${1:-}" | tr -dc 0-9)
rm -rf "$out".*
mkdir -p "$out.d"

fail() {
    echo "FAIL [$case_]: $*"
    for f in out err; do
        [ -f "$out.$f" ] && sed "s/^/  $f: /" "$out.$f" | head -n 60
    done
    exit 1
}
# run POLICY OPTIONS STEP... : the program with the lua plugin on POLICY (options appended)
run() {
    pol=$1 opts=$2
    shift 2
    CUSHIM_PLUGINS="$plugin:script=$pol${opts:+,$opts}" FAKE_CUDA_COUNTS="$out.drv" \
        "$prog" "$@" >"$out.out" 2>"$out.err"
    rc=$?
}
# the same under 'timeout': a policy that escapes its bounds hangs a call, the start or the exit; the test then
# fails after 10 s instead of hanging (KILL: a program stuck in an exit handler may never act on TERM). timeout
# itself runs without the shim: preloaded with the plugin, its own start would hang on a runaway top level.
trun() {
    pol=$1 opts=$2
    shift 2
    env -u LD_PRELOAD timeout -s KILL 10 env LD_PRELOAD="${LD_PRELOAD:-}" \
        CUSHIM_PLUGINS="$plugin:script=$pol${opts:+,$opts}" FAKE_CUDA_COUNTS="$out.drv" \
        "$prog" "$@" >"$out.out" 2>"$out.err"
    rc=$?
    [ "$rc" != 137 ] || fail "killed after 10 s: the policy got out of its bounds"
}
ok() { [ "$rc" = 0 ] || fail "the program exited with $rc"; }
line() { grep -qxF -- "$1" "$out.out" || fail "no output line '$1'"; }
err() { grep -qF -- "$1" "$out.err" || fail "stderr lacks '$1'"; }
noerr() { ! grep -qF -- "$1" "$out.err" || fail "stderr has '$1'"; }
nerr() { n=$(grep -cF -- "$1" "$out.err"); [ "$n" = "$2" ] || fail "stderr has '$1' $n times, expected $2"; }
fake_count() {
    got=$(awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$out.drv" 2>/dev/null)
    [ "${got:-0}" = "$2" ] || fail "the fake driver received $1 ${got:-0} times, expected $2"
}

case $case_ in
quota)
    run "$ex/quota.lua" "opt=limit=1000" init alloc 3 400 free alloc 2 400 free; ok
    line "alloc 0 0 2"                     # the third would pass 1000 bytes
    line "free 0 0"
    line "alloc 0 0"                       # freed memory counts again
    fake_count cuMemAlloc_v2 4             # the refused call never reached the driver
    ;;
deny)
    run "$ex/deny.lua" "opt=apis=cuCtxSynchronize+cudaMalloc" init sync 2 cudamalloc 1 64 alloc 1 64; ok
    line "sync 800 800"
    line "cudamalloc 800"
    line "alloc 0"
    fake_count cuCtxSynchronize 0
    fake_count cuMemAlloc_v2 1
    err "lua: cuCtxSynchronize denied by $ex/deny.lua"
    # a forked child keeps the policy
    run "$ex/deny.lua" "opt=apis=cuCtxSynchronize" init fork sync 1; ok
    line "child 800"
    line "fork 0"
    line "sync 800"
    ;;
slow)
    run "$ex/slow.lua" "opt=slow_ms=0,opt=select=cuCtxSynchronize" init sync 2 alloc 1 64; ok
    nerr "slow call: cuCtxSynchronize took" 2
    noerr "slow call: cuMemAlloc"
    run "$ex/slow.lua" "opt=slow_ms=100000" init sync 2; ok
    noerr "slow call"
    ;;
faults)
    run "$ex/faults.lua" "opt=select=cuMemAlloc,opt=every=3,opt=error=CUDA_ERROR_OUT_OF_MEMORY" init alloc 6 64; ok
    line "alloc 0 0 2 0 0 2"
    fake_count cuMemAlloc_v2 4
    err "faults: 6 calls, 2 failed on purpose"
    ;;
launches)
    run "$ex/launches.lua" "" init launch kernA 3 launch kernB 2 launch kernA 1; ok
    line "launch 0 0 0"
    grep -qxF "$(printf 'launches\t4\tkernA')" "$out.err" || fail "no 'launches 4 kernA' line"
    grep -qxF "$(printf 'launches\t2\tkernB')" "$out.err" || fail "no 'launches 2 kernB' line"
    grep -qxF "$(printf 'launches\t6\ttotal')" "$out.err" || fail "no total of 6"
    fake_count cuLaunchKernel 6            # the report agrees with what the driver received
    ;;
rewrite)
    run "$ex/rewrite.lua" "opt=x=1" init stream 0; ok
    line "stream 0 1"                      # the driver created it non-blocking
    CUSHIM_PLUGINS= "$prog" init stream 0 >"$out.out" 2>"$out.err"
    grep -qxF "stream 0 0" "$out.out" || fail "without the policy the stream is not blocking"
    ;;
api)
    FAKE_CUDA_MEM=65536 run "$td/api.lua" "opt=greeting=hello=world" init alloc 1 64 alloc 1 100 sync 1 count drv \
        cudamalloc 1 64; ok
    line "alloc 0"
    line "alloc 2"                         # bytesize changed by the before hook: the fake refused it
    fake_count cuMemAlloc_v2 3
    line "sync 719"                        # result overridden after the call
    line "count 0 42"                      # an output written by the policy
    line "drv 800 0"                       # skipped with an error given by number
    line "cudamalloc 0"
    for c in meta consts options generation parse_bytes on_errors state ids modified output readonly \
             real skip_kind unknown tostring readback late_decl stale selectors; do
        err "check $c ok"
    done
    noerr "failed"
    ;;
params)
    run "$td/params.lua" "" init alloc 2 64 free cudamalloc 1 128 attr 10 alloc 1 64; ok
    line "alloc 0 0"
    line "free 0 0"
    line "cudamalloc 0"
    line "attr 0 33"                       # the after hook's write through the output pointer
    for c in alloc.size alloc.runtime_name alloc.others alloc.meta1 alloc.meta2 alloc.out free.ptr \
             free.others rt.size rt.nested attr.before attr.after; do
        err "check $c ok"
    done
    noerr "failed"
    ;;
types)
    run "$td/types.lua" "" init attr 1 attr 10 launchex kernC 7; ok
    err "const 1 1 false"
    err "attrib CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"
    line "attr 0 32"                       # the policy asked for the warp size instead
    err "attrib CU_DEVICE_ATTRIBUTE_WARP_SIZE"
    line "launchex 0"
    err "config 7 1 32 0 CUlaunchConfig (struct view)"
    err "config readonly true"
    err "config unknown true"
    ;;
sandbox)
    run "$td/sandbox.lua" "" init; ok
    for c in os io debug require bytecode text print; do err "sandbox $c ok"; done
    err "printed from the policy"
    run "$td/sandbox.lua" "allow=os+io+debug+require+bytecode,opt=allow=os+io+debug+require+bytecode" init; ok
    for c in os io debug require cmodules bytecode text; do err "sandbox $c ok"; done
    run "$td/sandbox.lua" "allow=cmodules,opt=allow=require+cmodules" init; ok
    for c in require cmodules; do err "sandbox $c ok"; done
    noerr "FAIL"
    run "$td/sandbox.lua" "allow=sockets" init
    [ "$rc" = 0 ] && line "init 3"
    err "allow=: unknown word 'sockets'"
    ;;
syntax)
    printf 'cushim.before.cuInit = function(call)\n  return = 1\nend\n' >"$out.d/bad.lua"
    run "$out.d/bad.lua" "" init sync 1; ok
    err "$out.d/bad.lua:2:"               # file:line of the error
    line "init 3"                          # fail closed: the shim refuses every call
    run "$out.d/bad.lua" "fail=open,reload=false" init sync 1; ok
    err "$out.d/bad.lua:2:"
    line "init 0"
    line "sync 0"
    err "fail=open: calls pass"
    run "$out.d/missing.lua" "" init; ok
    err "cannot open the policy $out.d/missing.lua"
    line "init 3"
    # a selector that is not one: file:line of the declaration
    printf '\ncushim.before["cat:nosuch"] = function(call) end\n' >"$out.d/sel.lua"
    run "$out.d/sel.lua" "" init; ok
    err "$out.d/sel.lua:2: bad selector 'cat:nosuch'"
    line "init 3"
    # declarations that differ between the first run and a thread's run: that thread's calls fail closed
    printf 'if cushim.shared.add("runs") == 1 then cushim.before.cuCtxSynchronize = function(c) end end\n' \
        >"$out.d/decl.lua"
    run "$out.d/decl.lua" "" init sync 1 alloc 1 64; ok
    line "sync 999"
    err "declared other hooks than the first run"
    ;;
runtime)
    run "$td/errors.lua" "opt=mode=error" init sync 2 alloc 1 64; ok
    line "sync 999 999"                    # fail closed: CUDA_ERROR_UNKNOWN
    line "alloc 0"                         # other calls unaffected
    err "boom in a hook"
    err "stack traceback:"
    err "errors.lua:4:"
    fake_count cuCtxSynchronize 0
    run "$td/errors.lua" "opt=mode=error,fail=open" init sync 2; ok
    line "sync 0 0"
    fake_count cuCtxSynchronize 2
    run "$td/errors.lua" "opt=mode=error,error_rate=2" init sync 10; ok
    nerr "boom in a hook" 2                # rate-limited
    err "10 hook errors (2 logged)"
    run "$td/errors.lua" "opt=mode=badskip" init sync 1; ok
    line "sync 999"
    err "is a runtime error (cudaError_t); this API returns a CUresult"
    run "$td/errors.lua" "opt=mode=skip1" init sync 1; ok
    line "sync 999"
    err "cushim.skip: an error code is a name or a number, not a nil"
    run "$td/errors.lua" "opt=mode=values" init sync 2; ok
    line "sync 0 0"
    noerr "failed"
    ;;
budget)
    run "$td/errors.lua" "opt=mode=loop,budget=100000" init sync 2 alloc 1 64; ok
    line "sync 999 999"
    line "alloc 0"
    err "instruction budget of 100000 exceeded"
    run "$td/errors.lua" "opt=mode=loop,budget=100000,fail=open" init sync 1; ok
    line "sync 0"
    # the budget is per hook call: stages of ~60% each never add up
    run "$td/errors.lua" "opt=mode=heavy,budget=100000" init sync 3; ok
    line "sync 0 0 0"
    noerr "budget"
    run "$td/errors.lua" "opt=mode=heavy,budget=30000" init sync 1; ok
    line "sync 999"                        # while one stage alone is over a smaller budget
    err "instruction budget of 30000 exceeded"
    # a top level that runs away: the load fails (10 x budget)
    printf 'while true do end\n' >"$out.d/spin.lua"
    run "$out.d/spin.lua" "budget=100000" init; ok
    err "instruction budget of 100000 exceeded"
    line "init 3"
    ;;
memory)
    run "$td/errors.lua" "opt=mode=memory,mem=1MiB,budget=100000000" init sync 2 alloc 1 64; ok
    line "sync 999 999"
    line "alloc 0"
    err "memory cap reached (mem=1048576 bytes)"
    # a top level that needs more than the cap: the load fails
    printf 'local t = {} for i = 1, 1e7 do t[i] = i end\n' >"$out.d/big.lua"
    run "$out.d/big.lua" "mem=1MiB,budget=100000000" init; ok
    err "the policy needs more than mem=1048576 bytes to load"
    line "init 3"
    ;;
escape)
    # runaways that catch the budget's error (pcall, xpcall, a message handler, coroutines, __close) or run
    # where Lua turns the count hook off (__gc; the message handler and a stopped coroutine's __close of an
    # error the hook raised): the call fails as fail= says, and the program goes on
    for m in pcall xpcall handler wrap resume close gc coclose pattern; do
        trun "$td/escape.lua" "opt=mode=$m,budget=100000" init sync 2 alloc 1 64; ok
        line "sync 999 999"
        line "alloc 0"
        err "hook errors (2 logged)"
        [ "$m" != gc ] || err "a metatable with __gc"
    done
    trun "$td/escape.lua" "opt=mode=pcall,budget=100000,fail=open" init sync 2; ok
    line "sync 0 0"
    err "instruction budget of 100000 exceeded"
    # a coroutine the budget stopped is not closed later either (its __close would run with hooks off)
    trun "$td/escape.lua" "opt=mode=closelater,budget=100000" init sync 2; ok
    line "sync 999 0"
    err "closelater false instruction budget of 100000 exceeded"
    # many short coroutines: each resume is charged (the old plugin let ~7700 run within budget=100000)
    trun "$td/escape.lua" "opt=mode=many,budget=100000" init sync 1; ok
    line "sync 999"
    n=$(sed -n 's/^coroutines \([0-9]*\)$/\1/p' "$out.err")
    [ -n "$n" ] && [ "$n" -lt 1000 ] || fail "${n:-no} coroutines ran within budget=100000"
    # a library call that allocates 100 KB, in a loop: its bytes are charged (the old plugin let ~9 000 run)
    trun "$td/escape.lua" "opt=mode=alloc,budget=100000" init sync 1; ok
    line "sync 999"
    n=$(sed -n 's/^allocs \([0-9]*\)$/\1/p' "$out.err")
    [ -n "$n" ] && [ "$n" -lt 1000 ] || fail "${n:-no} allocations of 100 KB ran within budget=100000"
    # the file's top level (the start hung), a finalizer left for lua_close (the start hung): fail closed
    for m in top topgc; do
        trun "$td/escape.lua" "opt=mode=$m,budget=100000" init sync 1; ok
        line "init 3"
    done
    err "a metatable with __gc"
    # what the guards leave working: coroutines as Lua's own (generators, errors, to-be-closed), metatables
    trun "$td/escape.lua" "opt=mode=coroutines" init sync 1; ok
    line "sync 0"
    err "coroutines 6 false escape.lua:59: inner true 2 10 dead false false"
    err "metatables hi! true"
    # allow=debug takes neither the hook nor the originals the guards wrap
    trun "$td/escape.lua" "opt=mode=guards,allow=debug" init; ok
    line "init 0"
    err "guard sethook false"
    err "guard setmetatable false"
    grep -qx "guard upvalue nil nil" "$out.err" || fail "an upvalue of a guard reaches the policy"
    err "guard internal false"
    # a hot reload to a runaway file: refused, and the program exits (the watcher spun, the exit waited for it)
    printf 'cushim.after.cuCtxGetApiVersion = function(c) c.version = cushim.stats().failed_reloads end\n' \
        >"$out.d/live.lua"
    printf 'while true do pcall(function() while true do end end) end\n' >"$out.d/runaway.lua"
    trun "$out.d/live.lua" "budget=100000,reload_ms=5" init swap "$out.d/live.lua" "$out.d/runaway.lua"; ok
    line "swap 1"
    err "instruction budget of 100000 exceeded"
    err "keeping the policy loaded before"
    ;;
bridge)
    # every C function of the bridge checks its userdata: a struct view, a light userdata, a coroutine...
    # where a call object is expected (call.raw(call.config, ...) crashed), and with allow=debug the
    # metamethods and the plugin's own functions with anything
    trun "$td/badargs.lua" "" init launchex kernC 7 sync 1; ok
    line "launchex 0"
    line "sync 0"
    err "badargs raw 14 refused"
    noerr "accepted"
    trun "$td/badargs.lua" "allow=debug+io" init launchex kernC 7 sync 1; ok
    line "launchex 0"
    line "sync 0"
    err "badargs raw 14 refused"
    err "badargs meta 30 refused"
    err "badargs internal refused"
    err "badargs setup refused"
    noerr "accepted"
    ;;
shared)
    # cushim.shared counts against mem=, once for the process: the policy gets an error, deleting gives back
    trun "$td/shared.lua" "mem=1MiB" init sync 1 ctx 1; ok
    line "sync 999"
    err "more bytes would pass mem=1048576, which bounds the shared table"
    err "shared stored 15 of 100"
    err "shared again true"
    err "shared counters true"
    line "ctx 0"
    ;;
closefds)
    # report=FILE: the program closes every descriptor and opens a file of its own on the report's number:
    # the report lines go on into FILE (reopened), never into the program's file
    cat >"$out.d/rep.lua" <<'POL'
cushim.after.cuDriverGetVersion = function(call) print("drv", call.result) end
cushim.at_exit(function() cushim.report("bye") end)
POL
    run "$out.d/rep.lua" "report=$out.d/report.txt" drv closefds "$out.d/victim.txt" drv; ok
    line "closefds 3"
    [ "$(cat "$out.d/victim.txt")" = mine ] || fail "the program's file holds more than its line: $(head -c 200 "$out.d/victim.txt")"
    [ "$(cat "$out.d/report.txt")" = "drv	CUDA_SUCCESS
drv	CUDA_SUCCESS
bye" ] || fail "the report file: $(head -c 300 "$out.d/report.txt")"
    ;;
threads)
    cat >"$out.d/count.lua" <<'POL'
cushim.before.cuCtxGetCurrent = function(call) cushim.shared.add("ctx") end
cushim.after.cuMemAlloc = function(call)
  if call.result == "CUDA_SUCCESS" then cushim.shared.add("bytes", call.bytesize) end
  local key = "p:" .. call.dptr
  cushim.shared.set(key, call.bytesize)                     -- the key/value table from every thread
  if cushim.shared.get(key) == call.bytesize then cushim.shared.add("kv") end
  cushim.shared.set("last", "thread " .. call.tid)
end
cushim.at_exit(function()
  cushim.report("ctx", cushim.shared.counter("ctx"), "bytes", cushim.shared.counter("bytes"),
                "kv", cushim.shared.counter("kv"), cushim.shared.get("last"):match("^thread %d+$") ~= nil)
end)
POL
    run "$out.d/count.lua" "" init threads 8 200; ok
    line "threads 0"
    err "ctx 1601 bytes 102400 kv 1600 true"   # 8 x 200 + the step's own call; 1600 x 64 bytes
    ;;
reload)
    rounds=$1  # $2: 'rss' to check RSS growth too
    printf 'cushim.after.cuDriverGetVersion = function(c) c.driverVersion = 0 end\n' >"$out.d/policy.lua"
    run "$out.d/policy.lua" "reload_ms=1" init reload "$out.d/policy.lua" "$rounds" 4 1; ok
    grep -q "^reload OK rounds $rounds" "$out.out" || fail "no 'reload OK' line"
    err "$out.d/policy.lua:2:"             # the broken edit, with file:line ...
    err "keeping the policy loaded before"
    [ "$2" = rss ] || { echo "PASS [$case_]"; exit 0; }
    # no growth: RSS at the end within 16 MiB of RSS after a tenth of the rounds (not under ASan, whose
    # quarantine keeps freed memory; the live state count above is the exact check)
    set -- $(sed -n 's/^reload OK rounds [0-9]* rss_kb \([0-9-]*\) \([0-9-]*\)$/\1 \2/p' "$out.out")
    [ "$#" = 2 ] && [ "$2" -le $(($1 + 16384)) ] || fail "RSS grew from $1 to $2 kB over the reloads"
    ;;
fakejit)
    # e2e_lua_fakejit has LuaJIT-like unversioned lua_* symbols in its global scope (e2e_fakelua.c).
    run "$ex/deny.lua" "opt=apis=cuCtxSynchronize" init sync 1; ok
    line "sync 800"
    noerr "FAKE LUA CALLED"
    # the control: without isolation liblua's own calls bind to the fake
    run "$ex/deny.lua" "opt=apis=cuCtxSynchronize,isolate=plain" init sync 1
    [ "$rc" = 3 ] || fail "isolate=plain did not reach the fake (exit $rc): the test would not see a leak"
    err "FAKE LUA CALLED"
    ;;
embed)
    # a program with its own Lua (5.4 or 5.3, linked normally); both work side by side
    want=$1
    run "$ex/deny.lua" "opt=apis=cuCtxSynchronize" lua "return _VERSION" init sync 1 lua "return 6*7"; ok
    line "lua $want"
    line "sync 800"
    line "lua 42"
    ;;
lualib)
    run "$ex/deny.lua" "lualib=/nonexistent/liblua.so" init
    line "init 3"
    err "cannot load lualib=/nonexistent/liblua.so"
    run "$ex/deny.lua" "opt=apis=cuCtxSynchronize,lualib=$1" init sync 1; ok
    line "sync 800"
    ;;
exports)
    # no lua_* symbol exported by the plugin, and it does not link liblua
    n=$(nm -D --defined-only "$plugin" | grep -c ' lua') 
    [ "$n" = 0 ] || fail "the plugin exports $n lua symbols: $(nm -D --defined-only "$plugin" | grep ' lua' | head -3)"
    ! nm -D --undefined-only "$plugin" | grep -q ' lua' || fail "the plugin imports lua symbols"
    ! readelf -d "$plugin" | grep -q 'liblua' || fail "the plugin links liblua"
    nm -D --defined-only "$plugin" | grep -q ' cushim_plugin_entry$' || fail "no entry point"
    ;;
launcher)
    launcher=$1
    [ -n "${CUSHIM_LIB:-}" ] || exit 77
    CUSHIM_LIB=$CUSHIM_LIB "$launcher" run --fake --lua="$ex/quota.lua:limit=1000,fail=open" -- \
        "$prog" init alloc 3 400 >"$out.out" 2>"$out.err"
    rc=$?; ok
    line "alloc 0 0 2"
    ;;
*)
    echo "run_lua.sh: unknown case $case_" >&2
    exit 2
    ;;
esac
echo "PASS [$case_]"
