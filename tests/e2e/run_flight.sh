#!/bin/sh
# run_flight.sh CASE PLUGIN PROGRAM TOOL FAULTINJECT [FLIGHT_AB]
# The flight recorder loaded by the preloaded shim through CUSHIM_PLUGINS, against the fake driver (ctest sets
# LD_PRELOAD and LD_LIBRARY_PATH). PROGRAM is e2e_flight (workloads by mode), TOOL cushim-flight, FAULTINJECT the
# faultinject plugin (a sticky error from the fake). Each case checks the program's exit, the recorder's lines on
# stderr, the files it leaves, and what 'cushim flight dump' renders of them (the JSON loaded by Python's json).
# Exit status 0 pass, 1 fail, 77 skipped (no way to make a full or read-only directory here).
set -u
case_=$1 plugin=$2 prog=$3 tool=$4 fi=$5
# the shim (and a sanitizer runtime before it) for the recorded program only, not for sh, python3 and the tool
preload=${LD_PRELOAD-}
unset LD_PRELOAD
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/flight.$case_
rm -rf "$dir"
mkdir -p "$dir/shm" || exit 1
cd "$dir" || exit 1
shm=$dir/shm

fail() {
    echo "FAIL [$case_]: $*"
    for f in out err dump.txt; do
        [ -f "$f" ] && sed "s/^/  $f: /" "$f" | head -80
    done
    exit 1
}
# run OPTIONS ARGS...: the program with the recorder (ring in $shm); exit status in $rc
run() {
    opts=$1
    shift
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:dir=$shm${opts:+,$opts}${FL_MORE:+;$FL_MORE}" \
        "$prog" "$@" >out 2>err
    rc=$?
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks '$2'"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "$1 has '$2'"; }
# flight_lines N: stderr holds exactly N lines of the recorder
flight_lines() {
    n=$(grep -c 'flight' err)
    [ "$n" = "$1" ] || fail "$n lines of the recorder on stderr, expected $1"
}
# dump ARGS...: the text summary into dump.txt
dump() { "$tool" dump "$@" >dump.txt 2>dump.err || fail "cushim-flight dump $* failed: $(cat dump.err)"; }
# json FILE EXPR...: the JSON rendering of FILE, each Python expression true over d, ev (events), X (calls)
json() {
    f=$1
    shift
    "$tool" dump --format=json "$f" >dump.json 2>dump.err || fail "dump --format=json $f failed: $(cat dump.err)"
    python3 - dump.json "$@" <<'PY' || fail "JSON check of $f"
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
ev = d['traceEvents']
X = [e for e in ev if e.get('ph') == 'X']
def count(name): return sum(1 for e in X if e['name'] == name)
for expr in sys.argv[2:]:
    if not eval(expr):
        print('check failed:', expr)
        sys.exit(1)
PY
}
rings() { ls "$shm" | grep -c '^cushim-flight-.*\.ring$'; }
# the one dump file of the run (its path is on the recorder's line)
dump_path() { sed -n 's/.* the last calls are in \([^ ]*\) (cushim flight dump .*/\1/p' err | head -n 1; }
addr() { sed -n "s/.*\\b$1=\\(0x[0-9a-f]*\\).*/\\1/p" out | head -n 1; }
hexadd() { printf '0x%x' $(($1 + $2)); }

case $case_ in
basic)
    # a normal exit: nothing said, nothing left
    run "" basic
    [ "$rc" = 0 ] || fail "exited with $rc"
    flight_lines 0
    [ "$(rings)" = 0 ] || fail "a ring was left after a normal exit: $(ls "$shm")"
    # keep=1: the ring stays and renders; a process without a CUDA call makes no file
    run "keep=1" basic
    [ "$(rings)" = 1 ] || fail "keep=1 left $(rings) rings"
    dump "$shm"/cushim-flight-*.ring
    has dump.txt "kernel scale__ppi"
    has dump.txt "is gone"
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:dir=$shm,keep=1" sh -c 'exit 0' || fail "sh under the recorder"
    [ "$(rings)" = 1 ] || fail "a process with no CUDA call made a ring"
    ;;
