#!/bin/sh
# run_trace.sh CASE PLUGIN PROGRAM VECADD STATS [FAKE_CUPTI]
# The trace plugin loaded by the preloaded shim through CUSHIM_PLUGINS, against the fake driver (ctest sets
# LD_PRELOAD and LD_LIBRARY_PATH). PROGRAM is e2e_trace (workloads by mode), STATS the cushim-stats helper.
# Every trace is loaded with Python's json module (a trace that does not parse fails the case).
set -u
case_=$1 plugin=$2 prog=$3 vecadd=$4 stats=$5 fakecupti=${6:-}
# the shim (and a sanitizer runtime before it) for the traced program only, not for sh, python3 and the tools
preload=${LD_PRELOAD-}
unset LD_PRELOAD
here=$(cd "$(dirname "$0")" && pwd)   # (pftrace.py beside this script)
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/trace.$case_
rm -rf "$dir"
mkdir -p "$dir" || exit 1
cd "$dir" || exit 1

fail() {
    echo "FAIL [$case_]: $*"
    for f in out err; do
        [ -f "$f" ] && sed "s/^/  $f: /" "$f" | head -60
    done
    exit 1
}

# check.py FILE EXPR...: loads FILE (.json or .json.gz), evaluates each Python expression over
# d (the document), ev (its events), X (the complete events of CUDA calls); fails on the first false one.
cat > check.py <<'PY'
import gzip, json, sys
path = sys.argv[1]
# strict UTF-8 whatever the locale: a file a strict reader cannot load fails here
d = json.load(gzip.open(path, 'rt', encoding='utf-8') if path.endswith('.gz') else open(path, encoding='utf-8'))
ev = d['traceEvents']
X = [e for e in ev if e.get('ph') == 'X' and e.get('cat') in ('cuda_driver', 'cuda_runtime')]
def count(name): return sum(1 for e in X if e['name'] == name)
for expr in sys.argv[2:]:
    if not eval(expr):
        print('check failed:', expr)
        sys.exit(1)
PY
check() { python3 check.py "$@" || fail "check of $1"; }
run() {   # run OPTIONS PROGRAM ARGS...: exit status in $rc
    opts=$1
    shift
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:$opts" CUSHIM_COUNTS="$dir/counts.tsv" "$@" >out 2>err
    rc=$?
}
# nvtx_run OPTIONS ARGS...: run the program with the plugin as its NVTX injection; skipped (77) where the
# program was built without NVTX headers (it prints its usage), failed where it exits with an error
nvtx_run() {
    NVTX_INJECTION64_PATH=$plugin run "$@"
    if grep -q "^usage: e2e_trace" err; then echo "built without NVTX headers"; exit 77; fi
    [ "$rc" = 0 ] || fail "$*: exited with $rc: $(tail -n 3 err)"
}
# the table at exit (stderr) equals cushim stats FILE
same_table() {
    "$stats" "$1" >stats.out 2>stats.err || fail "cushim-stats $1 failed: $(cat stats.err)"
    grep '^ ' err > t.exit
    grep '^ ' stats.out > t.stats
    [ -s t.exit ] || fail "no table on stderr"
    cmp -s t.exit t.stats || fail "cushim stats differs from the table at exit: $(diff t.exit t.stats | head)"
}

case $case_ in
vecadd)
    # CUSHIM_LOG=info: the writer's own figures (the cost line below) are printed at that level only
    CUSHIM_LOG=info run "file=$dir/t.json" "$vecadd" 4096
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    check t.json "len(X) > 20" \
        "[e['args'].get('kernel') for e in X if e['name'] == 'cuLaunchKernel'] == ['vecadd']" \
        "all(e['args']['result'] == 'CUDA_SUCCESS' for e in X)" \
        "[e['args']['name'] for e in X if e['name'] == 'cuModuleGetFunction'] == ['vecadd']" \
        "[e['args']['name'] for e in X if e['name'] == 'cuDeviceGetName'][0].startswith('cushim fake')" \
        "[e['args']['bytesize'] for e in X if e['name'] == 'cuMemAlloc_v2'] == [16384] * 3" \
        "all(e['args']['dptr'] not in (None, 0) for e in X if e['name'] == 'cuMemAlloc_v2')" \
        "d['otherData']['dropped_events'] == 0" \
        "any(e['ph'] == 'M' and e['name'] == 'thread_name' for e in ev)"
    # per API, the events equal the shim's own counts
    python3 - "$dir/counts.tsv" <<'PY' || fail "event counts differ from CUSHIM_COUNTS"
import json, sys
X = [e for e in json.load(open('t.json'))['traceEvents'] if e.get('ph') == 'X' and e.get('cat', '').startswith('cuda_')]
got = {}
for e in X: got[e['name']] = got.get(e['name'], 0) + 1
want = {}
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('\t')
    if len(f) == 2 and f[1].isdigit() and int(f[1]) > 0: want[f[0]] = int(f[1])
if got != want:
    print('trace:', sorted(got.items())); print('counts:', sorted(want.items())); sys.exit(1)
PY
    same_table t.json
    grep -q "cushim trace: $(check t.json 'True'; python3 -c "import json;print(json.load(open('t.json'))['otherData']['events'])") calls written to $dir/t.json" err \
        || fail "no summary line naming the file"
    grep -q "calls written to $dir/t.json; 0 dropped (buffer full); open it at https://ui.perfetto.dev" err \
        || fail "the summary line does not say how to open the file"
    # the cost line: record bytes per call as otherData's record_bytes / events, file bytes as the file's size
    python3 - <<'PY' || fail "the summary's bytes-per-call line"
import json, os, re, sys
d = json.load(open('t.json'))['otherData']
m = re.search(r'^cushim trace: ([0-9.]+) record bytes and ([0-9.]+) file bytes per call; writer ([0-9.]+) M calls/s '
              r'\(([0-9.]+) ms busy\)$', open('err').read(), re.M)
if not m:
    sys.exit('no cost line')
rec, fil = float(m.group(1)), float(m.group(2))
want_rec, want_fil = d['record_bytes'] / d['events'], os.path.getsize('t.json') / d['events']
if abs(rec - want_rec) > 0.06 or abs(fil - want_fil) > 0.06 or rec < 48:
    sys.exit('line %s; want record %.2f file %.2f' % (m.group(0), want_rec, want_fil))
PY
    ;;
runtime)
    run "file=$dir/t.json" "$prog" runtime
    [ "$rc" = 0 ] || fail "exited with $rc"
    check t.json "[e['args']['gridDim'] for e in X if e['name'] == 'cudaLaunchKernel'] == [{'x': 8, 'y': 1, 'z': 1}]" \
        "[e['args']['kind'] for e in X if e['name'] == 'cudaMemcpy'] == ['cudaMemcpyHostToDevice']" \
        "[e['args']['attrib'] for e in X if e['name'] == 'cuDeviceGetAttribute'] == ['CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT']" \
        "[e['args']['result'] for e in X if e['name'] == 'cudaMalloc'] == ['cudaSuccess']"
    # the driver launch nests under the runtime one (depth, parent, and in time), both name the kernel
    python3 - <<'PY' || fail "nesting"
import json, sys
X = [e for e in json.load(open('t.json'))['traceEvents'] if e.get('ph') == 'X']
ns = lambda v: round(v * 1000)
rt = [e for e in X if e['name'] == 'cudaLaunchKernel'][0]
drv = [e for e in X if e['name'].startswith('cuLaunchKernel') and e['args'].get('parent') == rt['args']['seq']]
assert len(drv) == 1, drv
d = drv[0]
assert d['args']['depth'] == 1 and rt['args']['depth'] == 0 and d['tid'] == rt['tid']
assert ns(rt['ts']) <= ns(d['ts']) and ns(d['ts']) + ns(d['dur']) <= ns(rt['ts']) + ns(rt['dur'])
assert d['args']['kernel'].startswith('kernel_') and rt['args']['kernel'] == d['args']['kernel'], (rt, d)
PY
    ;;
structs)
    run "file=$dir/t.json" "$prog" structs
    [ "$rc" = 0 ] || fail "exited with $rc"
    # shellcheck disable=SC2046 # two numbers
    set -- $(sed -n 's/^meminfo //p' out)
    check t.json "[e['args']['result'] for e in X if e['name'] == 'cuMemcpy2D_v2'] == ['CUDA_ERROR_NOT_SUPPORTED']" \
        "[(c['srcMemoryType'], c['dstMemoryType'], c['WidthInBytes'], c['Height'], c['srcPitch']) for c in (e['args']['pCopy'] for e in X if e['name'] == 'cuMemcpy2D_v2')] == [('CU_MEMORYTYPE_HOST', 'CU_MEMORYTYPE_DEVICE', 64, 4, 64)]" \
        "[e['args']['pCopy']['dstDevice'] for e in X if e['name'] == 'cuMemcpy2D_v2'] == [e['args']['dptr'] for e in X if e['name'] == 'cuMemAlloc_v2']" \
        "[(e['args']['free'], e['args']['total']) for e in X if e['name'] == 'cuMemGetInfo_v2'] == [($1, $2)]" \
        "[e['args']['fn'].startswith('0x') and e['args']['hStream'] == '0x0' for e in X if e['name'] == 'cuLaunchHostFunc'] == [True]"
    ;;
gz)
    run "file=$dir/t.json.gz" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    [ "$(od -An -tx1 -N2 t.json.gz | tr -d ' ')" = 1f8b ] || fail "not gzip data"
    check t.json.gz "count('cuLaunchKernel') == 1"
    same_table t.json.gz
    ;;
filter)
    run "file=$dir/t.json,filter=cat:alloc" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    check t.json "sorted(set(e['name'] for e in X)) == ['cuMemAlloc_v2']" "count('cuMemAlloc_v2') == 3"
    run "file=$dir/bad.json,filter=cat:nosuch" "$vecadd" 1024
    [ "$rc" != 0 ] || fail "a malformed filter was accepted"
    grep -q "filter 'cat:nosuch' is malformed: " err || fail "no message naming the bad filter"
    # valid, but naming no API: said once, with the headers it was matched against
    run "file=$dir/none.json,filter=cuNoSuchApi*" "$vecadd" 1024
    [ "$rc" != 0 ] || fail "a filter matching nothing was accepted"
    grep -q "filter 'cuNoSuchApi\*' matches no API of this build (CUDA " err || fail "no message for a filter matching nothing"
    [ "$(grep -o "matches no API" err | wc -l)" = 1 ] || fail "the no-match message is not said exactly once: $(cat err)"
    ;;
closefds)
    # the program closes every descriptor (the trace file's too) and opens a file that gets its number: not a
    # byte of the trace goes there; the trace file is reopened and complete
    run "file=$dir/t.json" "$prog" closefds 5000 victim.txt
    [ "$rc" = 0 ] || fail "exited with $rc"
    [ "$(cat victim.txt)" = "the program's own line
the program's own line" ] || fail "the program's file holds more than its two lines: $(head -c 300 victim.txt)"
    check t.json "count('cuCtxGetCurrent') == 10000"
    grep -q "reopened 1 time" err || fail "no word of the reopened file"
    # the same in gzip; then with the trace file removed after the close: it cannot be reopened, the program's
    # file stays untouched, and the summary says the trace is incomplete
    run "file=$dir/t.json.gz" "$prog" closefds 5000 victim.txt
    [ "$rc" = 0 ] || fail "gzip: exited with $rc"
    [ "$(wc -l < victim.txt)" = 2 ] || fail "gzip: the program's file holds more than its two lines"
    check t.json.gz "count('cuCtxGetCurrent') == 10000"
    # a pipe (no offset to go on at): /dev/stdout into cat
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:file=/dev/stdout" "$prog" closefds 5000 victim.txt 2>err \
        | cat > piped.json || fail "the pipe case failed"
    [ "$(wc -l < victim.txt)" = 2 ] || fail "pipe: the program's file holds more than its two lines"
    check piped.json "count('cuCtxGetCurrent') == 10000"
    grep -q "reopened 1 time" err || fail "pipe: no word of the reopened pipe: $(cat err)"
    run "file=$dir/gone.json" "$prog" closefds 5000 victim.txt "$dir/gone.json"
    [ "$rc" = 0 ] || fail "removed: exited with $rc"
    [ "$(wc -l < victim.txt)" = 2 ] || fail "removed: the program's file holds more than its two lines"
    [ ! -e gone.json ] || fail "the removed trace file came back"
    grep -q "WRITE ERROR: the program closed the file, which was then removed or replaced" err \
        || fail "removed: no word of the incomplete trace"
    ;;
bounded)
    # the table's memory is bounded (summary_exact): past it the median comes from a histogram, the table says
    # so, and cushim stats prints the same table from the file (the budget is in its otherData)
    run "file=$dir/t.json,summary_exact=1KiB" "$prog" many 20000
    [ "$rc" = 0 ] || fail "exited with $rc"
    grep -q "^Med (ns) from a histogram, within 0.4% .*: cuCtxGetCurrent$" err || fail "no word of the histogram median"
    check t.json "d['otherData']['summary_exact_values'] == 128" "count('cuCtxGetCurrent') == 20000"
    same_table t.json
    grep -q "^Med (ns) from a histogram" stats.out || fail "cushim stats: no word of the histogram median"
    ;;
