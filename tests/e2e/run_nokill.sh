#!/usr/bin/env bash
# run_nokill.sh CASE VECADD E2E_TRACE TRACE_PLUGIN LUA_PLUGIN LUA_EXAMPLES MEMLIMIT_PLUGIN SMLIMIT_PLUGIN
# The shim's and the plugins' own writes never end the program (sdk/include/cushim/cushim_io.h). Two signals a
# write raises end a process by default: SIGXFSZ past its file size limit (RLIMIT_FSIZE, `ulimit -f`) and SIGPIPE
# on a pipe with no reader. Before cushim_io.h the trace file, the call counts and the log file killed a program
# run under `ulimit -f`, and the trace's table at exit killed one whose stderr pipe was closed (exit 153 and -13).
#   fsize: under `ulimit -f 0` (4 for the trace's size check): the trace file (plain and .gz), CUSHIM_COUNTS,
#          CUSHIM_LOG_FILE, the Lua plugin's report=FILE, the memlimit budget region and the smlimit region (both
#          grown with ftruncate) - each time the program ends normally and the failure is said on stderr;
#   epipe: stderr a pipe whose reader is gone before the program starts: the trace's table at exit, the counts
#          (CUSHIM_COUNTS=-), debug logging, the Lua report - the program ends normally; and a trace written into a
#          FIFO whose reader leaves after 4 KiB: the program ends normally, the summary says why the file ended.
#   nulls: e2e_trace nulls (NULL where the driver answers an error) gives the same results under the shim and
#          each plugin as without them.
#   fd2:   e2e_trace reusefd2: a program that closes its stderr and creates a file that takes the number 2
#          (and the same started with stderr closed, 2>&-): the file holds only the program's lines under the
#          trace (its table at exit), a Lua policy that prints (its report) and one whose hook fails (the
#          shim's log line saying so).
#   badptrs: e2e_trace badptrs (pointers into memory that cannot be read, arrays whose count runs past their
#          end, where the driver answers an error without reading them): the same, and the trace shows what
#          could be read and says what could not.
#   nvmlbad: e2e_nvml_badptrs (given as E2E_TRACE): NVML calls the library refuses before writing their outputs,
#          which point into unreadable memory: the same results under the shim and each plugin (the trace, a
#          Lua policy reading the outputs after each call, memlimit, smlimit); the trace names each result and
#          shows no output of a failed call (before: SIGSEGV, the trace read them as after a success); the
#          policy reads nil there and the values after the calls that succeed.
#   badptrs-seccomp: badptrs with every program run under a seccomp filter that kills the process on
#          process_vm_readv ($NOKILL_SECCOMP_RUN, e2e_seccomp_run): the plugins' reads probe instead (77 where no
#          filter can be installed).
# A plugin argument that is empty (not built) skips its part. ctest sets LD_PRELOAD (the shim, with a sanitizer
# runtime before it) and LD_LIBRARY_PATH (the fake driver).
set -u
case_=$1 vecadd=$2 prog=$3 trace=$4 lua=$5 luaex=$6 memlimit=$7 smlimit=$8
preload=${LD_PRELOAD-}
unset LD_PRELOAD
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/nokill.$case_
rm -rf "$dir"
mkdir -p "$dir" && cd "$dir" || exit 1
wrap=()
if [ "$case_" = badptrs-seccomp ]; then
    [ -x "${NOKILL_SECCOMP_RUN:-}" ] || { echo "no e2e_seccomp_run (NOKILL_SECCOMP_RUN)"; exit 1; }
    "$NOKILL_SECCOMP_RUN" true || exit 77   # no filter can be installed here: said by the helper
    wrap=("$NOKILL_SECCOMP_RUN")
    case_=badptrs
fi
status=0
fail() { echo "FAIL [$case_ $part]: $*"; sed 's/^/  err: /' err | head -20; status=1; }

# same_as_native ARGS...: "$prog" ARGS natively (no shim) into native.out, then under the shim with each spec of
# the array 'specs' ("": the shim alone; one starting with ':' names a plugin that is not built: left out),
# each run by "${wrap[@]}": every run exits 0 with native.out's output
same_as_native() {
    local spec rc san
    san=$(printf '%s' "$preload" | tr ':' '\n' | grep -v 'libcushim\.so$' | paste -sd: -)
    "${wrap[@]}" env LD_PRELOAD="$san" "$prog" "$@" > native.out 2> err || { part=native; fail "exit $?"; }
    for spec in "${specs[@]}"; do
        case $spec in :*) continue ;; esac
        part=$(basename "${spec%%:*}")
        part=${part:-shim}
        "${wrap[@]}" env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$spec" "$prog" "$@" > out 2> err
        rc=$?
        [ "$rc" = 0 ] || fail "exit $rc"
        cmp -s native.out out || fail "results differ: native $(cat native.out), here $(cat out)"
    done
}

