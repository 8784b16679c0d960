#!/bin/sh
# stats_files_test.sh STATS - 'cushim stats' (tools/cushim-stats.c) on trace files made here, no shim or plugin:
#   bounded   memory and time whatever the file: a sparse 3 GiB file of zeros, a name of 256 MiB (gzip: 256 KiB
#             on disk), 64 Mi brackets deep, one string of 64 MiB - each refused with one line, at once, under a
#             256 MiB address-space limit (ASan/TSan builds: their RSS limit instead)
#   scale     256,000 kernel names under a small exact budget ("summary_exact_values":16): the table's cost is
#             linear in the names (it was quadratic: 4 s for 64,000, minutes for 256,000); within 15 s
#   names     names in the file holding control characters, bytes that are not UTF-8, C1 and bidirectional
#             controls, escaped or raw; file names holding them too: the tables and messages are UTF-8 with no
#             control byte but line ends, --format=json is strict JSON
#   verdicts  the reader: the plugin's layout, one line and indented give one table; a file cut short (plain,
#             gzip, a zero-filled tail) is summarised and --close ends a copy; malformed, stray and foreign
#             files are refused with one line
set -u
stats=$1
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/stats_files
rm -rf "$dir"
mkdir -p "$dir" && cd "$dir" || exit 1
failed=0
fail() { echo "FAIL: $*"; failed=1; }
ok() { echo "ok: $*"; }

# lim CMD...: CMD under the memory bound (a sanitizer's runtime reserves terabytes of address space: its own
# RSS limit there) and 20 s
if ldd "$stats" 2>/dev/null | grep -q 'lib[at]san' || nm "$stats" 2>/dev/null | grep -q ' __[at]san_init'; then
    lim() { ASAN_OPTIONS=hard_rss_limit_mb=512 TSAN_OPTIONS=hard_rss_limit_mb=512 timeout 20 "$@"; }
else
    lim() { (ulimit -v 262144 && exec timeout 20 "$@"); }
fi

# refused NAME FILE WORDS: status 1, nothing on stdout, exactly one line on stderr holding WORDS
refused() {
    lim "$stats" "$2" >out 2>err
    rc=$?
    if [ "$rc" = 1 ] && [ ! -s out ] && [ "$(wc -l < err)" = 1 ] && grep -qF -- "$3" err; then
        ok "$1 refused: $(cat err)"
    else
        fail "$1: status $rc (1 wanted, 124: timed out), stdout $(wc -c < out) bytes, stderr: $(head -c 600 err)"
    fi
}

# ---- bounded ----
python3 - <<'PY' || fail "making the files"
import zlib
def member(data):   # a gzip member; members concatenated are one stream to zlib's gzread
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()
mib = member(b'a' * (1 << 20))
with open('name.json.gz', 'wb') as f:
    f.write(member(b'{"traceEvents":[\n{"ph":"X","cat":"kernel","dur":1,"name":"'))
    f.write(mib * 256)
    f.write(member(b'"}\n]}\n'))
with open('string.json.gz', 'wb') as f:
    f.write(member(b'"'))
    f.write(mib * 64)
with open('deep.json.gz', 'wb') as f:
    f.write(member(b'{"traceEvents":[\n' + b'[' * (64 << 20)))
PY
truncate -s 3G zeros.json || fail "truncate"
refused zeros zeros.json 'zeros.json: no "traceEvents" array: not a trace-event JSON file'
refused name name.json.gz 'name.json.gz: line 2: no JSON value ends in 4 MiB'
refused string string.json.gz 'string.json.gz: line 1: no JSON value ends in 4 MiB'
refused deep deep.json.gz 'deep.json.gz: line 2: nested deeper than 64'
rm -f zeros.json name.json.gz string.json.gz deep.json.gz

# ---- scale ----
python3 - <<'PY' || fail "making the file"
with open('many.json', 'w') as f:
    f.write('{"traceEvents":[\n')
    f.write(',\n'.join('{"ph":"X","cat":"kernel","name":"_Z1k%dPf","pid":1,"tid":1,"ts":%d.000,"dur":1.%03d}'
                       % (i, i, i % 1000) for i in range(256000)))
    f.write('\n],"otherData":{"summary_exact_values":16}}\n')
PY
start=$(date +%s)
timeout 15 "$stats" many.json >out 2>err
rc=$?
end=$(date +%s)
if [ "$rc" = 0 ] && [ "$(grep -c ' _Z1k[0-9]*Pf$' out)" = 256000 ]; then
    ok "256,000 kernel names in $((end - start)) s"
else
    fail "256,000 kernel names: status $rc (124: not done in 15 s), $(grep -c ' _Z1k' out) rows: $(head -c 300 err)"
fi
rm -f many.json