full)
    # a file that cannot take the trace (/dev/full: every write fails with ENOSPC): the program runs on, the
    # error is said when it happens (with the summary off too) and the summary says the file is incomplete,
    # without pointing at Perfetto
    [ -w /dev/full ] || fail "no /dev/full here"
    # plain, and through gzip (the writer's own deflate): a .json.gz name that is /dev/full
    ln -s /dev/full full.json.gz || fail "ln"
    for f in /dev/full "$dir/full.json.gz"; do
        run "file=$f,summary=0" "$vecadd" 1024
        [ "$rc" = 0 ] || fail "$f, summary=0: vecadd exited with $rc"
        grep -q "trace: writing the trace file '$f': No space left on device; the trace ends after 0 bytes" err ||
            fail "$f, summary=0: the write error was not said: $(cat err)"
    done
    run "file=/dev/full" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    [ "$(grep -c "No space left on device" err)" = 2 ] || fail "not said twice (when, and in the summary)"
    grep -q "calls recorded; /dev/full is incomplete (WRITE ERROR: No space left on device after 0 bytes)" err ||
        fail "the summary does not say the file is incomplete"
    grep -q "calls written to" err && fail "the summary says the calls were written"
    grep -q "ui.perfetto.dev" err && fail "the summary points at Perfetto for a file cut short"
    grep -q "^ .*cuLaunchKernel$" err || fail "the table does not count the calls"
    # a summary file that cannot be opened: said, and the table comes on stderr instead
    run "file=$dir/t.json,summary_file=$dir/no/such/dir/s.txt" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "summary_file: vecadd exited with $rc"
    grep -q "cannot open the summary file '$dir/no/such/dir/s.txt': No such file or directory; the table follows here" err ||
        fail "summary_file: not said"
    grep -q "^ .*cuLaunchKernel$" err || fail "summary_file: the table is not on stderr"
    ;;
fifo)
    # a FIFO as the trace file: without a reader the program is not held (not traced, said so); with one, the
    # trace streams through it
    mkfifo ff || fail "mkfifo"
    run "file=$dir/ff" timeout 20 "$vecadd" 1024
    [ "$rc" = 0 ] || fail "no reader: vecadd exited with $rc (124: held at the FIFO)"
    grep -q "a FIFO with no reader" err || fail "no reader: not said: $(cat err)"
    cat ff > fifo.json &
    run "file=$dir/ff" timeout 20 "$vecadd" 1024
    wait
    [ "$rc" = 0 ] || fail "with a reader: vecadd exited with $rc"
    check fifo.json "count('cuLaunchKernel') == 1"
    ;;
threads)
    run "file=$dir/t.json" "$prog" threads 4
    [ "$rc" = 0 ] || fail "exited with $rc"
    check t.json "count('cuMemAlloc_v2') == 40" "count('cuMemsetD8_v2') == 40" \
        "len(set(e['tid'] for e in X if e['name'] == 'cuMemAlloc_v2')) == 4" \
        "all(sum(1 for e in X if e['tid'] == t) == 31 for t in set(e['tid'] for e in X if e['name'] == 'cuMemFree_v2'))"
    ;;
thread_names)
    # a thread is named as it was at its first recorded call, however late the writer gets there: not by the name
    # it took after (tn-later), nor 'thread N' for one that has ended (tn-gone); the Perfetto file alike
    run "file=$dir/t.json" "$prog" thread_names
    [ "$rc" = 0 ] || fail "exited with $rc"
    check t.json "sorted(e['args']['name'] for e in ev if e.get('name') == 'thread_name' and e['tid'] in \
                         set(x['tid'] for x in X if x['name'] == 'cuMemAlloc_v2')) == ['e2e_trace', 'tn-first', 'tn-gone']" \
        "not any(e['args']['name'] in ('tn-later',) or e['args']['name'].startswith('thread ') for e in ev \
                 if e.get('name') == 'thread_name')"
    run "file=$dir/t.perfetto-trace" "$prog" thread_names
    [ "$rc" = 0 ] || fail "perfetto: exited with $rc"
    python3 "$here/pftrace.py" --compare t.perfetto-trace t.json >pf.out 2>pf.err ||
        fail "the Perfetto file is not the JSON run's: $(cat pf.err)"
    ;;
fork)
    run "file=$dir/t.json" "$prog" fork
    [ "$rc" = 0 ] || fail "exited with $rc"
    child=$(sed -n 's/^child //p' out)
    [ -n "$child" ] || fail "no child pid"
    [ -f "t.$child.json" ] || fail "the child wrote no t.$child.json: $(ls)"
    check t.json "count('cuMemAlloc_v2') == 3" "d['otherData']['pid'] != $child"
    check "t.$child.json" "count('cuMemAlloc_v2') == 5" "d['otherData']['pid'] == $child" \
        "all(e['pid'] == $child for e in ev)"
    # cushim stats over both files: one table (3 + 5 allocations); a missing one fails the whole
    "$stats" t.json "t.$child.json" >stats.out 2>stats.err || fail "cushim-stats of two files: $(cat stats.err)"
    grep -q "^Over 2 trace files: t.json t.$child.json" stats.out || fail "no 'Over 2 trace files' line"
    [ "$(awk '$NF == "cuMemAlloc_v2" {print $3}' stats.out)" = 8 ] ||
        fail "two files: cuMemAlloc_v2 not 8 calls: $(grep cuMemAlloc_v2 stats.out)"
    "$stats" t.json nosuch.json >/dev/null 2>stats.err && fail "cushim-stats with a missing file succeeded"
    grep -q "nosuch.json" stats.err || fail "the missing file is not named: $(cat stats.err)"
    ;;
shared)
    # two processes (not one forked from the other) given the same FILE at the same time: the first holds it, the
    # second writes t.<pid>.json and says so; both files whole. Started one after the other, the last one wins.
    command -v flock >/dev/null || fail "flock(1) (util-linux) not found"
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:file=$dir/t.json" "$prog" many_wait 1000 "$dir/go" 1 \
        >a.out 2>a.err &
    apid=$!
    k=0
    until [ -f t.json ] && ! flock -n t.json true; do   # A has opened t.json and holds it
        k=$((k + 1))
        [ $k -lt 1000 ] || { kill $apid; fail "the first process never held t.json: $(cat a.err)"; }
        sleep 0.01
    done
    run "file=$dir/t.json" "$vecadd" 1024
    echo go > go
    wait $apid
    arc=$?
    [ "$rc" = 0 ] || fail "the second process exited with $rc"
    [ "$arc" = 0 ] || fail "the first process exited with $arc: $(cat a.err)"
    grep -q "grew" a.out || fail "the first process did not see go: $(cat a.out)"
    bfile=$(sed -n "s|.*the trace file '$dir/t.json' is being written by another process; this one writes '\(.*\)'.*|\1|p" err)
    [ -n "$bfile" ] || fail "the second process did not say where it wrote: $(cat err)"
    case $bfile in "$dir"/t.[0-9]*.json) ;; *) fail "the second process wrote $bfile" ;; esac
    check t.json "count('cuCtxGetCurrent') == 1000" "count('cuLaunchKernel') == 0"
    check "$bfile" "count('cuLaunchKernel') == 1" "count('cuCtxGetCurrent') == 0" \
        "d['otherData']['pid'] == int('$bfile'.split('.')[-2])"
    grep -q "calls written to $bfile" err || fail "the summary does not name $bfile: $(cat err)"
    # the lock went with the first process: a third one, afterwards, writes t.json over
    run "file=$dir/t.json" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "the third process exited with $rc"
    ! grep -q "being written by another process" err || fail "t.json still held: $(cat err)"
    check t.json "count('cuLaunchKernel') == 1" "count('cuCtxGetCurrent') == 0"
    # a name held by something else (here flock(1)) is left untouched, .gz names too
    echo "not a trace" > held.json.gz
    flock held.json.gz env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:file=$dir/held.json.gz" "$vecadd" 1024 \
        >out 2>err || fail "under flock: exited with $?"
    [ "$(cat held.json.gz)" = "not a trace" ] || fail "the held file was written"
    hfile=$(ls held.[0-9]*.json.gz 2>/dev/null)
    [ -n "$hfile" ] || fail "no held.<pid>.json.gz: $(ls)"
    check "$hfile" "count('cuLaunchKernel') == 1"
    # a file system without flock (ENOSYS): the file is written, unlocked, not refused
    echo "an old trace, longer than the new one will be: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" > nl.json
    env LD_PRELOAD="$preload${preload:+:}${E2E_FLOCK_ENOSYS:?}" CUSHIM_PLUGINS="$plugin:file=$dir/nl.json" \
        "$vecadd" 1024 >out 2>err || fail "flock ENOSYS: exited with $?"
    ! grep -q "cannot write the trace file" err || fail "flock ENOSYS: refused: $(cat err)"
    check nl.json "count('cuLaunchKernel') == 1"
    ;;
exec)
    # the process executes another program (itself) after 3 calls: its trace so far stays in t.json (unfinished:
    # cushim stats --close ends a copy), the new program's goes to t.<pid>.json, said in a warning
    run "file=$dir/t.json" "$prog" exec "$dir/t.json"
    [ "$rc" = 0 ] || fail "exited with $rc (3: the writer never wrote the first calls)"
    pid=$(sed -n 's/^pid //p' out)
    [ -n "$pid" ] || fail "no pid"
    grep -q "the trace file '$dir/t.json' holds this process's calls from before it executed this program" err ||
        fail "not said: $(cat err)"
    [ -f "t.$pid.json" ] || fail "no t.$pid.json: $(ls)"
    check "t.$pid.json" "count('cuMemAlloc_v2') == 5" "d['otherData']['pid'] == $pid"
    "$stats" --close t.json closed.json >/dev/null 2>stats.err || fail "cushim stats --close t.json: $(cat stats.err)"
    check closed.json "count('cuMemAlloc_v2') == 3" "count('cuMemFree_v2') == 3"
    ;;
names)
    # %q{VAR} (an environment variable, as nsys names files per rank), %h (the host), %p (the pid), %% (a %)
    E2E_RANK=3 run "file=$dir/r.%q{E2E_RANK}.json" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "%q: exited with $rc"
    check r.3.json "count('cuLaunchKernel') == 1"
    run "file=$dir/h.%h.%%.%p.json" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "%h: exited with $rc"
    f=$(ls h.*.json)
    [ "$f" = "h.$(hostname).%.$(sed -n 's/.*"otherData":{[^}]*"pid":\([0-9]*\).*/\1/p' "$f").json" ] || fail "%h.%%.%p gave $f"
    check "$f" "count('cuLaunchKernel') == 1"
    unset E2E_NO_SUCH_VAR
    run "file=$dir/u.%q{E2E_NO_SUCH_VAR}.json" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "unset %q: exited with $rc"
    grep -q "the environment variable E2E_NO_SUCH_VAR is not set" err || fail "unset %q not said: $(cat err)"
    check u..json "count('cuLaunchKernel') == 1"
    ;;
