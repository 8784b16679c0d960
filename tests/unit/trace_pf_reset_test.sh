#!/bin/sh
# trace_pf_reset_test.sh ENCODER PFTRACE: 70,000 calls of distinct names (more than TR_PF_INTERN_MAX, 65,536) through
# the Perfetto encoder alone: the interning is cleared once (SEQ_INCREMENTAL_STATE_CLEARED, every table emptied) and
# the walker finds every id used after it defined again after it, and every call with its name and arguments.
set -eu
enc=$1 pft=$2
dir=${TMPDIR:-/tmp}/trace_pf_reset.$$
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/events" <<'PY'
import json, sys
with open(sys.argv[1], 'w') as f:
    f.write('{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"pid 7 (cushim trace)","start":1}}\n')
    for i in range(70000):
        f.write('{"ph":"X","cat":"cuda_driver","name":"api_%d","pid":7,"tid":7,"ts":%d.%03d,"dur":0.500,'
                '"args":{"seq":%d,"depth":0,"v%d":%d,"result":"CUDA_SUCCESS"}},\n' % (i, 1000 + i, i % 1000, i + 1, i % 3, i))
PY
"$enc" 7 <"$dir/events" >"$dir/t.perfetto-trace" 2>"$dir/err"
grep -q "interning cleared 1 times" "$dir/err" || { echo "FAIL: $(cat "$dir/err")"; exit 1; }
python3 - "$pft" "$dir/t.perfetto-trace" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location('pftrace', sys.argv[1])
pftrace = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pftrace)
evs, info = pftrace.events(sys.argv[2])
calls = [e for e in evs if e.get('cat') == 'cuda_driver']
assert len(calls) == 70000, len(calls)
for i, e in enumerate(sorted(calls, key=lambda e: e['ts'])):
    assert e['name'] == 'api_%d' % i and e['args'] == {'seq': i + 1, 'depth': 0, 'v%d' % (i % 3): i,
                                                       'result': 'CUDA_SUCCESS'}, e
print('70000 calls, interning cleared once: every id defined before its use')
PY