# ---- names ----
# Raw bytes in a JSON string: what is not UTF-8 (0xff, a lone 0x9b, a cut sequence), C1 and U+202E in UTF-8;
# escaped: ESC sequences, BEL, a newline, a tab, DEL, U+009B, U+202E; a lone surrogate and U+0000 in another.
python3 - <<'PY' || fail "making the file"
raw = b'\xff\x9b2J\xc2\x9b\xe2\x80\xaeq\xe4\xb8'
esc = b'\\u001b[31mred\\u001b]0;t\\u0007\\n\\t\\u007f\\u009b\\u202e|'
name = b'k' + esc + raw
ev = [b'{"ph":"X","cat":"kernel","name":"%s","pid":1,"tid":1,"ts":1.000,"dur":2.000}' % name,
      b'{"ph":"X","cat":"cuda_driver","name":"cu%s","pid":1,"tid":1,"ts":1.000,"dur":2.000}' % name,
      b'{"ph":"X","cat":"cuda_driver","name":"z\\ud800y\\u0000\\udc00x\\ud800","pid":1,"tid":1,"ts":1,"dur":2}',
      b'{"ph":"B","cat":"nvtx","name":"r%s","pid":1,"tid":1,"ts":1.000,"args":{"domain":"d%s"}}' % (name, name),
      b'{"ph":"E","cat":"nvtx","name":"","pid":1,"tid":1,"ts":5.000}',
      b'{"ph":"b","cat":"nvtx","name":"s%s","pid":1,"tid":1,"id":7,"ts":1.000}' % name,
      b'{"ph":"e","cat":"nvtx","name":"","pid":1,"tid":1,"id":7,"ts":9.000}']
open('names.json', 'wb').write(b'{"traceEvents":[\n' + b',\n'.join(ev) + b'\n]}\n')
PY
hostile=$(printf 'h\033[2J\033]0;x\007\n\377\302\233.json')
shown='h?[2J?]0;x????.json'
cp names.json "$hostile"
"$stats" names.json "$hostile" >names.out 2>names.err || fail "names: status $?: $(cat names.err)"
"$stats" --format=json names.json "$hostile" >names.jsonout 2>>names.err || fail "names --format=json: status $?"
"$stats" "$hostile.missing" >/dev/null 2>>names.err && fail "a missing file read"
printf '{"a":1}' > "$hostile.notrace"
"$stats" "$hostile.notrace" >/dev/null 2>>names.err && fail "a file without traceEvents read"
"$stats" --close "$hostile" "$hostile.closed" >/dev/null 2>>names.err && fail "--close of a whole file succeeded"
python3 - "$shown" <<'PY' && ok "names: tables, messages and JSON" || fail "names (above)"
import json, sys, unicodedata
shown = sys.argv[1]
bidi = set('\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069')
for f in ('names.out', 'names.err'):
    text = open(f, 'rb').read().decode('utf-8')   # strict: raises on what is not UTF-8
    bad = [c for c in text if (unicodedata.category(c) == 'Cc' and c != '\n') or c in bidi]
    if bad:
        sys.exit('%s: %r' % (f, bad[:10]))
out = open('names.out', encoding='utf-8').read()
want = 'k?[31mred?]0;t??????|??2J??q??'   # ESC, ESC, BEL, LF, TAB, DEL, U+009B, U+202E | FF 9B 2J C1 RLO q cut
for w in ('  ' + want, '  cu' + want, '  d' + want + ':r' + want, '  :s' + want):
    if w + '\n' not in out:
        sys.exit('no %r in the table' % w)
if 'Over 2 trace files: names.json %s\n' % shown not in out:
    sys.exit('the file names line: %r' % [l for l in out.split('\n') if l.startswith('Over')])
err = [l for l in open('names.err', encoding='utf-8').read().split('\n') if l]
if len(err) != 3 or not all(shown in l for l in err):
    sys.exit('messages: %r' % err)
d = json.load(open('names.jsonout', encoding='utf-8'))   # strict UTF-8, no raw control byte
if d['files'] != ['names.json', 'h\x1b[2J\x1b]0;x\x07\n?\u009b.json']:
    sys.exit('files: %r' % d['files'])
k = [r['name'] for r in d['cuda_gpu_kern_sum']]
if len(k) != 1 or not k[0].startswith('k\x1b[31mred\x1b]0;t\x07\n\t\x7f\u009b\u202e|') or '2J\u009b\u202eq' not in k[0]:
    sys.exit('kernels: %r' % k)
PY