toggle)
    # toggle=USR2: the 3 allocations between the two signals are not recorded, the 2 before and the 4 after are
    run "file=$dir/t.json,toggle=USR2" "$prog" toggle
    [ "$rc" = 0 ] || fail "exited with $rc: $(tail -n 3 err)"
    check t.json "count('cuMemAlloc_v2') == 6" "count('cuMemFree_v2') == 6"
    # paused=1: the reverse (only the 3 between the signals)
    run "file=$dir/t2.json,toggle=SIGUSR2,paused=1" "$prog" toggle
    [ "$rc" = 0 ] || fail "paused: exited with $rc: $(tail -n 3 err)"
    check t2.json "count('cuMemAlloc_v2') == 3"
    # unhook=1: the same counts (once the hooks have followed the signal), the hooks removed once while paused
    run "file=$dir/t4.json,toggle=USR2,unhook=1" "$prog" toggle wait
    [ "$rc" = 0 ] || fail "unhook: exited with $rc: $(tail -n 3 err)"
    check t4.json "count('cuMemAlloc_v2') == 6" "count('cuMemFree_v2') == 6"
    grep -q "hooks removed 1 time while paused (unhook)" err || fail "unhook: the hooks were not removed: $(cat err)"
    run "file=$dir/t5.json,toggle=USR2,paused=1,unhook=1" "$prog" toggle wait
    [ "$rc" = 0 ] || fail "unhook, paused: exited with $rc: $(tail -n 3 err)"
    check t5.json "count('cuMemAlloc_v2') == 3"
    grep -q "hooks removed 2 times while paused (unhook)" err || fail "unhook, paused: not removed twice: $(cat err)"
    # a signal that is not USR1/USR2/RTMIN+N: a warning, and everything recorded
    run "file=$dir/t3.json,toggle=TERM" "$prog" many 5
    [ "$rc" = 0 ] || fail "toggle=TERM: exited with $rc"
    grep -q "toggle=TERM: not USR1, USR2 or RTMIN+N" err || fail "no warning for toggle=TERM: $(cat err)"
    check t3.json "count('cuCtxGetCurrent') == 5"
    ;;
durations)
    # a call's duration is the real call's time whichever reads the exit clock: the core (CUSHIM_HOOK_EXIT_TIME:
    # the default, and with unhook) or the post hooks (toggle without unhook); cuStreamSynchronize waits for the
    # fake driver's 200 ms kernel (at least 150 ms of it), and no other call may take 150 ms (a loaded machine
    # can deschedule a call for tens of ms: 50 ms of room either way; 5 ms before, with a 30 ms kernel)
    export FAKE_CUDA_KERNEL_US=200000
    for o in "" ",toggle=USR2" ",toggle=USR2,unhook=1"; do
        run "file=$dir/d.json$o" "$vecadd" 4096
        [ "$rc" = 0 ] || fail "options '$o': vecadd exited with $rc: $(tail -n 3 err)"
        check d.json "[e['dur'] >= 150000 for e in X if e['name'] == 'cuStreamSynchronize'] == [True]" \
            "all(0 <= e['dur'] < 1e7 for e in X)" \
            "all(e['dur'] < 150000 for e in X if e['name'] not in ('cuStreamSynchronize', 'cuMemcpyDtoH_v2'))"
        rm -f d.json
    done
    unset FAKE_CUDA_KERNEL_US
    ;;
clock)
    # the calls' times on CLOCK_MONOTONIC's timeline whichever clock the hooks read: the TSC (clock=tsc, read in
    # the hooks, converted by the writer with its (TSC, now_ns) pairs: tr_clock.c) or the host's (clock=host);
    # both formats. Each call's start and end lie within the program's own readings around it (100 us of slack:
    # the host's clock follows CLOCK_MONOTONIC to within its drift over a second, ~1e-5 at worst in its first
    # second; a conversion with a rate 1% off is ~1 ms off over the run's ~70 ms, ticks taken for ns seconds),
    # and on each thread the calls start in the order of their seq (the Perfetto format encodes the same
    # rendered times: trace_perfetto); with NVTX, each mark the program makes after a call - timed with the shim's
    # clock (host->now_ns), as CUPTI's GPU records are - lies between that call's end and the next call's start:
    # the converted TSC and the shim's clock are one timeline to within the tens of ns between them
    for clk in tsc host; do
        for f in c.json; do
            NVTX_INJECTION64_PATH=$plugin run "file=$dir/$f,clock=$clk" "$prog" clock
            if [ "$clk" = tsc ] && grep -q "clock=tsc: this CPU's TSC" err; then
                echo "clock=tsc: not here ($(grep -m1 'clock=tsc' err)); the host's clock alone checked"
                continue 2
            fi
            [ "$rc" = 0 ] || fail "clock=$clk $f: exited with $rc: $(tail -n 3 err)"
            python3 - c.json out "$clk" <<'PY' || fail "clock=$clk $f: the calls' times"
import collections, json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
X = [e for e in d['traceEvents'] if e.get('ph') == 'X' and e.get('cat') == 'cuda_driver']
marks = collections.defaultdict(list)   # (thread, name) -> [(before, after)] in rounds' order
for l in open(sys.argv[2]):
    if l.startswith('clock '):
        _, th, i, name, t0, t1 = l.split()
        marks[(int(th), name)].append((int(t0), int(t1)))
names = ('cuDriverGetVersion', 'cuMemAlloc_v2', 'cuLaunchKernel', 'cuDeviceGetName')
assert sorted(marks) == sorted((th, n) for th in (0, 1) for n in names) and \
    all(len(v) == 30 for v in marks.values()), 'the program printed %d series' % len(marks)
by_tid = collections.defaultdict(list)
for e in X:
    by_tid[e['tid']].append(e)
tids = [tid for tid, ev in by_tid.items() if sum(e['name'] == 'cuDeviceGetName' for e in ev) == 30]
assert len(tids) == 2, 'threads with 30 cuDeviceGetName: %d' % len(tids)
slack = 100e3
def off(tid, th):
    """the worst distance (ns) of thread tid's calls outside thread th's readings, 0 when all are within"""
    worst = 0
    for n in names:
        ev = sorted((e for e in by_tid[tid] if e['name'] == n), key=lambda e: e['args']['seq'])
        assert len(ev) == 30, (n, len(ev))
        for e, (lo, hi) in zip(ev, marks[(th, n)]):
            for t in (e['ts'] * 1e3, (e['ts'] + e['dur']) * 1e3):
                worst = max(worst, lo - t, t - hi)
    return worst
best = min(max(off(tids[0], 0), off(tids[1], 1)), max(off(tids[0], 1), off(tids[1], 0)))
if best > slack:
    print('clock=%s: a call %.0f ns outside the program\'s readings around it' % (sys.argv[3], best))
    sys.exit(1)
marks = [e for e in d['traceEvents'] if e.get('cat') == 'nvtx' and e.get('ph') == 'i' and e['name'] != 'start']
margin = None
for tid in tids:   # depth 0: one call after another
    ev = sorted((e for e in by_tid[tid] if e['args']['depth'] == 0), key=lambda e: e['args']['seq'])
    for a, b in zip(ev, ev[1:]):
        if not a['ts'] < b['ts']:
            print('clock=%s: seq %d starts at %s, after seq %d at %s' % (sys.argv[3], a['args']['seq'], a['ts'],
                                                                         b['args']['seq'], b['ts']))
            sys.exit(1)
    mk = sorted((m for m in marks if m['tid'] == tid), key=lambda m: m['ts'])
    if marks and len(mk) != 120:
        print('clock=%s: %d marks on thread %s, not 120' % (sys.argv[3], len(mk), tid))
        sys.exit(1)
    # each mark after the call it follows (the call that ends last before it) and before the next one starts
    calls = [(e['ts'], e['ts'] + e['dur'], e['name']) for e in ev]
    for m in mk:
        before = [c for c in calls if c[0] <= m['ts']]
        after = [c for c in calls if c[0] > m['ts']]
        if not before or before[-1][1] > m['ts']:
            print('clock=%s: the mark %r at %.3f us lies inside %s (%.3f..%.3f)' % (sys.argv[3], m['name'], m['ts'],
                  before[-1][2] if before else '-', before[-1][0] if before else 0, before[-1][1] if before else 0))
            sys.exit(1)
        gap = min(m['ts'] - before[-1][1], (after[0][0] - m['ts']) if after else 1e9)
        margin = gap if margin is None else min(margin, gap)
print('clock=%s: %d calls within the readings (worst %.0f ns out), %d marks between them (closest %s ns)' %
      (sys.argv[3], len(X), max(best, 0), len(marks), '%.0f' % (margin * 1e3) if margin is not None else '-'))
PY
            rm -f c.json
        done
    done
    run "file=$dir/c.json,clock=cycles" "$prog" clock
    grep -q "clock=cycles: auto, tsc or host" err || fail "clock=cycles: not refused: $(tail -n 3 err)"
    ;;
sigterm)
    run "file=$dir/t.json" "$prog" sigterm
    [ "$rc" = 143 ] || fail "expected death by SIGTERM (143), got $rc"
    check t.json "count('cuMemAlloc_v2') == 4" "d['otherData']['end_signal'] == 15" "'note' not in d['otherData']"
    # with gpu: CUPTI is not flushed in the handler, and the file says what that leaves out
    if [ -n "$fakecupti" ]; then
        run "file=$dir/t.json,gpu=1,cupti=$fakecupti" "$prog" sigterm
        [ "$rc" = 143 ] || fail "gpu: expected death by SIGTERM (143), got $rc"
        check t.json "count('cuMemAlloc_v2') == 4" "d['otherData']['end_signal'] == 15" \
            "d['otherData']['note'].startswith('finished by signal 15: GPU work')"
    fi
    ;;
segv|segv_raise|abort)
    # a fault and abort(): the file is finished before the process dies of the signal (under ASan, its
    # own SIGSEGV report follows ours and exits with 1)
    run "file=$dir/t.json" "$prog" "$case_"
    # 3: the program went on after the signal
    [ "$rc" != 0 ] && [ "$rc" != 3 ] || fail "expected a death by the signal, got exit status $rc"
    check t.json "count('cuMemAlloc_v2') == 4"
    ;;
thread_exit)
    run "file=$dir/t.json" "$prog" thread_exit
    [ "$rc" = 0 ] || fail "exited with $rc"
    check t.json "count('cuMemAlloc_v2') == 4" "len(set(e['tid'] for e in X)) == 2"
    ;;
inflight_exit|inflight_abort)
    # exit() and abort() while main is inside cudaStreamSynchronize and the cuStreamSynchronize in it (fast-path
    # calls: one record at exit, none yet): both written as unfinished from the thread's open-call stack,
    # innermost first, nested, their arguments marked unrecorded
    how=${case_#inflight_}
    run "file=$dir/t.json" "$prog" inflight "$how"
    if [ "$how" = exit ]; then
        [ "$rc" = 0 ] || fail "exited with $rc"
    else
        [ "$rc" != 0 ] && [ "$rc" != 3 ] || fail "expected a death by SIGABRT, got exit status $rc"
    fi
    check t.json "count('cuMemAlloc_v2') == 1" \
        "[e['name'] for e in ev if e.get('cat') == 'cuda_api_unfinished'] == ['cuStreamSynchronize', 'cudaStreamSynchronize']" \
        "[(e['args']['depth'], e['args'].get('args_unrecorded'), e['args'].get('unfinished')) for e in ev if e.get('cat') == 'cuda_api_unfinished'] == [(1, True, True), (0, True, True)]" \
        "[e for e in ev if e['name'] == 'cuStreamSynchronize'][0]['args']['parent'] == [e for e in ev if e['name'] == 'cudaStreamSynchronize'][0]['args']['seq']" \
        "[round((e['ts'] + e['dur']) * 1000) for e in ev if e['name'] == 'cudaStreamSynchronize'][0] >= [round(e['ts'] * 1000) for e in ev if e['name'] == 'cuStreamSynchronize'][0]" \
        "not any(e['name'].endswith('StreamSynchronize') for e in X)"
    ;;
nvtx)
    nvtx_run "file=$dir/t.json" "$prog" nvtx
    # a domain's events say it (args.domain); "L" of domain e2e popped under "B" of the default domain: B ends
    # with it and opens again (args.continued), so that the file's B/E nest; a range popped by the payload
    # extension's nvtxRangePopPayload (as NCCL pops some) ends; threads named by nvtxNameOsThread (the main
    # thread itself, a worker by the main thread): the last thread_name event of each is that name
    check t.json "[(e['ph'], e['name']) for e in ev if e.get('cat') == 'nvtx'] == [('B', 'outer'), ('B', 'inner'), ('E', ''), ('E', ''), ('b', 'async range'), ('i', 'a mark'), ('e', ''), ('B', 'domain range'), ('E', ''), ('B', 'registered range'), ('E', ''), ('B', 'wide range'), ('E', ''), ('B', 'wide \u00e9\u4e2d\U0001f600 ?x'), ('E', ''), ('B', 'A'), ('B', 'L'), ('B', 'B'), ('E', ''), ('E', ''), ('B', 'B'), ('E', ''), ('E', ''), ('i', 'L'), ('B', 'payload pop'), ('E', ''), ('B', 'bytes \\x01\\xe9 !'), ('E', '')]" \
        "[e.get('args') for e in ev if e.get('cat') == 'nvtx' and e['ph'] in 'Bi'] == [None, None, None, {'domain': 'e2e'}, {'domain': 'e2e'}, None, None, None, {'domain': 'e2e'}, None, {'continued': True}, {'domain': 'e2e'}, {'domain': 'e2e'}, None]" \
        "[e['ts'] for e in ev if e.get('cat') == 'nvtx' and e['ph'] == 'B' and e.get('args') == {'continued': True}][0] > [e['ts'] for e in ev if e.get('cat') == 'nvtx' and e['ph'] == 'E'][-5]" \
        "count('cuMemAlloc_v2') == 4" \
        "[e['args']['name'] for e in ev if e.get('name') == 'thread_name' and e['tid'] == [x for x in X if x['name'] == 'cuCtxGetCurrent'][-1]['tid']][-1] == 'e2e worker'" \
        "[e['args']['name'] for e in ev if e.get('name') == 'thread_name' and e['tid'] == d['otherData']['pid']][-1] == 'e2e main'"
    # nvtx_sum (at exit, equal to cushim stats'): every range once, from its push to its pop ("B" across its two
    # slices), the start/end range from its start to its end; the durations from the events' times here
    same_table t.json
    grep -q '^NVTX Range Summary (nvtx_sum):' err || fail "no nvtx_sum table at exit"
    "$stats" --format=json t.json >stats.json || fail "cushim stats --format=json failed"
    python3 - t.json stats.json <<'PY' || fail "nvtx_sum is not the file's ranges"