# limited KB ENV...: vecadd under `ulimit -f KB` with ENV, its stdout and stderr through a pipe to a file made
# outside the limit (a file written under it would end the shell); status $rc
limited() {
    local kb=$1
    shift
    ( ulimit -f "$kb" && exec env LD_PRELOAD="$preload" "$@" "$vecadd" ) 2>&1 | cat > err
    rc=${PIPESTATUS[0]}
}
# noreader ENV...: vecadd with ENV, stdout to /dev/null, stderr a pipe whose read end is closed before it
# starts; status $rc (negative: the signal that ended it)
noreader() {
    python3 - LD_PRELOAD="$preload" "$@" "$vecadd" > status <<'PY'
import os, subprocess, sys
env = dict(os.environ)
args = sys.argv[1:]
while args and "=" in args[0] and not args[0].startswith("/"):
    k, v = args.pop(0).split("=", 1)
    env[k] = v
r, w = os.pipe()
os.close(r)   # no reader from the start: every write to it fails with EPIPE (and raises SIGPIPE)
p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=w, env=env)   # SIGPIPE default in the child
os.close(w)
print(p.wait())
PY
    rc=$(cat status)
    : > err
}

case $case_ in
fsize)
    if [ -n "$trace" ]; then
        part=trace
        limited 0 CUSHIM_PLUGINS="$trace:file=$dir/t.json"
        [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
        grep -q 'WRITE ERROR: File too large after 0 bytes' err || fail "the summary does not say why the file is empty"
        part=trace-4k
        limited 4 CUSHIM_PLUGINS="$trace:file=$dir/t4.json"
        [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
        [ "$(stat -c %s t4.json)" = 4096 ] || fail "t4.json holds $(stat -c %s t4.json) bytes, not the 4096 of the limit"
        grep -q 'WRITE ERROR: File too large after 4096 bytes' err || fail "the summary does not say why the file ends"
        part=trace-gz
        limited 1 CUSHIM_PLUGINS="$trace:file=$dir/t.json.gz"
        [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
        grep -q 'WRITE ERROR: File too large after 1024 bytes' err || fail "the summary does not say why the file ends"
    fi
    part=counts
    limited 0 CUSHIM_COUNTS="$dir/counts.tsv"
    [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
    grep -q "cannot write call counts to $dir/counts.tsv: File too large" err || fail "the failure is not said"
    part=logfile
    limited 0 CUSHIM_LOG_FILE="$dir/log.txt" CUSHIM_LOG=debug
    [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
    if [ -n "$lua" ]; then
        part=lua-report
        limited 0 CUSHIM_PLUGINS="$lua:script=$luaex/launches.lua,report=$dir/report.txt"
        [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
        grep -q "report=$dir/report.txt: writing a report line failed (File too large)" err ||
            fail "the lost report lines are not said"
    fi
    if [ -n "$memlimit" ]; then
        part=memlimit-budget
        limited 0 CUSHIM_PLUGINS="$memlimit:limit=1GiB,budget=nokill$$"
        rm -f "/dev/shm/cushim-budget-nokill$$"
        [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
        grep -q "budget region: cannot size .*: File too large" err || fail "the failure is not said"
    fi
    if [ -n "$smlimit" ]; then
        part=smlimit-region
        # the region is joined by the plugin's thread after the first launch: a kernel of 1 s (simulated) keeps
        # the program until then
        limited 0 CUSHIM_PLUGINS="$smlimit:limit=50,group=nokill$$" FAKE_CUDA_KERNEL_US=1000000
        rm -f "/dev/shm/cushim-smlimit4-$(id -u)-nokill$$"
        [ "$rc" = 0 ] || fail "exit $rc (153: SIGXFSZ)"
        grep -q "no sharing between processes: cannot size .*: File too large" err || fail "the failure is not said"
    fi
    ;;
epipe)
    if [ -n "$trace" ]; then
        part=trace-table
        noreader CUSHIM_PLUGINS="$trace:file=$dir/t.json"
        [ "$rc" = 0 ] || fail "exit $rc (-13: SIGPIPE)"
        python3 -c "import json; json.load(open('t.json'))" || fail "t.json is not valid JSON"
        part=trace-fifo
        mkfifo ff || exit 1
        head -c 4096 ff > /dev/null &
        env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$trace:file=$dir/ff" timeout 60 "$prog" many 200000 > out 2> err
        rc=$?
        wait
        [ "$rc" = 0 ] || fail "exit $rc (141: SIGPIPE)"
        grep -q 'WRITE ERROR: Broken pipe after' err || fail "the summary does not say why the trace ended"
    fi
    part=counts
    noreader CUSHIM_COUNTS=-
    [ "$rc" = 0 ] || fail "exit $rc (-13: SIGPIPE)"
    part=log
    noreader CUSHIM_LOG=debug
    [ "$rc" = 0 ] || fail "exit $rc (-13: SIGPIPE)"
    if [ -n "$lua" ]; then
        part=lua-report
        noreader CUSHIM_PLUGINS="$lua:script=$luaex/launches.lua"
        [ "$rc" = 0 ] || fail "exit $rc (-13: SIGPIPE)"
    fi
    ;;
fd2)
    [ -n "$prog" ] || { echo "no e2e_trace (the trace plugin is not built)"; exit 0; }
    pol=$(cd "$(dirname "$0")" && pwd)/lua/badptrs.lua
    # a policy whose hook fails: the lua plugin says so through the shim's log (the core's stderr lines)
    printf 'cushim.before.cuModuleGetFunction = function(call) error("boom") end\n' > boom.lua
    for how in self closed; do
        for spec in "$trace:file=$dir/f.json" "$lua:script=$pol" "$lua:script=$dir/boom.lua,fail=open"; do
            case $spec in :*) continue ;; esac
            part="$how $(basename "${spec%%:*}") ${spec##*/}"
            rm -f data
            set -- env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$spec" "$prog" reusefd2 data
            if [ "$how" = closed ]; then "$@" 2>&-; else "$@" 2> err; fi
            rc=$?
            [ "$rc" = 0 ] || fail "exit $rc"
            [ "$(cat data 2>/dev/null)" = "$(printf 'DATA\nEND')" ] ||
                fail "the program's file got: $(head -c 300 data | tr '\n' '|')"
        done
    done
    # and with stderr as it was, the lines still come (the table, the report, the log)
    part=stderr
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$trace:file=$dir/g.json" "$prog" many 3 > /dev/null 2> err
    [ -z "$trace" ] || grep -q "CUDA API Summary" err || fail "no table on stderr"
    ;;
nvmlbad)
    [ -n "$prog" ] || { echo "no e2e_nvml_badptrs"; exit 0; }
    specs=("" "$trace:file=$dir/v.json" "$lua:script=$(cd "$(dirname "$0")" && pwd)/lua/nvmlbad.lua,report=$dir/lua.out"
           "$memlimit:limit=1GiB" "$smlimit:limit=50")
    same_as_native
    [ -n "$trace" ] && { part=trace; python3 - v.json "$(cat native.out)" <<'PY' || fail "the trace's arguments"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
n = sys.argv[2].split()[7]
got = [(e["name"], e["args"].get("result"), e["args"].get("deviceCount", e["args"].get("device", e["args"].get("memory"))))
       for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("nvml")]
failed = lambda v: isinstance(v, str) and v.endswith("(not written: the call failed)")
bad = []
want = [("nvmlDeviceGetCount_v2", "NVML_ERROR_UNINITIALIZED", failed), ("nvmlInit_v2", "NVML_SUCCESS", None),
        ("nvmlDeviceGetHandleByIndex_v2", "NVML_ERROR_INVALID_ARGUMENT", failed),
        ("nvmlDeviceGetMemoryInfo", "NVML_ERROR_INVALID_ARGUMENT", None),   # a struct with no descriptor: its address
        ("nvmlDeviceGetCount_v2", "NVML_SUCCESS", lambda v: str(v) == n)]
if len(got) < len(want):
    bad.append("events %r" % got)
for (name, res, out), w in zip(got, want):
    if name != w[0] or res != w[1] or (w[2] is not None and not w[2](out)):
        bad.append("%s %s %r (want %s %s)" % (name, res, out, w[0], w[1]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}
    if [ -n "$lua" ]; then
        part=lua-reads
        n=$(cut -d' ' -f8 native.out)
        want=$(printf '%s\n' "count 1 deviceCount=nil" "handle 2 device=nil" "count 0 deviceCount=$n" "handle 0 device=set")
        got=$(tr '\t' ' ' < lua.out 2>/dev/null)
        [ "$got" = "$want" ] || fail "the policy read: $(tr '\n' '|' < lua.out 2>/dev/null)"
        # an NVML error from a policy, by name: both nvmlDeviceGetMemoryInfo calls answer NVML_ERROR_GPU_IS_LOST
        part=lua-skip
        want=$(awk '{$4 = 15; $7 = 15; print}' native.out)
        env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$lua:script=$(cd "$(dirname "$0")" && pwd)/lua/nvmlskip.lua" \
            "$prog" > out 2> err || fail "exit $?"
        [ "$(cat out)" = "$want" ] || fail "got $(cat out), want $want"
    fi
    # a policy answering the count and handle calls with success itself, their outputs untouched (two point into
    # unreadable memory), under the trace (which reads a skipped call's outputs safely): no fault, and the trace
    # shows the unreadable ones as their addresses; the ones the program initialised read as it left them
    if [ -n "$lua" ] && [ -n "$trace" ]; then
        part=skip-success
        want=$(awk '{$1 = 0; $3 = 0; $5 = 0; $6 = 0; $7 = 2; $8 = 0; $9 = 0; print}' native.out)   # no handle: memory info refused
        env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$trace:file=$dir/s.json;$lua:script=$(cd "$(dirname "$0")" && pwd)/lua/nvmlfake.lua" \
            "$prog" > out 2> err || fail "exit $?"
        [ "$(cat out)" = "$want" ] || fail "got $(cat out), want $want"
        python3 - s.json <<'PY' || fail "the trace's skipped calls"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
got = [(e["name"], e["args"].get("skipped"), e["args"].get("deviceCount", e["args"].get("device")))
       for e in ev if e.get("ph") == "X" and e.get("name", "").startswith(("nvmlDeviceGetCount", "nvmlDeviceGetHandle"))]
unread = lambda v: isinstance(v, str) and v.startswith("0x") and "(" not in v and int(v, 16) > 4096   # the address, unread
want = [unread, unread, lambda v: v == 0, lambda v: v in ("0x0", 0, None)]
bad = [g for g, w in zip(got, want) if g[1] is not True or not w(g[2])]
if len(got) != 4 or bad:
    print("events %r; wrong: %r" % (got, bad))
sys.exit(1 if len(got) != 4 or bad else 0)
PY
    fi
    # faultinject with an NVML error: the second nvmlDeviceGetCount_v2 answers NVML_ERROR_UNKNOWN (999)
    if [ -n "${NOKILL_FAULTINJECT:-}" ]; then
        part=faultinject
        want=$(awk '{$5 = 999; $8 = 0; print}' native.out)
        env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$NOKILL_FAULTINJECT:rule=nvmlDeviceGetCount_v2:NVML_ERROR_UNKNOWN:nth=2" \
            "$prog" > out 2> err || fail "exit $?"
        [ "$(cat out)" = "$want" ] || fail "got $(cat out), want $want"
    fi
    ;;
nulls|badptrs)
    # NULL where the driver answers an error (e2e_trace nulls), or a pointer it refuses without reading
    # (badptrs): the same results with the shim and with each plugin as without them, and no crash (a plugin
    # reading what the call did not write, or what the driver did not read)
    [ -n "$prog" ] || { echo "no e2e_trace (the trace plugin is not built)"; exit 0; }
    specs=("" "$trace:file=$dir/n.json" "$lua:script=$luaex/quota.lua" "$memlimit:limit=1GiB" "$smlimit:limit=50")
    [ "$case_" = badptrs ] && specs+=("$lua:script=$(cd "$(dirname "$0")" && pwd)/lua/badptrs.lua,report=$dir/lua.out")
    same_as_native "$case_"
    [ -z "$trace" ] || python3 -c "import json; json.load(open('n.json'))" || { part=trace; fail "n.json is not valid"; }
    [ "$case_" = badptrs ] && [ -n "$trace" ] && { part=trace; python3 - n.json <<'PY' || fail "the trace's arguments"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
calls = {}
for e in ev:
    if e.get("ph") == "X" and e.get("name") in ("cuModuleGetFunction", "cuGraphAddEmptyNode", "cuModuleLoadDataEx"):
        calls.setdefault(e["name"], []).append(e["args"])
def unread(v):
    return isinstance(v, str) and v.startswith("0x") and v.endswith("(not readable)")
got = [a["name"] for a in calls.get("cuModuleGetFunction", [])]
deps = [a["dependencies"] for a in calls.get("cuGraphAddEmptyNode", [])]
opts = [a["options"] for a in calls.get("cuModuleLoadDataEx", [])]
bad = []
if len(got) != 4 or not unread(got[0]) or got[1] != "vecad..." or got[2:] != ["vecadd", "vecadd"]:
    bad.append("names %r (want: not readable, 'vecad...', 'vecadd', 'vecadd')" % got)
kn = [e["args"].get("nodeParams") for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("cuGraphAddKernelNode")]
if len(kn) != 1 or not unread(kn[0]):
    bad.append("nodeParams %r (want: not readable)" % kn)
mc = [e["args"].get("prop") for e in ev if e.get("ph") == "X" and e.get("name") == "cuMemCreate"]
if len(mc) != 1 or not unread(mc[0]):
    bad.append("cuMemCreate's prop %r (want: not readable)" % mc)
if len(deps) != 2 or not unread(deps[0]) or deps[1] != ["0x1111111111111111", "... 3 in all"]:
    bad.append("dependencies %r (want: not readable, the one readable element of 3)" % deps)
if len(opts) != 1 or not unread(opts[0]):
    bad.append("options %r (want: not readable)" % opts)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}
    # a Lua policy reading the same pointers (tests/e2e/lua/badptrs.lua): nil where they cannot be read
    if [ "$case_" = badptrs ] && [ -n "$lua" ]; then
        part=lua-reads
        want=$(printf '%s\n' "nil before name=nil hfunc=0" "nil after name=nil hfunc=0" \
            "nil before name=nil hfunc=0" "nil after name=nil hfunc=0" \
            "cuGraphAddKernelNode before nodeParams=nil" "cuGraphAddKernelNode after nodeParams=nil" \
            "vecadd before name=vecadd hfunc=nil" "vecadd after name=vecadd hfunc=nil" \
            "vecadd before name=vecadd hfunc=0")
        got=$(tr '\t' ' ' < lua.out 2>/dev/null | sed 's/cuGraphAddKernelNode_v[0-9]*/cuGraphAddKernelNode/' | head -n 9)
        [ "$got" = "$want" ] || fail "the policy read: $(tr '\n' '|' < lua.out 2>/dev/null)"
        grep -q "^vecadd.after.name=vecadd.hfunc=[1-9]" lua.out || fail "the successful call's output: $(tail -n 1 lua.out)"
    fi
    ;;
sigmask)
    # e2e_sigmask (given as E2E_TRACE): every thread the shim and its plugins start blocks the program's signals,
    # and a signal the program blocks and waits for stays pending for it (before 2026-12-04 the lua plugin's file
    # watcher and smlimit's poller took it: a program waiting in sigwait or sigsuspend hung, its handler ran on
    # their thread). The plugins whose threads run here: the trace (writer, helper), lua (the file watcher,
    # reload on by default), smlimit (its poller, started by a launch that is still running: a kernel of 200 ms)
    # (and the descriptors they open - the counts file, the log file, the trace file, the lua report, memlimit's
    # budget, smlimit's group - are not inherited by a program it executes: e2e_sigmask's part 3)
    for spec in "" "$trace:file=$dir/s.json" "$lua:script=$luaex/quota.lua,report=$dir/lua.out" \
                "$memlimit:limit=1GiB,budget=sigmask$$" "$smlimit:limit=50,group=sigmask$$"; do
        case $spec in :*) continue ;; esac
        part=$(basename "${spec%%:*}")
        part=${part:-shim}
        fds=$(ls /proc/$$/fd | tr '\n' ' ')   # what this shell hands the program (the harness's), not the shim's
        env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$spec" CUSHIM_COUNTS="$dir/counts.tsv" CUSHIM_LOG_FILE="$dir/log" \
            E2E_FDS_BEFORE="$fds" FAKE_CUDA_KERNEL_US=200000 timeout -k 5 60 "$prog" 300 > out 2> err
        rc=$?
        [ "$rc" = 0 ] || fail "exit $rc"
        n=$(sed -n 's/^threads \([0-9]*\):.*/\1/p' out)
        names=$(sed -n 's/^threads [0-9]*: //p' out)
        case $part in   # the thread this run must have had, by its name (or the check proved nothing)
        trace.so) want=cushim-trace ;;
        lua.so) want=cushim-lua ;;
        smlimit.so) want=cushim-smlimit ;;
        *) want= ;;
        esac
        if [ -n "$want" ]; then
            case ",$names," in *",$want,"*) ;; *) fail "no thread '$want' to check ($(cat out))" ;; esac
        fi
        echo "$part: ${n:-?} threads besides the program's ($names), each blocking its signals"
    done
    rm -f "/dev/shm/cushim-smlimit4-$(id -u)-sigmask$$" "/dev/shm/cushim-budget-sigmask$$"
    ;;
*)
    echo "run_nokill.sh: unknown case $case_"
    exit 2
    ;;
esac
[ "$status" = 0 ] && echo "PASS [$case_]"
exit "$status"