# ---- verdicts ----
python3 - <<'PY' || fail "making the files"
import json
ev = []
for i in range(300):
    ev.append({"ph": "X", "cat": "cuda_driver", "name": "cuMemAlloc_v2" if i % 3 else "cuLaunchKernel", "pid": 1,
               "tid": 1, "ts": i * 1.5, "dur": round(0.5 + (i * 37 % 100) / 7.0, 3),
               "args": {"seq": i, "name": "x", "nested": {"a": [1, {"b": None}]}, "ok": True}})
    if i % 50 == 0:
        ev.append({"ph": "B", "cat": "nvtx", "name": "step", "pid": 1, "tid": 1, "ts": i * 1.5})
        ev.append({"ph": "E", "cat": "nvtx", "name": "", "pid": 1, "tid": 1, "ts": i * 1.5 + 1})
        ev.append({"ph": "X", "cat": "kernel", "name": "k\u00e9\U0001F600", "pid": 1, "tid": 9, "ts": i * 1.5,
                   "dur": 3.25, "args": {"grid": [1, 1, 1]}})
        ev.append({"ph": "X", "cat": "memcpy", "name": "Memcpy HtoD", "pid": 1, "tid": 9, "ts": i * 1.5, "dur": 1,
                   "args": {"bytes": 4096}})
lines = [json.dumps(e, separators=(',', ':')) for e in ev]
open('plugin.json', 'w').write('{"traceEvents":[\n' + ',\n'.join(lines) + '\n],"otherData":{"events":%d}}\n' % len(ev))
json.dump({"otherData": {"a": [1, 2]}, "traceEvents": ev}, open('oneline.json', 'w'), separators=(',', ':'))
json.dump({"traceEvents": ev, "displayTimeUnit": "ns"}, open('indent.json', 'w'), indent=1)
# cut: the last line ends inside an event; a zero-filled tail after the last whole line
text = '{"traceEvents":[\n' + ',\n'.join(lines) + '\n'
cut = text[:text.rindex('\n', 0, len(text) - 1) + 1] + lines[-1][:20]
open('cut.json', 'w').write(cut)
open('zerotail.json', 'wb').write(text.encode() + b'\0' * 8192)
bad = lines[:]
bad[1] = '{"ph":"X",,"cat":"cuda_driver"}'
open('bad.json', 'w').write('{"traceEvents":[\n' + ',\n'.join(bad) + '\n]}\n')
print(len(ev), file=open('nev', 'w'))
PY
nev=$(cat nev)
"$stats" plugin.json >t.plugin 2>&1 || fail "the plugin's layout: $(cat t.plugin)"
grep -qF "  ké😀" t.plugin || fail "the escaped and raw UTF-8 name: $(grep ' k' t.plugin)"
for f in oneline indent; do
    "$stats" $f.json >t.$f 2>&1 || fail "$f: $(cat t.$f)"
    cmp -s t.plugin t.$f && ok "$f: the same table" || fail "$f: another table: $(diff t.plugin t.$f | head)"
done
gzip -c plugin.json > full.json.gz
head -c $(($(wc -c < full.json.gz) / 2)) full.json.gz > cutgz.json.gz
for f in cut.json zerotail.json cutgz.json.gz; do
    "$stats" $f >out 2>err
    rc=$?
    [ "$rc" = 0 ] && grep -q "$f ends early" err && grep -q " cuMemAlloc_v2$" out && ok "$f: ends early" ||
        fail "$f: status $rc: $(cat err)"
    "$stats" --close $f closed.json.gz 2>err || fail "--close $f: $(cat err)"
    n=$(sed -n 's/.*: the \([0-9]*\) complete events of .*/\1/p' err)
    python3 -c "
import gzip, json, sys
d = json.load(gzip.open('closed.json.gz', 'rt', encoding='utf-8'))
assert d['otherData'] == {'truncated': True} and len(d['traceEvents']) == int(sys.argv[1]) > 0, sys.argv[1]
assert int(sys.argv[1]) == int(sys.argv[2]) - (1 if sys.argv[3] == 'cut.json' else 0) or sys.argv[3] == 'cutgz.json.gz'
" "$n" "$nev" "$f" && ok "--close $f: $n events" || fail "--close $f: $n events"
done
"$stats" --close plugin.json closed.json 2>err
[ $? = 1 ] && grep -q "ends properly: nothing to close" err && [ ! -e closed.json ] || fail "--close of a whole file"
refused malformed bad.json 'bad.json: malformed JSON (line 3'
printf '{"traceEvents":[}' > stray.json
refused stray stray.json 'stray.json: malformed JSON'
printf '{"a":1}' > a.json; refused "no traceEvents" a.json 'no "traceEvents" array'
printf '[{"traceEvents":[]}]' > arr.json; refused "an array" arr.json 'no "traceEvents" array'
printf '"traceEvents"' > str.json; refused "a string" str.json 'no "traceEvents" array'
printf '{"traceEvents":[{"ph":"X","name":"\001"}]}' > ctl.json; refused "a raw control byte" ctl.json 'malformed JSON'

[ "$failed" = 0 ] && echo "stats_files: all passed"
exit "$failed"