import json, sys
ev = [e for e in json.load(open(sys.argv[1], encoding='utf-8'))['traceEvents'] if e.get('cat') == 'nvtx']
ts = [round(e['ts'] * 1000) for e in ev]
# the events as the check above lists them: (style, range, first event, last event)
want = [('PushPop', ':outer', 0, 3), ('PushPop', ':inner', 1, 2), ('StartEnd', ':async range', 4, 6),
        ('PushPop', 'e2e:domain range', 7, 8), ('PushPop', 'e2e:registered range', 9, 10),
        ('PushPop', ':wide range', 11, 12), ('PushPop', ':' + ev[13]['name'], 13, 14), ('PushPop', ':A', 15, 22),
        ('PushPop', 'e2e:L', 16, 19), ('PushPop', ':B', 17, 21), ('PushPop', 'e2e:payload pop', 24, 25),
        ('PushPop', ':bytes \x01\xe9 !', 26, 27)]
want = sorted((s, r, 1, ts[b] - ts[a]) for s, r, a, b in want)
got = sorted((r['style'], r['name'], r['count'], r['total_ns']) for r in json.load(open(sys.argv[2]))['nvtx_sum'])
if got != want:
    print('nvtx_sum', got, '\nwanted', want)
    sys.exit(1)
PY
    ;;
nvtx_threads)
    # NVTX ranges on 4 threads, start/end ranges ended on another thread than their start (the writer may see the
    # end first): every range in nvtx_sum, the table at exit equal to cushim stats'
    nvtx_run "file=$dir/t.json" "$prog" nvtx_threads
    same_table t.json
    "$stats" --format=json t.json >stats.json || fail "cushim stats --format=json failed"
    python3 - stats.json <<'PY' || fail "nvtx_sum does not count every range"
import json, sys
got = {(r['style'], r['name']): r['count'] for r in json.load(open(sys.argv[1]))['nvtx_sum']}
want = {('PushPop', ':t%d outer' % k): 2000 for k in range(4)}
want.update({('PushPop', ':inner'): 8000, ('StartEnd', ':async'): 8000})
if got != want:
    print('nvtx_sum', got)
    sys.exit(1)
PY
    ;;
nvtx_signal)
    # a signal handler that records (an NVTX mark) on a thread interrupted while it writes a record: the mark
    # is not kept and counted (interrupted_records, the summary), never written into the same bytes or a chunk
    # the thread is switching (before: records written over each other, or a handler waiting on the chunk pool
    # lock its own thread held). Every call and range of the main thread is in the file whole; every mark is in
    # the file or counted; the ranges nest
    nvtx_run "file=$dir/t.json,buffer=64MiB" "$prog" nvtx_signal 60000
    marks=$(sed -n 's/^marks //p' out)
    [ -n "$marks" ] && [ "$marks" -gt 100 ] || fail "the timer's handler ran ${marks:-no} times: $(cat out)"
    check t.json "count('cuCtxGetCurrent') == 60000" "count('cuMemAlloc_v2') == 60001" "count('cuMemFree_v2') == 60001" \
        "d['otherData']['dropped_events'] == 0" \
        "len([e for e in ev if e.get('cat') == 'nvtx' and e['ph'] == 'i' and e['name'] == 'sig']) + d['otherData'].get('interrupted_records', 0) == $marks" \
        "[e['ph'] for e in ev if e.get('cat') == 'nvtx' and e['ph'] in 'BE'] == ['B', 'E'] * 60000" \
        "all(e['name'] == 'm' for e in ev if e.get('cat') == 'nvtx' and e['ph'] == 'B')"
    n_int=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['otherData'].get('interrupted_records', 0))" t.json)
    if [ "$n_int" != 0 ]; then
        grep -q "; $n_int calls\{0,1\} or NVTX events\{0,1\} made in a signal handler while its thread wrote a record: not kept" err ||
            fail "the summary does not say $n_int interrupted records: $(grep 'calls written' err)"
    fi
    echo "$marks marks by the handler, $n_int of them interrupted a record and were not kept"
    # the handler makes a recorded call instead: one that interrupts a record (an NVTX range's) is not
    # recorded and counted, one that interrupts a hook is made straight through (not recorded, as any call
    # a hook makes); the rest are recorded; the thread's own calls and ranges are all there, whole
    nvtx_run "file=$dir/c.json,buffer=64MiB" "$prog" nvtx_signal 60000 cuda
    calls=$(sed -n 's/^marks //p' out)
    [ -n "$calls" ] && [ "$calls" -gt 100 ] || fail "cuda: the timer's handler ran ${calls:-no} times: $(cat out)"
    check c.json "count('cuMemAlloc_v2') == 60001" "count('cuMemFree_v2') == 60001" \
        "60000 <= count('cuCtxGetCurrent') <= 60000 + $calls - d['otherData'].get('interrupted_records', 0)" \
        "d['otherData']['dropped_events'] == 0" \
        "[(e['ph'], e['name']) for e in ev if e.get('cat') == 'nvtx' and e['ph'] in 'BE'] == [('B', 'm'), ('E', '')] * 60000" \
        "all(e['args'].get('depth', 0) <= 1 for e in X if e['name'] == 'cuCtxGetCurrent')"
    echo "cuda: $calls calls by the handler, $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['otherData'].get('interrupted_records', 0))" c.json) of them interrupted a record"
    ;;
nvtx_domains)
    # past 30 named domains (beside the default) the plugin keeps one slot, "(other domains)", with one stack a
    # thread (docs/plugins/trace.md): the first 30 ranges name their domain, the other 10 that slot; every B has
    # its E and the ranges nest (pushed 0..39, popped 39..0); the two shared ones pushed and popped in their own
    # order (r35, r36, pop d35, pop d36) still end in order; nvtx_sum (at exit = cushim stats') has a row each
    nvtx_run "file=$dir/t.json" "$prog" nvtx_domains
    check t.json "[(e['ph'], e['name']) for e in ev if e.get('cat') == 'nvtx'] == [('B', 'r%d' % i) for i in range(40)] + [('E', '')] * 40 + [('B', 'r35'), ('B', 'r36'), ('E', ''), ('E', '')]" \
        "[e['args']['domain'] for e in ev if e.get('cat') == 'nvtx' and e['ph'] == 'B'] == ['d%d' % i for i in range(30)] + ['(other domains)'] * 12" \
        "count('cuMemAlloc_v2') == 2"
    same_table t.json
    "$stats" --format=json t.json >stats.json || fail "cushim stats --format=json failed"
    python3 - stats.json <<'PY' || fail "nvtx_sum does not have each range"
import json, sys
got = sorted((r['name'], r['count']) for r in json.load(open(sys.argv[1]))['nvtx_sum'])
want = sorted([('d%d:r%d' % (i, i), 1) for i in range(30)] + [('(other domains):r%d' % i, 1) for i in range(30, 40)
                                                               if i not in (35, 36)] +
              [('(other domains):r35', 2), ('(other domains):r36', 2)])
if got != want:
    print('nvtx_sum', got)
    sys.exit(1)
PY
    ;;
nvtx_names)
    # more NVTX names than nvtx_sum has rows for (TR_NVTX_NAMES_MAX, 16384): the first 16,384 names their own rows
    # ("r0" twice), the other 3,616 ranges summed in the fold row, said at exit and by cushim stats; the tables equal
    nvtx_run "file=$dir/t.json" "$prog" nvtx_names 20000
    same_table t.json
    grep -q "cushim trace: 3616 NVTX ranges of names past the first 16384 are in the rows" err || fail "no word of the fold at exit"
    grep -q "cushim stats: 3616 NVTX ranges of names past the first 16384 are in the rows" stats.err || fail "no word of the fold: $(cat stats.err)"
    [ "$(grep -c '  PushPop  :r' err)" = 16384 ] || fail "not 16384 named rows: $(grep -c '  PushPop  :r' err)"
    [ "$(awk '$NF == ":r0" {print $3}' err)" = 2 ] || fail "r0 not 2 instances"
    grep -q "^ .*  3,616  .*  PushPop  (the rest: names past the table's first ones)" err || fail "no fold row of 3,616"
    ;;
hostile)
    # names the program chooses (tests/e2e/e2e_trace_names.c: a kernel's, NVTX ranges' and a domain's, the
    # thread's) holding ESC sequences, a newline, bytes that are not UTF-8, C1, U+202E, a quote, a backslash: the
    # trace is strict JSON and keeps the bytes (those that are not UTF-8 as \u00XX), the table at exit and cushim
    # stats' tables are UTF-8 with no control character but line ends and equal, --format=json is strict JSON
    NVTX_INJECTION64_PATH=$plugin run "file=$dir/t.json" "${E2E_TRACE_NAMES:?}"
    [ "$rc" = 0 ] || fail "exited with $rc: $(tail -n 3 err)"
    check t.json "[e['args']['kernel'] for e in X if e['name'] == 'cuLaunchKernel'] == [e['args']['name'] for e in X if e['name'] == 'cuModuleGetFunction']" \
        "[e['args']['kernel'] for e in X if e['name'] == 'cuLaunchKernel'][0].startswith('k\x1b[31mred\x1b]0;title\x07\n\t\x01\x7f\xff\x9b2J\u009b\u202e')" \
        "[e['args']['name'] for e in ev if e['name'] == 'thread_name' and e['tid'] == max(x['tid'] for x in X)] != []"
    "$stats" t.json >stats.out 2>stats.err || fail "cushim-stats: $(cat stats.err)"
    "$stats" --format=json t.json >stats.json 2>>stats.err || fail "cushim-stats --format=json: $(cat stats.err)"
    python3 - <<'PY' || fail "an output holds what it must not"
import json, sys, unicodedata
bidi = set('\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069')
for f in ('err', 'stats.out', 'stats.err'):
    text = open(f, 'rb').read().decode('utf-8')   # strict
    bad = [c for c in text if (unicodedata.category(c) == 'Cc' and c != '\n') or c in bidi]
    if bad:
        sys.exit('%s: %r' % (f, bad[:10]))
d = json.load(open('stats.json', encoding='utf-8'))
ranges = [r['name'] for r in d['nvtx_sum']]
if not any(r.startswith(':r\x1b[31mred') for r in ranges) or not any(r.startswith(':s\x1b[31mred') for r in ranges):
    sys.exit('nvtx_sum: %r' % ranges)
PY
    if ! grep -q "built without NVTX headers" out; then
        # (a byte that is not UTF-8 is U+00XX, as a JSON reader decodes the file's \u00XX: 0xff is 'ÿ')
        grep -q "^ .*  PushPop   :r?\[31mred?\]0;title?????ÿ?2J??" err || fail "no range row at exit: $(grep PushPop err)"
        same_table t.json
    fi
    ;;
exports)
    # the plugin exports its entry point and NVTX's two injection entry points, nothing else (built with the
    # NVTX headers; without them only the entry point; names starting with _ - a sanitizer's - aside)
    syms=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TWDBRV]$/ && $3 !~ /^_/ {print $3}' | sort | tr '\n' ' ')
    case $syms in
      "InitializeInjectionNvtx2 InitializeInjectionNvtxExtension cushim_plugin_entry "|"cushim_plugin_entry "|\
      "InitializeInjectionNvtx2 cushim_plugin_entry ") ;;
      *) fail "the plugin exports: $syms" ;;
    esac
    ;;