env)
    # CUSHIM_FLIGHT: the recorder by one variable and no CUSHIM_PLUGINS (left on fleet-wide); the shipped plugin
    # found beside the shim
    env -u CUSHIM_PLUGINS LD_PRELOAD="$preload" CUSHIM_FLIGHT="dir=$shm,keep=1" "$prog" basic >out 2>err
    rc=$?
    [ "$rc" = 0 ] || fail "exited with $rc"
    [ "$(rings)" = 1 ] || fail "CUSHIM_FLIGHT=dir=...,keep=1 left $(rings) rings"
    dump "$shm"/cushim-flight-*.ring
    has dump.txt "kernel scale__ppi"
    rm -f "$shm"/*
    # a bad option: one line, no recorder, the program's calls unharmed (a recorder never fails them)
    env -u CUSHIM_PLUGINS LD_PRELOAD="$preload" CUSHIM_FLIGHT="dir=$shm,n=3" "$prog" basic >out 2>err
    rc=$?
    [ "$rc" = 0 ] || fail "a bad CUSHIM_FLIGHT failed the program: exit $rc"
    has err "n=3"
    [ "$(rings)" = 0 ] || fail "a ring with a bad option"
    # off, and a list of plugins refused
    for v in 0 off "trace;flight"; do
        env -u CUSHIM_PLUGINS LD_PRELOAD="$preload" CUSHIM_FLIGHT="$v" "$prog" basic >out 2>err || fail "CUSHIM_FLIGHT=$v: exit $?"
        [ "$(ls "$shm" | wc -l)" = 0 ] || fail "CUSHIM_FLIGHT=$v made files"
    done
    has err "the flight plugin's options expected"
    # named in CUSHIM_PLUGINS too: one recorder, CUSHIM_PLUGINS' (its dir)
    mkdir -p "$shm/other"
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:dir=$shm,keep=1" CUSHIM_FLIGHT="dir=$shm/other,keep=1" \
        "$prog" basic >out 2>err || fail "exit $?"
    [ "$(rings)" = 1 ] && [ "$(ls "$shm/other" | wc -l)" = 0 ] || fail "two recorders, or CUSHIM_FLIGHT's: $(ls -R "$shm")"
    hasnt err "loaded once per process"
    ;;
kill)
    # SIGKILL: the ring survives and renders, by pid and by file, as text and JSON (4 slices: a small file)
    run "threads=4" kill
    [ "$rc" = 137 ] || fail "exited with $rc, not SIGKILL's 137"
    [ "$(rings)" = 1 ] || fail "$(rings) rings after SIGKILL"
    ring=$(ls "$shm"/cushim-flight-*.ring)
    pid=$(basename "$ring" | cut -d- -f3)
    a=$(addr A)
    dump --dir="$shm" "$pid"
    has dump.txt "flight recorder of process $pid (e2e_flight)"
    has dump.txt "event: none - the ring as it is; process $pid is gone"
    has dump.txt "cuMemAlloc_v2(dptr="
    has dump.txt "cuLaunchKernel(f=0x"
    has dump.txt "kernel scale__ppi"
    has dump.txt "kernel shift__ppi"
    has dump.txt "arg 0 = $a: inside $a (4096 bytes, offset 0) made by #"
    has dump.txt "arg 1 = $(addr B): inside $(addr B) (8192 bytes, offset 0) made by #"
    hasnt dump.txt "arg 2 ="
    # shift__ppi was launched after the stream's last synchronisation: pending; scale__ppi was not
    sed -n '/^launches, copies and sets since/,/^live allocations/p' dump.txt >pending.txt
    has pending.txt "kernel shift__ppi"
    hasnt pending.txt "kernel scale__ppi"
    has dump.txt "live allocations: 2, 12288 bytes"
    "$tool" dump "$ring" >dump2.txt 2>&1 || fail "dump FILE failed"
    cmp -s dump.txt dump2.txt || fail "dump PID and dump FILE differ"
    json "$ring" "count('cuLaunchKernel') == 2" "count('cuMemAlloc_v2') == 2" \
        "[e['args']['kernel'] for e in X if e['name'] == 'cuLaunchKernel'] == ['scale__ppi', 'shift__ppi']" \
        "all(e['args']['result'] == 'CUDA_SUCCESS' for e in X)" \
        "[e for e in X if e['name'] == 'cuLaunchKernel'][0]['args']['gridDimX'] == 4" \
        "'inside' in [e for e in X if e['name'] == 'cuLaunchKernel'][0]['args']['pointers']['arg 0']" \
        "any(e.get('name') == 'thread_name' for e in ev)"
    "$tool" list --dir="$shm" >list.txt 2>&1 || fail "list failed"
    grep -q "^$pid	gone	none	$ring\$" list.txt || fail "list: $(cat list.txt)"
    "$tool" dump --dir="$shm" 999999999 >/dev/null 2>dump.err; [ $? = 1 ] || fail "no ring: not status 1"
    has dump.err "no ring of process 999999999"
    "$tool" dump --bogus x >/dev/null 2>&1; [ $? = 2 ] || fail "a bad option: not a usage error"
    printf 'not a ring' >junk.ring
    "$tool" dump junk.ring >/dev/null 2>dump.err; [ $? = 1 ] || fail "junk: not status 1"
    has dump.err "is not a flight recorder file"
    # a file is input: a header whose layout does not add up is refused (status 1), a cut file too; records with
    # lengths past their end are skipped and counted; nothing makes the tool crash
    python3 - "$ring" <<'PY' || fail "could not write the damaged copies"
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
def put(name, off, fmt, v):
    d = bytearray(data)
    struct.pack_into(fmt, d, off, v)
    open(name, 'wb').write(d)
put('bad_n.ring', 20, '<I', 1000)                 # n: not a power of two
put('bad_slices.ring', 24, '<I', 1 << 30)         # nslices: past the limit
put('bad_off.ring', 64, '<Q', 1 << 60)            # off_freed: past the file
open('cut.ring', 'wb').write(data[:len(data) // 2])
off_slices, = struct.unpack_from('<Q', data, 72)
d = bytearray(data)
struct.pack_into('<H', d, off_slices + 64 + 42, 0xffff)   # the first record's params_len
open('bad_rec.ring', 'wb').write(d)
PY
    for f in bad_n bad_slices bad_off cut; do
        "$tool" dump $f.ring >/dev/null 2>dump.err; rc=$?
        [ $rc = 1 ] || fail "$f.ring: status $rc, not 1"
        has dump.err "is not a flight recorder file this tool reads"
    done
    "$tool" dump bad_rec.ring >dump.txt 2>dump.err || fail "bad_rec.ring: status $?"
    has dump.txt "1 bad records"
    ;;
sticky)
    # the fake's synchronisation fails with CUDA_ERROR_ILLEGAL_ADDRESS (faultinject): one dump, at the first
    FL_MORE="$fi:rule=cuCtxSynchronize:CUDA_ERROR_ILLEGAL_ADDRESS" run "" sticky
    [ "$rc" = 0 ] || fail "exited with $rc"
    has out "first sync: 700"
    has out "second sync: 700"
    flight_lines 1
    has err "returned CUDA_ERROR_ILLEGAL_ADDRESS (a sticky error: the context is lost): the last calls are in"
    d=$(dump_path)
    [ -f "$d" ] || fail "no dump file '$d'"
    case $d in *-dump1-sticky.ring) ;; *) fail "dump file name '$d'" ;; esac
    [ "$(rings)" = 1 ] || fail "the ring was not removed at exit (or no dump): $(ls "$shm")"
    dump "$d"
    has dump.txt "returned CUDA_ERROR_ILLEGAL_ADDRESS (a sticky error: the context is lost) on thread"
    sed -n '/^launches, copies and sets since/,/^live allocations/p' dump.txt >pending.txt
    has pending.txt "kernel after1__ppi"
    has pending.txt "kernel culprit__ppi"
    has pending.txt "stream 0x0 (the default stream):"
    hasnt pending.txt "kernel good__ppi"
    grep -q "arg 0 = 0x[0-9a-f]*: not inside any live allocation: one past the end of 0x[0-9a-f]* (4096 bytes) made by #" pending.txt ||
        fail "the culprit's first argument is not one past an allocation's end"
    rm -f "$shm"/*
    FL_MORE="$fi:rule=cuCtxSynchronize:CUDA_ERROR_ILLEGAL_ADDRESS" run "on_error=off" sticky
    flight_lines 0
    # on_error=any: a dump at each error, up to dumps=2; the third held back with one line
    FL_MORE="$fi:rule=cuMemAlloc:CUDA_ERROR_OUT_OF_MEMORY" run "on_error=any,dumps=2" errors
    [ "$rc" = 0 ] || fail "errors: exited with $rc"
    has out "alloc 2: 2"
    flight_lines 3
    [ "$(grep -c 'returned CUDA_ERROR_OUT_OF_MEMORY: the last calls are in' err)" = 2 ] || fail "not 2 error dumps"
    has err "cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY: no dump (this process made its dumps=2; said once)"
    [ "$(ls "$shm" | grep -c -- '-dump[12]-error.ring$')" = 2 ] || fail "error dumps: $(ls "$shm")"
    dump "$shm"/*-dump2-error.ring
    has dump.txt "cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY on thread"
    ;;
query)
    # read-only queries that do not wait: one record each at their return, with the entry time alone (no exit
    # clock: '-' where a duration would be), in order among the other calls; a failing query still dumps
    FL_MORE="$fi:rule=cuDriverGetVersion:CUDA_ERROR_ILLEGAL_ADDRESS" run "" query
    [ "$rc" = 0 ] || fail "exited with $rc"
    has out "version: 700"
    flight_lines 1
    has err "cuDriverGetVersion returned CUDA_ERROR_ILLEGAL_ADDRESS (a sticky error: the context is lost)"
    d=$(dump_path)
    [ -f "$d" ] || fail "no dump file '$d'"
    dump "$d"
    grep -Eq '^ *#[0-9]+ +[-+][0-9.]+ s +- +cuCtxGetCurrent\(pctx=0x' dump.txt ||
        fail "cuCtxGetCurrent is not one untimed record ('-' for its duration)"
    grep -Eq '^ *#[0-9]+ +[-+][0-9.]+ s +- +cuDeviceGetCount\(count=0x' dump.txt || fail "cuDeviceGetCount untimed"
    grep -Eq '^ *#[0-9]+ +[-+][0-9.]+ s +[0-9.]+ us +cuLaunchKernel\(' dump.txt || fail "the launch lost its duration"
    grep -Eq ' - +cuDriverGetVersion\(.* = CUDA_ERROR_ILLEGAL_ADDRESS' dump.txt || fail "the failing query's record"
    json "$d" "count('cuCtxGetCurrent') == 1" "count('cuDeviceGetCount') == 1" \
        "[e['name'] for e in X if e['name'] in ('cuLaunchKernel', 'cuCtxGetCurrent', 'cuDeviceGetCount', 'cuDriverGetVersion')] == ['cuLaunchKernel', 'cuCtxGetCurrent', 'cuDeviceGetCount', 'cuDriverGetVersion']" \
        "all(e['dur'] == 0 for e in X if e['name'] in ('cuCtxGetCurrent', 'cuDeviceGetCount'))" \
        "[e['args']['result'] for e in X if e['name'] == 'cuDriverGetVersion'] == ['CUDA_ERROR_ILLEGAL_ADDRESS']"
    ;;
clock)
    # time as the dump renders it (fl_clock.h): for each clock the recorder can keep (the TSC read in its hooks and
    # converted by the reader, the host's), a normal exit (keep=1) and a SIGKILL, the dump's call times in
    # CLOCK_MONOTONIC lie within the program's own readings around each call (0.5 ms of slack: the conversion's
    # error over 60 ms is well under it), and a thread's calls are in time order. Without the conversion a TSC
    # time would be ticks: seconds off.
    for clk in tsc host; do
        for end in exit kill; do
            rm -f "$shm"/cushim-flight-*
            if [ "$end" = exit ]; then run "clock=$clk,keep=1" paced; else run "clock=$clk" paced kill; fi
            if [ "$clk" = tsc ] && grep -q "clock=tsc: this CPU's TSC" err; then
                echo "clock=tsc: not here ($(grep -m1 'clock=tsc' err)); the host's clock alone checked"
                continue 2
            fi
            { [ "$end" = exit ] && [ "$rc" = 0 ]; } || { [ "$end" = kill ] && [ "$rc" = 137 ]; } ||
                fail "clock=$clk $end: exited with $rc"
            ring=$(ls "$shm"/cushim-flight-*.ring)
            dump "$ring"
            if [ "$clk" = tsc ]; then has dump.txt "times: the TSC's, read in the hooks, in CLOCK_MONOTONIC at"; fi
            "$tool" dump --format=json "$ring" >dump.json 2>dump.err || fail "dump --format=json failed: $(cat dump.err)"
            python3 - dump.json out "$clk" <<'PY' || fail "clock=$clk $end: the dump's times"
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
meta = d['otherData']['cushim_flight']
assert meta['clock'] == sys.argv[3], meta
t0 = meta['t0_ns']
X = [e for e in d['traceEvents'] if e.get('ph') == 'X']
marks = [list(map(int, l.split()[1:])) for l in open(sys.argv[2]) if l.startswith('paced ')]
assert len(marks) == 3, marks
q = [e for e in X if e['name'] == 'cuDriverGetVersion']
m = [e for e in X if e['name'] == 'cuMemAlloc_v2']
assert len(q) == 3 and len(m) == 3, (len(q), len(m))
slack = 500e3
def at(us): return t0 + us * 1e3
for (i, t1, t2, t3), eq, em in zip(marks, q, m):
    for what, t, lo, hi in (('query', at(eq['ts']), t1, t2), ('alloc start', at(em['ts']), t2, t3),
                            ('alloc end', at(em['ts'] + em['dur']), t2, t3)):
        if not (lo - slack <= t <= hi + slack):
            print('call %d %s at %.0f ns, not within %d..%d (off by %.0f ns)' % (i, what, t, lo, hi,
                  t - lo if t < lo else t - hi))
            sys.exit(1)
ts = [e['ts'] for e in X if e['tid'] == X[0]['tid']]
assert ts == sorted(ts), 'not in time order'
print('clock=%s: %d calls within the program\'s readings' % (sys.argv[3], len(q) + len(m)))
PY
        done
    done
    ;;
wide)
    # a launch's arguments past the record's room (19 pointers and an int after 64 bytes of params: 144 bytes of
    # room) keep the first 18; a NULL among the argument pointers keeps the others; then a usual kernel
    run "keep=1" wide
    [ "$rc" = 0 ] || fail "exited with $rc"
    dump "$shm"/cushim-flight-*.ring
    sed -n '/^launches, copies and sets since/,/^live allocations/p' dump.txt >pending.txt
    sed -n '/kernel wide__/,/kernel holes__/p' pending.txt >wide.txt
    has wide.txt "arg 0 = "
    has wide.txt "arg 17 = "
    hasnt wide.txt "arg 18 = "
    sed -n '/kernel holes__/,/kernel scale__/p' pending.txt >holes.txt
    has holes.txt "arg 0 = "
    has holes.txt "arg 1 = 0x0:"
    sed -n '/kernel scale__/,$p' pending.txt >scale.txt
    has scale.txt "arg 0 = "
    has scale.txt "arg 1 = "
    hasnt scale.txt "arg 2 = "
    ;;
ab)
    # the bench-only A/B copy (bench/gpu/flight_ab.c; the GPU check flightab): SIGUSR2 removes the recorder's
    # hooks and adds them again; the calls between are not recorded, those after are
    abso=${6:?the path of the A/B copy}
    env LD_PRELOAD="$preload" CUSHIM_LOG=info CUSHIM_PLUGINS="$abso:dir=$shm,keep=1,signal=off" "$prog" ab >out 2>err
    rc=$?
    [ "$rc" = 0 ] || fail "exited with $rc"
    has err "each SIGUSR2 removes or adds again the recorder's 4 hook groups (now in)"
    has err "A/B copy: 2 switches, 0 failures"
    dump "$shm"/cushim-flight-*.ring
    has dump.txt "kernel scale__ppi"
    hasnt dump.txt "kernel shift__ppi"
    hasnt dump.txt "cuDeviceGetCount("
    has dump.txt "cuDriverGetVersion("
    has dump.txt "kernel bench__ppi"
    rm -f "$shm"/*
    # ab_paused=1: nothing recorded until the first signal
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$abso:dir=$shm,keep=1,signal=off,ab_paused=1" "$prog" ab >out 2>err
    [ "$?" = 0 ] || fail "ab_paused=1: exited with $?"
    dump "$shm"/cushim-flight-*.ring
    hasnt dump.txt "kernel scale__ppi"
    has dump.txt "kernel shift__ppi"
    hasnt dump.txt "kernel bench__ppi"
    ;;
segv)
    run "" segv
    [ "$rc" = 139 ] || fail "exited with $rc, not SIGSEGV's 139"
    flight_lines 1
    has err "flight: SIGSEGV (address 0x8) on thread"
    d=$(dump_path)
    [ -f "$d" ] || fail "the line names no file: $(cat err)"
    dump "$d"
    has dump.txt "event: the process died of signal 11"
    has dump.txt "at address 0x8"
    has dump.txt "kernel shift__ppi"
    json "$d" "any(e.get('ph') == 'i' and 'signal 11' in e['name'] for e in ev)" \
        "d['otherData']['cushim_flight']['event_kind'] == 3"
    ;;
hang)
    # the fake's synchronisation blocks 1.5 s; the watchdog dumps after 0.3 s, once
    FAKE_CUDA_SYNC_BLOCK_MS=1500 run "hang=0.3" hang
    [ "$rc" = 0 ] || fail "exited with $rc"
    has out "sync: 0"
    flight_lines 1
    grep -q "flight: cuCtxSynchronize[_v2]* has been blocked for [0-9.]* s on thread [0-9]* (hang=0.3): the last calls are in" err ||
        fail "no hang line"
    d=$(dump_path)
    dump "$d"
    has dump.txt "(the hang watchdog; dump 1)"
    sed -n '/^calls not returned:/,/^launches/p' dump.txt >running.txt
    grep -q "cuCtxSynchronize[_v2]*() (not returned)" running.txt || fail "the blocked call is not among the calls not returned"
    json "$d" "any(e.get('args', {}).get('unfinished') for e in X if e['name'].startswith('cuCtxSynchronize'))"
    ;;
attrib)
    # SIGUSR2: a dump; the launch's four pointers: inside, one past the end, freed, never allocated
    run "" attrib
    [ "$rc" = 0 ] || fail "exited with $rc"
    flight_lines 1
    has err "flight: SIGUSR2: the last calls are in"
    a=$(addr A) b=$(addr B) c=$(addr C)
    dump "$(dump_path)"
    has dump.txt "event: a dump asked for by signal 12"
    has dump.txt "arg 0 = $(hexadd "$a" 16): inside $a (4096 bytes, offset 16) made by #"
    has dump.txt "arg 1 = $(hexadd "$c" 4096): not inside any live allocation: one past the end of $c (4096 bytes) made by #"
    has dump.txt "arg 2 = $(hexadd "$b" 8): not inside any live allocation: inside $b (4096 bytes, offset 8) made by #"
    grep -q "arg 2 = .*freed by #[0-9]* cuMemFree_v2 before this call" dump.txt || fail "the freed one's release"
    has dump.txt "arg 3 = 0xdead0000: not inside any live allocation"
    has dump.txt "kernel attr__pppp"
    ;;
threads)
    # each thread its slice: 4 workers of 100 calls, 64 kept each (n=64)
    run "n=64" threads 4
    [ "$rc" = 137 ] || fail "exited with $rc"
    dump "$shm"/cushim-flight-*.ring
    n=$(grep -c "^thread [0-9]* (e2e_flight), ended: 100 calls, the last 64 kept" dump.txt)
    [ "$n" = 4 ] || fail "$n threads of 100 calls with 64 kept, expected 4"
    has dump.txt "64 calls kept per thread, 5 threads recorded"
    # one slice for the whole process (threads=1): the others are not recorded, said once; none crash
    rm -f "$shm"/*
    run "n=64,threads=1" threads 4
    [ "$rc" = 137 ] || fail "threads=1: exited with $rc"
    flight_lines 1
    has err "is not recorded: every slice is in use (threads=1); said once"
    dump "$shm"/cushim-flight-*.ring
    has dump.txt "not recorded: 4 threads"
    ;;
fork)
    # the child gets its own ring; the parent's holds none of the child's calls
    run "" fork
    [ "$rc" = 137 ] || fail "exited with $rc"
    cpid=$(sed -n 's/^child=//p' out) ppid=$(sed -n 's/^parent=//p' out)
    [ -n "$cpid" ] && [ -n "$ppid" ] || fail "no pids"
    [ "$(rings)" = 2 ] || fail "$(rings) rings, expected 2"
    dump --dir="$shm" "$cpid"
    has dump.txt "flight recorder of process $cpid"
    [ "$(grep -c 'cuDeviceGetCount(' dump.txt)" = 3 ] || fail "the child's ring lacks its 3 calls"
    hasnt dump.txt "cuModuleLoadData("
    dump --dir="$shm" "$ppid"
    hasnt dump.txt "cuDeviceGetCount("
    [ "$(grep -c 'cuDriverGetVersion(' dump.txt)" = 2 ] || fail "the parent's ring lacks its 2 cuDriverGetVersion"
    ;;
exec)
    # closed on exec: the new program starts with no descriptor or mapping of the ring and makes its own
    run "" exec
    [ "$rc" = 137 ] || fail "exited with $rc"
    grep -q "^before exec: [1-9][0-9]* ring references" out || fail "the ring was not open before exec"
    has out "after exec: 0 ring references"
    [ "$(rings)" = 1 ] || fail "$(rings) rings, expected the exec'd program's one"
    dump "$shm"/cushim-flight-*.ring
    [ "$(grep -c 'cuDeviceGetCount(' dump.txt)" = 5 ] || fail "the new program's calls are not in the ring"
    hasnt dump.txt "cuModuleLoadData("
    ;;
full|readonly)
    # a full /dev/shm or a read-only directory: one line, the program runs on
    if [ "$case_" = full ]; then mnt="size=16k"; else mnt="ro,size=1m"; fi
    if [ "$(id -u)" != 0 ] && [ "$case_" = readonly ]; then
        chmod 555 "$shm"
        run "" basic
        chmod 755 "$shm"
    elif unshare -rm true 2>/dev/null || { [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; }; then
        u=-rm
        unshare -rm true 2>/dev/null || u=-m
        env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:dir=$shm" unshare $u sh -c \
            'mount -t tmpfs -o "$1" tmpfs "$2" && exec "$3" basic' sh "$mnt" "$shm" "$prog" >out 2>err
        rc=$?
        grep -q "mount:" err && { echo "cannot mount a tmpfs here: $(cat err)"; exit 77; }
    else
        echo "no user or mount namespaces here: no full or read-only directory to test with"
        exit 77
    fi
    [ "$rc" = 0 ] || fail "exited with $rc"
    has out "A=0x"
    flight_lines 1
    if [ "$case_" = full ]; then
        has err "cannot reserve"
        has err "No space left on device; the flight recorder is off (the program runs on)"
    else
        has err "cannot create the ring in '$shm'"
        has err "; the flight recorder is off (the program runs on)"
    fi
    ;;
launcher)
    # cushim run --flight=N and derived flags; cushim flight dump PID and list
    launcher=${CUSHIM_LAUNCHER:?}
    env LD_PRELOAD= "$launcher" run --fake --flight=32 --flight-dir="$shm" -- "$prog" kill >out 2>err
    rc=$?
    [ "$rc" = 137 ] || fail "cushim run --flight exited with $rc"
    ring=$(ls "$shm"/cushim-flight-*.ring)
    pid=$(basename "$ring" | cut -d- -f3)
    "$launcher" flight dump --dir="$shm" "$pid" >dump.txt 2>dump.err || fail "cushim flight dump failed: $(cat dump.err)"
    has dump.txt "32 calls kept per thread"
    has dump.txt "kernel scale__ppi"
    "$launcher" flight list --dir="$shm" >list.txt 2>&1 || fail "cushim flight list failed"
    has list.txt "$ring"
    "$launcher" flight >/dev/null 2>&1; [ $? = 2 ] || fail "cushim flight: not a usage error"
    "$launcher" flight --help >help.txt 2>&1 || fail "cushim flight --help"
    has help.txt "cushim flight dump"
    env LD_PRELOAD= "$launcher" run --fake --flight --flight-dir="$shm" --flight-keep -- "$prog" basic >out 2>err ||
        fail "cushim run --flight failed"
    [ "$(rings)" = 2 ] || fail "--flight-keep: $(rings) rings"
    env LD_PRELOAD= "$launcher" run --fake --flight=x -- "$prog" basic >out 2>err; [ $? = 2 ] || fail "--flight=x accepted"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_]"