capture)
    # capture=cudaProfilerApi: only the 7 allocations between cuProfilerStart/cuProfilerStop and
    # cudaProfilerStart/cudaProfilerStop are recorded (the 5 outside are not), nor the profiler calls themselves
    for v in "" ",unhook=1" ":threads"; do
        o=${v%%:*}
        a=; [ "$v" = ":threads" ] && a=threads
        run "file=$dir/t.json,capture=cudaProfilerApi$o" "$prog" capture $a
        [ "$rc" = 0 ] || fail "capture$v: exited with $rc: $(tail -n 3 err)"
        check t.json "count('cuMemAlloc_v2') == 7" "count('cuMemsetD8_v2') == 7" "count('cuMemFree_v2') == 7" \
            "not any('Profiler' in e['name'] for e in X)" "d['otherData']['capture'] == 'cudaProfilerApi'" \
            "d['otherData']['capture_ranges'] == 2"
        grep -q "; 2 capture ranges (cudaProfilerApi)" err || fail "capture$v: the summary does not say 2 ranges: $(cat err)"
        same_table t.json
    done
    # unhook=1: removed at the start, and at each of the two stops, added at each start (on the calling thread)
    run "file=$dir/t.json,capture=cudaProfilerApi,unhook=1" "$prog" capture
    grep -q "hooks removed 3 times while paused (unhook)" err || fail "unhook: not removed 3 times: $(cat err)"
    # capture_end: the first range only (its 3), or the first 2 (all 7); with unhook the hooks stay removed after
    # the last range allowed (removed at the start and at the first stop; the second start is ignored)
    for e in stop repeat:1 repeat:2; do
        run "file=$dir/e.json,capture=cudaProfilerApi,capture_end=$e" "$prog" capture
        [ "$rc" = 0 ] || fail "capture_end=$e: exited with $rc: $(tail -n 3 err)"
        n=3 r=1; [ "$e" = repeat:2 ] && n=7 r=2
        check e.json "count('cuMemAlloc_v2') == $n" "d['otherData']['capture_ranges'] == $r" \
            "d['otherData']['capture'] == 'cudaProfilerApi,capture_end=$e'"
    done
    run "file=$dir/e.json,capture=cudaProfilerApi,capture_end=stop,unhook=1" "$prog" capture
    check e.json "count('cuMemAlloc_v2') == 3"
    grep -q "hooks removed 2 times while paused (unhook)" err || fail "capture_end=stop, unhook: not removed twice: $(cat err)"
    for o in "capture=cudaProfilerApi,capture_end=repeat:0" "capture=cudaProfilerApi,capture_end=halt" "capture_end=stop"; do
        run "file=$dir/b.json,$o" "$prog" many 3
        [ "$rc" = 1 ] && grep -q "failing closed" err || fail "$o: the init did not fail: $(cat err)"
    done
    grep -q "capture_end=stop needs capture=cudaProfilerApi or capture=nvtx:MESSAGE" err || fail "capture_end alone: not said: $(cat err)"
    # a program that never starts a range: said, and no file
    run "file=$dir/n.json,capture=cudaProfilerApi" "$prog" many 5
    [ "$rc" = 0 ] || fail "no range: exited with $rc"
    grep -q "capture=cudaProfilerApi: the program never called cudaProfilerStart or cuProfilerStart; no call was recorded" err ||
        fail "no range: not said: $(cat err)"
    [ ! -e n.json ] || fail "no range: a file was written"
    # a process that makes no CUDA call (a shell between the launcher and the program) is not told
    run "file=$dir/n.json,capture=cudaProfilerApi" /bin/true
    [ "$rc" = 0 ] && ! grep -q "never called" err || fail "no CUDA call: exited with $rc, or told: $(cat err)"
    # a capture the plugin does not know: an error, and the plugin's init fails (closed, as for a bad filter)
    run "file=$dir/b.json,capture=cudaProfilerAPI" "$prog" many 5
    [ "$rc" = 1 ] || fail "bad capture: exited with $rc"
    grep -q "capture=cudaProfilerAPI: not 'cudaProfilerApi' or 'nvtx:MESSAGE\[@DOMAIN\]'" err || fail "bad capture: not said: $(cat err)"
    grep -q "failing closed" err || fail "bad capture: the init did not fail: $(cat err)"
    [ ! -e b.json ] || fail "bad capture: a file was written"
    ;;
timed)
    # delay=, duration=: the phases 2, 3, 4 allocations 1.2 s apart; the window's edges 0.6 s from each phase
    run "file=$dir/t.json,delay=0.6,duration=1.2" "$prog" phases 1200
    [ "$rc" = 0 ] || fail "delay, duration: exited with $rc: $(tail -n 3 err)"
    check t.json "count('cuMemAlloc_v2') == 3" "d['otherData']['capture'] == 'delay=0.6,duration=1.2'" \
        "d['otherData']['capture_ranges'] == 1"
    grep -q "; 1 capture range (delay=0.6,duration=1.2)" err || fail "the summary does not say the range: $(cat err)"
    run "file=$dir/t2.json,duration=0.6" "$prog" phases 1200
    check t2.json "count('cuMemAlloc_v2') == 2" "d['otherData']['capture'] == 'duration=0.6'"
    # unhook=1: the hooks removed at the start, added by the timer
    run "file=$dir/t3.json,delay=0.6,unhook=1" "$prog" phases 1200
    check t3.json "count('cuMemAlloc_v2') == 7"
    grep -q "hooks removed 1 time while paused (unhook)" err || fail "delay, unhook: not removed once: $(cat err)"
    # CUDA started after the delay passed (the timer starts at the first cuInit: what passed is applied then, before
    # cuInit returns): every call recorded; with a duration that also passed, none (no file)
    E2E_LATE_INIT_MS=500 run "file=$dir/l.json,delay=0.2" "$prog" phases 100
    [ "$rc" = 0 ] || fail "late init: exited with $rc: $(tail -n 3 err)"
    check l.json "count('cuMemAlloc_v2') == 9" "d['otherData']['capture_ranges'] == 1"
    E2E_LATE_INIT_MS=500 run "file=$dir/l2.json,delay=0.1,duration=0.2,unhook=1" "$prog" phases 100
    [ "$rc" = 0 ] || fail "late init, window passed: exited with $rc: $(tail -n 3 err)"
    [ ! -e l2.json ] || fail "late init, window passed: a file was written"
    grep -q "delay=0.1,duration=0.2: the window had passed when the process first called cuInit; no call was recorded" err ||
        fail "late init, window passed: not said: $(cat err)"
    # a process that makes no CUDA call (a shell) has no timer thread
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$plugin:file=$dir/s.json,delay=30" sh -c 'grep "^Threads:" /proc/$$/status' >out 2>err
    grep -q "^Threads:[[:space:]]*1$" out || fail "a shell under delay=: not one thread: $(cat out err)"
    # the program ends before the delay: said, no file
    run "file=$dir/n.json,delay=30" "$prog" many 3
    [ "$rc" = 0 ] || fail "long delay: exited with $rc"
    grep -q "delay=30: the program ended before the delay passed; no call was recorded" err || fail "long delay: not said: $(cat err)"
    [ ! -e n.json ] || fail "long delay: a file was written"
    # a negative time, and a time range with a capture range: errors, the plugin's init fails
    for o in "delay=-1" "duration=0.5,capture=cudaProfilerApi"; do
        run "file=$dir/b.json,$o" "$prog" many 3
        [ "$rc" = 1 ] && grep -q "failing closed" err || fail "$o: the init did not fail: $(cat err)"
    done
    grep -q "capture= and delay=/duration= exclude each other" err || fail "capture and duration: not said: $(cat err)"
    ;;
timed_fork)
    # a forked child keeps the parent's schedule (a timer thread of its own): its 3 (at 1.2 s) recorded, its 4
    # (at 2.4 s) not; the parent's calls (at 0 and 2.4 s) neither: no file of its own
    run "file=$dir/f.json,delay=0.6,duration=1.2" "$prog" phases 1200 fork
    [ "$rc" = 0 ] || fail "fork: exited with $rc: $(tail -n 3 err)"
    [ ! -e f.json ] || fail "fork: the parent wrote a file"
    set -- f.*.json
    [ $# = 1 ] && [ -f "$1" ] || fail "fork: not one child file: $*"
    check "$1" "count('cuMemAlloc_v2') == 3"
    ;;
capture_nvtx)
    # capture=nvtx:step: recording while a range "step" is open (a nested "step" does not end it; a started one
    # ended on another thread does): 9 allocations inside, 3 outside; the NVTX ranges themselves all recorded
    for o in "" ",unhook=1"; do
        nvtx_run "file=$dir/t.json,capture=nvtx:step$o" "$prog" capture_nvtx
        check t.json "count('cuMemAlloc_v2') == 9" "d['otherData']['capture_ranges'] == 2" \
            "[e['name'] for e in ev if e.get('cat') == 'nvtx' and e['ph'] in 'Bb'] == ['outer', 'step', 'step', 'inner', 'step']"
    done
    grep -q "hooks removed 3 times while paused (unhook)" err || fail "unhook: not removed 3 times: $(cat err)"
    # capture_end=stop: the pushed range's 5 only
    NVTX_INJECTION64_PATH=$plugin run "file=$dir/e.json,capture=nvtx:step,capture_end=stop" "$prog" capture_nvtx
    check e.json "count('cuMemAlloc_v2') == 5" "d['otherData']['capture_ranges'] == 1"
    # 65 started at once: 64 followed (the allocation inside recorded, the one after all ended not), the 65th said
    NVTX_INJECTION64_PATH=$plugin run "file=$dir/m.json,capture=nvtx:step" "$prog" capture_nvtx_many
    [ "$rc" = 0 ] || fail "65 ranges: exited with $rc: $(tail -n 3 err)"
    check m.json "count('cuMemAlloc_v2') == 1"
    grep -q "capture=nvtx:step: 1 ranges were not followed (started while 64 were open" err ||
        fail "65 ranges: the one not followed not said: $(cat err)"
    # domains (nsys's --nvtx-capture): "step" alone is the default domain's, step@lib the domain lib's, step@* any;
    # the two overlap without nesting (capture_nvtx_dom: lib's over work 2+3, the default one's over 3+4)
    for c in "step:7" "step@lib:5" "step@*:9" "step@other:0"; do
        NVTX_INJECTION64_PATH=$plugin run "file=$dir/d.json,capture=nvtx:${c%:*}" "$prog" capture_nvtx_dom
        [ "$rc" = 0 ] || fail "capture=nvtx:${c%:*}: exited with $rc: $(tail -n 3 err)"
        if [ "${c#*:}" = 0 ]; then
            grep -q "no NVTX range with that message (in that domain) was opened" err || fail "${c%:*}: not said: $(cat err)"
        else
            check d.json "count('cuMemAlloc_v2') == ${c#*:}"
        fi
    done
    # an '@' of the message escaped; empty parts refused
    NVTX_INJECTION64_PATH=$plugin run "file=$dir/d.json,"'capture=nvtx:st\\@ep' "$prog" capture_nvtx_dom
    check d.json "count('cuMemAlloc_v2') == 1"
    for c in "@lib" "step@"; do
        NVTX_INJECTION64_PATH=$plugin run "file=$dir/d.json,capture=nvtx:$c" "$prog" capture_nvtx_dom
        grep -q "an empty" err || fail "capture=nvtx:$c: not refused: $(cat err)"
    done
    # without the NVTX injection no range is seen: said
    run "file=$dir/n.json,capture=nvtx:step" "$prog" capture_nvtx
    grep -q "capture=nvtx:step: no NVTX range with that message (in that domain) was opened" err || fail "no NVTX: not said: $(cat err)"
    [ ! -e n.json ] || fail "no NVTX: a file was written"
    ;;
drops)
    # a buffer smaller than one chunk: every call is dropped, and counted in the file and the summary
    run "file=$dir/t.json,buffer=4K" "$prog" threads 2
    [ "$rc" = 0 ] || fail "exited with $rc"
    n=$(awk -F'\t' '$2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' counts.tsv)
    check t.json "len(X) == 0" "d['otherData']['dropped_events'] == $n"
    grep -q "0 calls written to $dir/t.json; $n dropped" err || fail "the summary does not count $n dropped calls"
    grep -q "buffer=4096 bytes holds fewer than 4 chunks" err || fail "no warning about the small buffer"
    # a few chunks for 30000 calls while the writer drains: written + dropped = calls, whatever the split
    run "file=$dir/t2.json,buffer=150K" "$prog" many 30000
    [ "$rc" = 0 ] || fail "exited with $rc"
    n=$(awk -F'\t' '$2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' counts.tsv)
    check t2.json "len(X) + d['otherData']['dropped_events'] == $n" "d['otherData']['events'] == len(X)"
    ;;
defer)
    # render=exit: nothing is rendered while the program runs (it waits 100 ms after its calls: time a
    # background writer would have used), everything at exit; the launcher's --trace-defer sets it
    run "file=$dir/t.json,render=exit" "$prog" many_wait 20000
    [ "$rc" = 0 ] || fail "exited with $rc"
    check t.json "count('cuCtxGetCurrent') == 20000" "d['otherData']['render'] == 'exit'" \
        "d['otherData']['events_before_end'] == 0" "d['otherData']['dropped_events'] == 0"
    # past half of a small buffer the writer drains while the program runs: the file grows before exit
    run "file=$dir/t2.json,render=exit,buffer=1MiB" "$prog" many_wait 100000 "$dir/t2.json" 200000
    [ "$rc" = 0 ] || fail "exited with $rc"
    grep -q '^grew$' out || fail "the file did not grow while the program ran with half the buffer in use"
    n=$(awk -F'\t' '$2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' counts.tsv)
    check t2.json "d['otherData']['events_before_end'] > 0" "len(X) + d['otherData']['dropped_events'] == $n"
    # the default renders in the background
    run "file=$dir/t3.json" "$prog" many 10
    check t3.json "d['otherData']['render'] == 'background'"
    ;;
nocalls)
    # a process that makes no CUDA call (a shell between the launcher and the program) leaves no file
    env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 CUSHIM_PLUGINS="$plugin:file=$dir/t.json" \
        sh -c 'exit 0' >out 2>err || fail "sh failed"
    [ ! -e t.json ] || fail "a process without CUDA calls wrote a trace"
    ! grep -q 'cuda_api_sum' err || fail "a process without CUDA calls printed a table"
    # %p in the name: the pid
    run "file=$dir/t.%p.json,summary=false" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    set -- t.[0-9]*.json
    [ -f "$1" ] || fail "no t.<pid>.json: $(ls)"
    check "$1" "count('cuLaunchKernel') == 1" "d['otherData']['pid'] == int('$1'.split('.')[1])"
    ! grep -q 'cuda_api_sum' err || fail "summary=false printed a table"
    ;;
gpu|gpu_activity)
    # --trace-gpu's plumbing with a stand-in CUPTI: one made-up kernel per launch/copy/set call; kernels on a
    # GPU track, linked by flows; the kernel table. gpu: linked through CUPTI callbacks on the launch, copy and
    # set functions only (a kernel per enabled call: enabling another function would add kernels);
    # gpu_activity: another subscriber holds CUPTI's callbacks, linked through external correlation records
    # (written after the kernels, the order the plugin must tolerate)
    [ -n "$fakecupti" ] || { echo "no CUPTI headers at build time"; exit 77; }
    if [ "$case_" = gpu ]; then gpucorr=callbacks; else gpucorr=activity; export FAKE_CUPTI_BUSY=1; fi
    run "file=$dir/t.json,gpu=1,cupti=$fakecupti" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    check t.json "len([e for e in ev if e.get('cat') == 'kernel']) == sum(1 for e in X if e['name'] in ('cuLaunchKernel', 'cuMemcpyHtoDAsync_v2', 'cuMemcpyHtoD_v2', 'cuMemcpyDtoH_v2'))" \
        "all(k['args']['external id'] in set(e['args']['seq'] for e in X) for k in ev if k.get('cat') == 'kernel')" \
        "sorted(e['id'] for e in ev if e['ph'] == 'f') == sorted(k['args']['external id'] for k in ev if k.get('cat') == 'kernel')" \
        "set(e['id'] for e in ev if e['ph'] == 'f') <= set(e['id'] for e in ev if e['ph'] == 's')" \
        "[e['name'] for e in ev if e.get('cat') == 'memcpy'] == ['Memcpy HtoD']" \
        "any(e['ph'] == 'M' and e['args']['name'] == 'GPU 0 stream 7' for e in ev)" \
        "all(k['tid'] == [e for e in ev if e['ph'] == 'M' and e['args'].get('name') == 'GPU 0 stream 7'][0]['tid'] for k in ev if k.get('cat') == 'kernel')"
    check t.json "d['otherData']['gpu_correlation'] == '$gpucorr'"
    grep -q 'CUDA GPU Kernel Summary (cuda_gpu_kern_sum)' err || fail "no kernel table at exit"
    grep -q ' fake_kernel_a$' err || fail "the kernel table lacks fake_kernel_a"
    same_table t.json
    grep -q 'CUDA GPU Kernel Summary' stats.out || fail "cushim stats printed no kernel table"
    "$stats" --format=json t.json > stats.json || fail "--format=json failed"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [(r['name'], r['count'], r['total_bytes']) for r in d['cuda_gpu_mem_size_sum']] == [('[CUDA memcpy Host-to-Device]', 1, 4096)] and [r['name'] for r in d['cuda_gpu_kern_sum']] == ['fake_kernel_a', 'fake_kernel_b'], d" stats.json ||
        fail "--format=json: the GPU tables are not the file's"
    # the stand-in's one 4096-byte host-to-device copy of 100 ns in both memory tables, at exit and from the file
    for f in err stats.out; do
        grep -q 'CUDA GPU MemOps Summary by Time (cuda_gpu_mem_time_sum)' $f || fail "no memory time table in $f"
        grep -Eq '^ +100\.0 +100 +1 +100\.0 +100\.0 +100 +100 +0\.0  \[CUDA memcpy Host-to-Device\]$' $f ||
            fail "the memory time table of $f lacks the copy"
        grep -Eq '^ +0\.004 +1 +0\.004 +0\.004 +0\.004 +0\.004 +0\.000  \[CUDA memcpy Host-to-Device\]$' $f ||
            fail "the memory size table of $f lacks the copy"
    done
    ;;
gpu_nvtx_first)
    # gpu=1 and the file opened by an NVTX range (the first record: the calls before the range paused by capture=,
    # their hooks in), so CUPTI starts inside that NVTX call, outside any hook; the stand-in makes a CUDA call
    # as it starts, as the real one does, which reaches the trace's hooks on the thread that is opening the
    # file: not recorded, instead of waiting for that thread (a self-deadlock before: PyTorch's first range push
    # inside a capture range hung on the H200). Then the three copies are linked to their kernels.
    [ -n "$fakecupti" ] || { echo "no CUPTI headers at build time"; exit 77; }
    FAKE_CUPTI_DRIVER_CALL=1 nvtx_run "file=$dir/t.json,gpu=1,cupti=$fakecupti,capture=cudaProfilerApi" "$prog" nvtx_gpu
    check t.json "count('cuMemcpyHtoD_v2') == 3" "count('cuCtxGetCurrent') == 0" "[e['name'] for e in ev if e.get('cat') == 'nvtx' and e['ph'] == 'B'] == ['first']" \
        "len([e for e in ev if e.get('cat') == 'kernel']) == 3" \
        "len([k for k in ev if k.get('cat') == 'kernel' and k['args'].get('external id') in set(e['args']['seq'] for e in X)]) == 3" \
        "d['otherData']['gpu_correlation'] == 'callbacks'"
    ;;
gpu_detach)
    # unhook with gpu: gpu_detach seconds into a pause the flusher thread hands CUPTI's records over, the next
    # launch, copy or set detaches CUPTI at its exit callback, and the next range's start attaches it again.
    # capture_gpu's copies (each one made-up kernel while CUPTI is attached): 2 before any range (CUPTI not
    # started), 3 in range 1, 1 at once in the pause (seen: before the flush), 1 after the sleep (the detach is
    # made at its exit, after the flush: not seen), 2 after it (not seen), 4 in range 2 (seen and linked).
    [ -n "$fakecupti" ] || { echo "no CUPTI headers at build time"; exit 77; }
    kern="len([e for e in ev if e.get('cat') == 'kernel'])"
    linked="len([k for k in ev if k.get('cat') == 'kernel' and k['args'].get('external id') in set(e['args']['seq'] for e in X)])"
    run "file=$dir/t.json,gpu=1,cupti=$fakecupti,capture=cudaProfilerApi,unhook=1,gpu_detach=0.25" "$prog" capture_gpu 700
    [ "$rc" = 0 ] || fail "capture_gpu exited with $rc: $(tail -n 3 err)"
    check t.json "count('cuMemcpyHtoD_v2') == 7" "$kern == 8" "$linked == 7" "d['otherData']['gpu_detached'] == 1" \
        "d['otherData']['gpu_attached_again'] == 1" "d['otherData']['gpu_detach_refused'] == 0" \
        "d['otherData']['capture_ranges'] == 2"
    grep -q "; CUPTI detached 1 time while paused and attached again 1 (0 refused)" err ||
        fail "the summary does not say one detach: $(cat err)"
    # a pause shorter than gpu_detach, and gpu_detach=0: CUPTI stays attached and sees all 9 copies after the start
    for o in "gpu_detach=5:700" "gpu_detach=0:700" "gpu_detach=0.25:0"; do
        run "file=$dir/t.json,gpu=1,cupti=$fakecupti,capture=cudaProfilerApi,unhook=1,${o%:*}" "$prog" capture_gpu ${o#*:}
        [ "$rc" = 0 ] || fail "$o: exited with $rc: $(tail -n 3 err)"
        check t.json "$kern == 11" "$linked == 7" "'gpu_detached' not in d['otherData']"
        ! grep -q "CUPTI detached" err || fail "$o: detached: $(cat err)"
    done
    # the process ends detached (2 copies 700 ms after the last range): nothing asked of CUPTI at exit, whose
    # records were handed over at the flush; the file whole, two detaches and one attachment again
    run "file=$dir/tail.json,gpu=1,cupti=$fakecupti,capture=cudaProfilerApi,unhook=1,gpu_detach=0.25" "$prog" capture_gpu 700 tail
    [ "$rc" = 0 ] || fail "capture_gpu tail exited with $rc: $(tail -n 3 err)"
    check tail.json "count('cuMemcpyHtoD_v2') == 7" "$kern == 8" "$linked == 7" "d['otherData']['gpu_detached'] == 2" \
        "d['otherData']['gpu_attached_again'] == 1" "d['otherData']['gpu_detach_refused'] == 0"
    ! grep -q "after cuptiFinalize" err || fail "tail: CUPTI flushed at exit after the detach: $(cat err)"
    # the same ranges made by the toggle (a signal; the toggle's thread pauses, detaches and attaches again, not the
    # calling thread): 200 ms after each signal, so the pause's first copy comes 200 ms into it, before the flush
    run "file=$dir/toggle.json,gpu=1,cupti=$fakecupti,toggle=USR2,paused=1,unhook=1,gpu_detach=0.5" "$prog" capture_gpu 900 toggle
    [ "$rc" = 0 ] || fail "capture_gpu toggle exited with $rc: $(tail -n 3 err)"
    check toggle.json "count('cuMemcpyHtoD_v2') == 7" "$kern == 8" "$linked == 7" "d['otherData']['gpu_detached'] == 1" \
        "d['otherData']['gpu_attached_again'] == 1" "d['otherData']['gpu_detach_refused'] == 0"
    # without unhook the hooks stay in while paused: no detach either
    run "file=$dir/t.json,gpu=1,cupti=$fakecupti,capture=cudaProfilerApi,gpu_detach=0.25" "$prog" capture_gpu 700
    check t.json "$kern == 11" "$linked == 7" "'gpu_detached' not in d['otherData']"
    run "file=$dir/t.json,gpu=1,cupti=$fakecupti,gpu_detach=-1" "$prog" capture_gpu 0
    [ "$rc" = 1 ] && grep -q "gpu_detach=-1: seconds, 0 or more" err || fail "gpu_detach=-1: not refused: $(cat err)"
    ;;
gpu_fork)
    # gpu=1 and a fork in a pause, with the parent's CUPTI detached ('fork') and with a detach pending
    # ('forkpending'): CUPTI does not carry over a fork, so the child asks nothing of it (no second start, no flush
    # at its exit, none of the parent's buffered records) and its file says why; its counters are its own; the
    # parent goes on as without the child (gpu_detach above)
    [ -n "$fakecupti" ] || { echo "no CUPTI headers at build time"; exit 77; }
    kern="len([e for e in ev if e.get('cat') == 'kernel'])"
    linked="len([k for k in ev if k.get('cat') == 'kernel' and k['args'].get('external id') in set(e['args']['seq'] for e in X)])"
    for m in fork forkpending; do
        rm -f t.*.json
        run "file=$dir/t.json,gpu=1,cupti=$fakecupti,capture=cudaProfilerApi,unhook=1,gpu_detach=0.25" "$prog" capture_gpu 700 $m
        [ "$rc" = 0 ] || fail "$m: exited with $rc: $(tail -n 3 err)"
        child=$(sed -n 's/^child //p' out)
        [ -n "$child" ] && [ -f "t.$child.json" ] || fail "$m: the child wrote no file: $(ls; cat err)"
        check t.json "count('cuMemcpyHtoD_v2') == 7" "$kern == 8" "$linked == 7" "d['otherData']['gpu_detached'] == 1" \
            "d['otherData']['gpu_attached_again'] == 1" "d['otherData']['capture_ranges'] == 2"
        check "t.$child.json" "count('cuMemcpyHtoD_v2') == 2" "$kern == 0" "'gpu_detached' not in d['otherData']" \
            "'gpu_correlation' not in d['otherData']" "d['otherData']['capture_ranges'] == 1" \
            "'forked child' in d['otherData']['note']"
        grep -q "^cushim trace: 2 calls written to $dir/t.$child.json; hooks removed 1 time while paused (unhook); 1 capture range (cudaProfilerApi);" err ||
            fail "$m: the child's summary counts the parent's: $(grep 'calls written' err)"
    done
    ;;
launcher)
    # cushim run --trace: the shipped plugin by name, NVTX_INJECTION64_PATH set to it, a relative file name;
    # cushim stats FILE; --trace-filter
    launcher=${CUSHIM_LAUNCHER:?}
    env LD_PRELOAD= "$launcher" run --fake --trace=t.json -- "$prog" nvtx >out 2>err
    rc=$?
    [ "$rc" = 0 ] || fail "cushim run --trace exited with $rc"
    check t.json "[(e['ph'], e['name']) for e in ev if e.get('cat') == 'nvtx'][:2] == [('B', 'outer'), ('B', 'inner')]" \
        "count('cuMemAlloc_v2') == 4"
    "$launcher" stats t.json >stats.out 2>&1 || fail "cushim stats failed: $(cat stats.out)"
    grep '^ ' err > t.exit
    grep '^ ' stats.out > t.stats
    cmp -s t.exit t.stats || fail "cushim stats differs from the table at exit"
    env LD_PRELOAD= "$launcher" run --fake --trace=t2.json.gz --trace-filter='cat:alloc' -- "$prog" threads 2 >out 2>err \
        || fail "cushim run --trace-filter failed"
    check t2.json.gz "sorted(set(e['name'] for e in X)) == ['cuMemAlloc_v2']"
    # several files, one table: t.json's 4 allocations and t2.json.gz's (2 threads)
    "$launcher" stats t.json t2.json.gz >stats.out 2>&1 || fail "cushim stats of two files failed: $(cat stats.out)"
    n2=$(python3 check.py t2.json.gz "print(count('cuMemAlloc_v2')) or True")
    [ "$(awk '$NF == "cuMemAlloc_v2" {print $3}' stats.out)" = "$((n2 + 4))" ] ||
        fail "two files: not $((n2 + 4)) cuMemAlloc_v2: $(grep cuMemAlloc_v2 stats.out)"
    "$launcher" stats t.json -x >/dev/null 2>&1; [ $? = 2 ] || fail "cushim stats FILE -x: not a usage error"
    # --trace=NAME.perfetto-trace: Perfetto's format by the name (the walker decodes it), and cushim stats reads it
    # with the JSON file in one table; '--trace NAME.perfetto-trace CMD' is the mistake '--trace out.json' is
    env LD_PRELOAD= "$launcher" run --fake --trace=p.perfetto-trace -- "$prog" nvtx >pout 2>perr ||
        fail "cushim run --trace=p.perfetto-trace failed: $(tail -n 3 perr)"
    [ "$(python3 "$here/pftrace.py" --count p.perfetto-trace)" = "$(python3 check.py t.json "print(len(X)) or True")" ] ||
        fail "p.perfetto-trace: not t.json's number of calls"
    "$launcher" stats t.json p.perfetto-trace >pstats.out 2>&1 || fail "cushim stats t.json p.perfetto-trace: $(cat pstats.out)"
    [ "$(awk '$NF == "cuMemAlloc_v2" {print $3}' pstats.out)" = 8 ] || fail "two formats: not 8 cuMemAlloc_v2"
    env LD_PRELOAD= "$launcher" run --fake --trace p.perfetto-trace "$prog" nvtx >pout 2>perr; [ $? = 2 ] ||
        fail "'--trace p.perfetto-trace PROG' was not refused"
    # --format=json: the same tables as one JSON document (each row's count and total as the table's)
    "$launcher" stats --format=json t.json t2.json.gz >stats.json 2>stats.err || fail "--format=json failed: $(cat stats.err)"
    python3 - stats.json stats.out <<'PY' || fail "--format=json differs from the table"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["files"] == ["t.json", "t2.json.gz"], d["files"]
rows = {r["name"]: r for r in d["cuda_api_sum"]}
n = 0
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 9 and f[-1] in rows:
        r = rows[f[-1]]
        assert (int(f[1].replace(",", "")), int(f[2].replace(",", ""))) == (r["total_ns"], r["count"]), (f, r)
        assert f[4] == "{:,.1f}".format(r["med_ns"]), (f, r)
        n += 1
assert n == len(rows) > 3 and d["cuda_gpu_kern_sum"] == [] and d["cuda_gpu_mem_size_sum"] == [], (n, len(rows))
PY
    for a in --format=xml --format=; do
        "$launcher" stats $a t.json >/dev/null 2>err; [ $? = 2 ] || fail "cushim stats $a: not a usage error"
        grep -q -- "--format: '${a#--format=}' is not table or json" err || fail "cushim stats $a: not said: $(cat err)"
    done
    "$launcher" stats --format=json >/dev/null 2>&1; [ $? = 2 ] || fail "cushim stats --format=json alone: not a usage error"
    # a filter that is malformed or matches nothing: refused before the program starts (status 2, the reason)
    for f in 'cat:nosuch' 'cuNoSuchApi*'; do
        rm -f started
        env LD_PRELOAD= "$launcher" run --fake --trace=t5.json --trace-filter="$f" -- sh -c 'touch started' >out 2>err
        rc=$?
        [ "$rc" = 2 ] || fail "--trace-filter='$f': status $rc, not 2"
        [ ! -e started ] || fail "--trace-filter='$f': the program ran"
        grep -q -- "--trace-filter: .*nosuch" err || grep -q -- "--trace-filter: 'cuNoSuchApi\*' matches no API" err \
            || fail "--trace-filter='$f': no reason given: $(cat err)"
    done
    env LD_PRELOAD= "$launcher" run --fake --trace=t3.json --trace-defer --trace-buffer=8MiB -- "$prog" many 100 \
        >out 2>err || fail "cushim run --trace-defer failed"
    check t3.json "d['otherData']['render'] == 'exit'" "count('cuCtxGetCurrent') == 100"
    # --trace-capture: both kinds (the launcher sets the NVTX injection), and a range kind it does not know
    env LD_PRELOAD= "$launcher" run --fake --trace=c.json --trace-capture=cudaProfilerApi -- "$prog" capture >out 2>err \
        || fail "cushim run --trace-capture=cudaProfilerApi failed: $(cat err)"
    check c.json "count('cuMemAlloc_v2') == 7" "d['otherData']['capture_ranges'] == 2"
    env LD_PRELOAD= "$launcher" run --fake --trace=c.json --trace-capture=cudaProfilerApi --trace-capture-end=stop -- \
        "$prog" capture >out 2>err || fail "cushim run --trace-capture-end=stop failed: $(cat err)"
    check c.json "count('cuMemAlloc_v2') == 3" "d['otherData']['capture_ranges'] == 1"
    env LD_PRELOAD= "$launcher" run --fake --trace=c.json --trace-capture-end=repeat:1a0 -- sh -c 'touch started' >out 2>err
    [ $? = 2 ] && grep -q -- "--trace-capture-end: 'repeat:1a0' is not stop, repeat or repeat:N" err ||
        fail "--trace-capture-end=repeat:1a0 not refused: $(cat err)"
    if [ -n "$(python3 check.py t.json "print(1) if any(e.get('cat') == 'nvtx' for e in ev) else print(end='')")" ]; then
        env LD_PRELOAD= "$launcher" run --fake --trace=c2.json --trace-capture=nvtx:step --trace-unhook -- "$prog" capture_nvtx \
            >out 2>err || fail "cushim run --trace-capture=nvtx:step failed: $(cat err)"
        check c2.json "count('cuMemAlloc_v2') == 9" "d['otherData']['capture'] == 'nvtx:step'"
        # a domain, and an '@' of the message escaped as the user writes it (the launcher escapes the '\')
        env LD_PRELOAD= "$launcher" run --fake --trace=c3.json --trace-capture=nvtx:step@lib -- "$prog" capture_nvtx_dom \
            >out 2>err || fail "cushim run --trace-capture=nvtx:step@lib failed: $(cat err)"
        check c3.json "count('cuMemAlloc_v2') == 5"
        env LD_PRELOAD= "$launcher" run --fake --trace=c3.json --trace-capture='nvtx:st\@ep' -- "$prog" capture_nvtx_dom \
            >out 2>err || fail "cushim run --trace-capture=nvtx:st\\@ep failed: $(cat err)"
        check c3.json "count('cuMemAlloc_v2') == 1"
    fi
    env LD_PRELOAD= "$launcher" run --fake --trace=d.json --trace-delay=0.6 --trace-duration=1.2 -- "$prog" phases 1200 \
        >out 2>err || fail "cushim run --trace-delay --trace-duration failed: $(cat err)"
    check d.json "count('cuMemAlloc_v2') == 3" "d['otherData']['capture'] == 'delay=0.6,duration=1.2'"
    env LD_PRELOAD= "$launcher" run --fake --trace=d.json --trace-delay=-1 -- sh -c 'touch started' >out 2>err
    [ $? = 2 ] && grep -q -- "--trace-delay: '-1' is not a number of seconds" err || fail "--trace-delay=-1 not refused: $(cat err)"
    # --trace-gpu-detach=SEC: gpu_detach=SEC (a plugin option it did not know would fail the run), or refused
    env LD_PRELOAD= "$launcher" run --fake --trace=g.json --trace-unhook --trace-gpu-detach=0.5 -- "$prog" many 5 >out 2>err ||
        fail "cushim run --trace-gpu-detach=0.5 failed: $(cat err)"
    env LD_PRELOAD= "$launcher" run --fake --trace=g.json --trace-gpu-detach=1s -- sh -c 'touch started' >out 2>err
    [ $? = 2 ] && grep -q -- "--trace-gpu-detach: '1s' is not a number of seconds" err || fail "--trace-gpu-detach=1s not refused: $(cat err)"
    for c in nvtx: cudaprofilerapi; do
        rm -f started
        env LD_PRELOAD= "$launcher" run --fake --trace=c3.json --trace-capture=$c -- sh -c 'touch started' >out 2>err
        rc=$?
        [ "$rc" = 2 ] && [ ! -e started ] || fail "--trace-capture=$c: status $rc, not 2, or the program ran"
        grep -q -- "--trace-capture: '$c' is not cudaProfilerApi or nvtx:MESSAGE\[@DOMAIN\]" err || fail "--trace-capture=$c: not said: $(cat err)"
    done
    env LD_PRELOAD= "$launcher" run --fake --trace=t4.json --trace-buffer=4K -- "$prog" many 100 >out 2>err \
        || fail "cushim run --trace-buffer=4K failed"
    check t4.json "len(X) == 0" "d['otherData']['dropped_events'] >= 100"
    # a process killed by SIGKILL leaves a file without its end: stats summarises its complete events, --close
    # writes a copy that ends properly (what JSON readers and Perfetto open); a complete file has nothing to close
    env LD_PRELOAD= "$launcher" run --fake --trace=k.json -- "$prog" many_wait 50000 k.json 300000 kill >out 2>err
    [ "$(cat out)" = grew ] || fail "the killed case did not run: $(cat out)"
    ! python3 -c "import json,sys; json.load(open(sys.argv[1]))" k.json 2>/dev/null || fail "the killed trace ends properly?"
    "$launcher" stats k.json >stats.out 2>stats.err || fail "cushim stats of a killed trace failed: $(cat stats.err)"
    grep -q "k.json ends early" stats.err || fail "no word that the file ends early"
    grep -q ' cuCtxGetCurrent$' stats.out || fail "no table from the complete events"
    "$launcher" stats --close k.json k2.json.gz 2>stats.err || fail "--close failed: $(cat stats.err)"
    n=$(sed -n 's/.*: the \([0-9]*\) complete events of .*/\1/p' stats.err)
    check k2.json.gz "d['otherData'] == {'truncated': True}" "len(ev) == $n" "count('cuCtxGetCurrent') > 1000"
    "$launcher" stats --close t.json t5.json 2>/dev/null && fail "--close of a complete trace succeeded"
    cp k.json k3.json
    "$launcher" stats --close k3.json ./k3.json 2>/dev/null
    [ $? = 2 ] && cmp -s k.json k3.json || fail "--close onto the trace itself was not refused, or changed it"
    # another writer's layout (all on one line) is read whole, with the same table
    python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], 'w'))" t.json t1line.json
    "$launcher" stats t1line.json > stats1.out 2>&1 || fail "cushim stats of a one-line trace failed: $(cat stats1.out)"
    "$launcher" stats t.json > stats0.out 2>&1
    cmp -s stats0.out stats1.out || fail "a one-line trace gives another table: $(diff stats0.out stats1.out | head)"
    "$launcher" stats nosuch.json >/dev/null 2>&1 && fail "cushim stats of a missing file succeeded"
    printf '{"traceEvents":[}' > stray.json   # fuzz_stats found this one looping forever
    timeout 20 "$launcher" stats stray.json >/dev/null 2>&1
    [ $? = 1 ] || fail "cushim stats of a stray '}' did not fail cleanly"
    printf '{"a":1}' > bad.json
    "$launcher" stats bad.json >/dev/null 2>&1 && fail "cushim stats of a file without traceEvents succeeded"
    ;;
nocupti)
    run "file=$dir/t.json,gpu=1,cupti=/nonexistent/libcupti.so" "$vecadd" 1024
    [ "$rc" = 0 ] || fail "vecadd exited with $rc"
    grep -q "GPU tracing is off" err || fail "no message that GPU tracing is off"
    check t.json "count('cuLaunchKernel') == 1" "'GPU tracing off' in d['otherData']['note']"
    ;;
perfetto)
    # Perfetto's protobuf trace (format=perfetto, or a name ending in .perfetto-trace): each workload is run twice,
    # to a JSON file and to a Perfetto file, and pftrace.py - an independent reader: a protobuf wire-format walker
    # that checks every field number and wire type against Perfetto's schema and that every interned id was
    # defined earlier on its sequence - finds the JSON run's events in the Perfetto file (calls, names, arguments,
    # results, threads, nesting; GPU work on its tracks with its flows; NVTX ranges and marks; thread names);
    # and pfraw.py, Google's own parser (protoc --decode_raw, Debian's protobuf-compiler; said and skipped where
    # it is missing): the whole file parses, the packets and their fields are those of Perfetto's protos, as many
    # packets as the walker counted
    pft="python3 $here/pftrace.py"
    pf_raw() {   # pf_raw FILE: pf.out holds the walker's count of its packets ("N packets")
        npk=$(sed -n 's/^\([0-9]*\) packets\b.*/\1/p' pf.out)
        [ -n "$npk" ] || fail "$1: the walker counted no packets: $(cat pf.out)"
        python3 "$here/pfraw.py" "$1" "$npk" >pfraw.out 2>pfraw.err
        case $? in
        0) ;;
        77) [ -n "${pfraw_said:-}" ] || { cat pfraw.out; pfraw_said=1; } ;;
        *) fail "$1: protoc --decode_raw: $(cat pfraw.err)" ;;
        esac
    }
    pf_pair() {   # pf_pair NAME OPTIONS PROGRAM ARGS...
        pfn=$1 pfo=$2
        shift 2
        run "file=$dir/$pfn.json$pfo" "$@"
        [ "$rc" = 0 ] || fail "$pfn (JSON) exited with $rc"
        run "file=$dir/$pfn.perfetto-trace$pfo" "$@"
        [ "$rc" = 0 ] || fail "$pfn (Perfetto) exited with $rc"
        grep -q "calls written to $dir/$pfn.perfetto-trace; open it at https://ui.perfetto.dev" err ||
            fail "$pfn: no last line naming the Perfetto file"
        $pft --compare "$pfn.perfetto-trace" "$pfn.json" >pf.out 2>pf.err ||
            fail "$pfn: the Perfetto file is not the JSON run's: $(cat pf.err)"
        pf_raw "$pfn.perfetto-trace"
        # the tables at exit and from cushim stats: the same from the Perfetto file as from the JSON run's
        same_table "$pfn.perfetto-trace"
    }
    pf_pair vecadd "" "$vecadd" 1024
    pf_pair runtime "" "$prog" runtime
    pf_pair threads "" "$prog" threads 4
    if [ -n "$fakecupti" ]; then
        pf_pair gpu ",gpu=1,cupti=$fakecupti" "$vecadd" 1024
        [ "$(sed -n 's/^same events: \([0-9]*\) calls$/\1/p' pf.out)" = 31 ] || fail "gpu: $(cat pf.out)"
    fi
    if NVTX_INJECTION64_PATH=$plugin run "file=$dir/nvtx.json" "$prog" nvtx && ! grep -q "^usage: e2e_trace" err; then
        NVTX_INJECTION64_PATH=$plugin pf_pair nvtx "" "$prog" nvtx
        $pft nvtx.perfetto-trace >/dev/null || fail "nvtx.perfetto-trace does not decode"
    fi
    # names with control bytes and what is not UTF-8 (e2e_trace_names, as trace_hostile): every string field of the
    # file is UTF-8 (the walker decodes them strictly), and cushim stats' table equals the one at exit
    if [ -n "${E2E_TRACE_NAMES:-}" ]; then
        NVTX_INJECTION64_PATH=$plugin run "file=$dir/h.perfetto-trace" "$E2E_TRACE_NAMES"
        [ "$rc" = 0 ] || fail "e2e_trace_names exited with $rc"
        $pft h.perfetto-trace >pf.out 2>pf.err || fail "h.perfetto-trace: $(cat pf.err)"
        pf_raw h.perfetto-trace
        same_table h.perfetto-trace
    fi
    # gzip; format= over the name; the default name; a format that is neither is refused (the process fails closed)
    run "file=$dir/z.perfetto-trace.gz" "$vecadd" 1024
    $pft --count z.perfetto-trace.gz >pf.out 2>pf.err || fail "z.perfetto-trace.gz: $(cat pf.err)"
    [ "$(cat pf.out)" = 31 ] || fail "z.perfetto-trace.gz holds $(cat pf.out) calls, not 31"
    same_table z.perfetto-trace.gz
    run "file=$dir/f.trace,format=perfetto" "$vecadd" 1024
    $pft --count f.trace >pf.out 2>pf.err || fail "format=perfetto: $(cat pf.err)"
    run "file=$dir/j.perfetto-trace,format=json" "$vecadd" 1024
    check j.perfetto-trace "count('cuMemAlloc_v2') == 3"
    run "format=perfetto" "$vecadd" 1024
    pid=$(ls cushim-*.perfetto-trace 2>/dev/null | sed -n 's/^cushim-\([0-9]*\)\.perfetto-trace$/\1/p')
    [ -n "$pid" ] || fail "format=perfetto without file: no cushim-<pid>.perfetto-trace ($(ls))"
    run "file=$dir/x.trace,format=protobuf" "$vecadd" 1024
    [ "$rc" != 0 ] && grep -q "format=protobuf: not 'json' or 'perfetto'" err || fail "format=protobuf was not refused"
    # a process that executes another program keeps its Perfetto file from before (known by the process
    # descriptor's name and start label) and writes t.<pid>.perfetto-trace, as with JSON
    run "file=$dir/x.perfetto-trace" "$prog" exec "$dir/x.perfetto-trace"
    [ "$rc" = 0 ] || fail "exec: exited with $rc (3: the writer never wrote the first calls)"
    pid=$(sed -n 's/^pid //p' out)
    grep -q "the trace file '$dir/x.perfetto-trace' holds this process's calls from before it executed this program" err ||
        fail "exec: not said: $(cat err)"
    PFT_DIR=$here python3 -c "import os, sys; sys.path.insert(0, os.environ['PFT_DIR']); import pftrace; evs, _ = pftrace.events(sys.argv[1]); sys.exit(sum(1 for e in evs if e.get('name') == 'cuMemAlloc_v2') != 5)" "x.$pid.perfetto-trace" ||
        fail "exec: x.$pid.perfetto-trace does not hold the new program's 5 allocations"
    n=$($pft --count x.perfetto-trace) || fail "exec: x.perfetto-trace does not decode"
    [ "$n" -ge 1 ] || fail "exec: x.perfetto-trace holds no call"
    # the walker itself: a file cut in a packet, a wrong wire type and an id used before its definition fail it
    head -c 1000 vecadd.perfetto-trace > cut.perfetto-trace
    $pft cut.perfetto-trace >/dev/null 2>&1 && fail "pftrace.py accepts a file cut short"
    # and the protoc check (where protoc is): the cut file, a packet field Perfetto's TracePacket does not have
    # (a timestamp's tag, field 8, turned into field 9), a packet short of the walker's count
    if command -v protoc >/dev/null; then
        python3 "$here/pfraw.py" cut.perfetto-trace >/dev/null 2>&1 && fail "pfraw.py accepts a file cut short"
        python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); i = d.index(0x40, 2); d[i] = 0x48; open('tag.perfetto-trace', 'wb').write(d)" vecadd.perfetto-trace
        python3 "$here/pfraw.py" tag.perfetto-trace >/dev/null 2>&1 && fail "pfraw.py accepts an unknown packet field"
        npk=$($pft vecadd.perfetto-trace | sed -n 's/^\([0-9]*\) packets,.*/\1/p')
        python3 "$here/pfraw.py" vecadd.perfetto-trace "$((npk + 1))" >/dev/null 2>&1 &&
            fail "pfraw.py accepts a packet count that is not the file's"
    fi
    # cushim stats reads a file cut in a packet to its last complete one, and says so; --close is JSON's
    "$stats" cut.perfetto-trace >stats.out 2>stats.err || fail "cushim stats cut.perfetto-trace: $(cat stats.err)"
    grep -q "cut.perfetto-trace ends early" stats.err || fail "cushim stats: the cut file not said: $(cat stats.err)"
    "$stats" --close vecadd.perfetto-trace closed.json 2>stats.err && fail "cushim stats --close took a Perfetto file"
    grep -q "a Perfetto trace needs no closing" stats.err || fail "--close: $(cat stats.err)"
    PFT_DIR=$here python3 - vecadd.perfetto-trace <<'PY' || fail "pftrace.py accepts a broken file"
import os, sys
sys.path.insert(0, os.environ['PFT_DIR'])
import pftrace
good = open(sys.argv[1], 'rb').read()
evs, info = pftrace.events(sys.argv[1])   # the plugin's file passes
def varint(v):
    out = b''
    while v >= 0x80:
        out += bytes([v & 0x7f | 0x80])
        v >>= 7
    return out + bytes([v])
def field(f, wt, payload):
    return varint(f << 3 | wt) + (varint(len(payload)) + payload if wt == 2 else payload)
def rejected(data, what):
    open('bad.perfetto-trace', 'wb').write(data)
    try:
        pftrace.events('bad.perfetto-trace')
    except (pftrace.Bad, UnicodeDecodeError):
        return
    sys.exit('accepted: ' + what)
rejected(b'\x12' + good[1:], 'the first packet as Trace field 2')
uuid = info['pid'] << 2 | 1
def packet(name_iid, flags=2):
    te = field(9, 0, varint(3)) + field(11, 0, varint(uuid)) + field(10, 0, varint(name_iid))
    return field(1, 2, field(8, 0, varint(1)) + field(10, 0, varint(1)) + field(13, 0, varint(flags)) + field(11, 2, te))
open('ok.perfetto-trace', 'wb').write(good + packet(1))
pftrace.events('ok.perfetto-trace')   # an instant named by a defined iid passes
rejected(good + packet(99999), 'a name iid never defined')
rejected(good + packet(1, flags=0), 'an interned id on a packet without SEQ_NEEDS_INCREMENTAL_STATE')
PY
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_]"
