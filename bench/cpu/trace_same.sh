#!/usr/bin/env bash
# trace_same.sh - do two builds of the trace plugin render the same calls? For changes to the recording path
# (docs/benchmarks.md, "Trace plugin"): runs the fake vecadd and e2e_trace's runtime, structs and many workloads,
# and vecadd with --trace-gpu against the stand-in CUPTI, once under each plugin (same shim, same fake driver),
# and compares the events with the values that differ from run to run blanked: ts, dur, pid, tid, host
# addresses (0x7..., 0x5... with 12 hex digits), measured event times.
#
# USAGE: bench/cpu/trace_same.sh BUILD OTHER_TRACE_SO
#   BUILD          a build with cushim, trace, e2e_trace, vecadd, the fake libraries and trace_fake_cupti
#   OTHER_TRACE_SO the plugin to compare with BUILD/plugins/trace.so, e.g. built from an older commit:
#     git archive OLD plugins/trace sdk | tar -x -C /tmp/old && cd /tmp/old &&
#     gcc -O2 -fPIC -shared -fvisibility=hidden -DTR_HAVE_CUPTI -DTR_HAVE_NVTX -Isdk/include \
#         -isystem /usr/local/cuda/include -o trace_old.so plugins/trace/*.c -lz -lpthread -lm -ldl
# Exit status 0 when every workload renders the same events.
set -euo pipefail
B=$(cd "${1:?usage: trace_same.sh BUILD OTHER_TRACE_SO}" && pwd)
OTHER=$(realpath "${2:?usage: trace_same.sh BUILD OTHER_TRACE_SO}")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
CUPTI=$(find "$B/tests/e2e" -name 'libtrace_fake_cupti*.so' | head -n 1)
export LD_LIBRARY_PATH="$B/tests/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CUSHIM_LOG=error
for v in this other; do
  so="$B/plugins/trace.so"; [ "$v" = other ] && so=$OTHER
  for w in "vecadd:$B/examples/vecadd 4096" "runtime:$B/tests/e2e/e2e_trace runtime" \
           "structs:$B/tests/e2e/e2e_trace structs" "many:$B/tests/e2e/e2e_trace many 3000" \
           "gpu:$B/examples/vecadd 1024"; do
    name=${w%%:*} opts="file=$D/$v.${w%%:*}.json,summary=0"
    [ "$name" = gpu ] && opts="$opts,gpu=1,cupti=$CUPTI"
    # shellcheck disable=SC2086 # the workload's words
    env LD_PRELOAD="$B/runtime/libcushim.so" CUSHIM_PLUGINS="$so:$opts" ${w#*:} >/dev/null 2>&1 ||
      { echo "$v plugin: '${w#*:}' failed" >&2; exit 1; }
  done
done
python3 - "$D" <<'PY'
import json, re, sys
def events(path):
    out = []
    for e in json.load(open(path))['traceEvents']:
        if e.get('ph') == 'M':
            continue
        e = {k: v for k, v in e.items() if k not in ('ts', 'dur', 'pid', 'tid')}
        s = json.dumps(e, sort_keys=True)
        s = re.sub(r'0x[75][0-9a-f]{11}\b', '0xHOST', s)
        s = re.sub(r'"pMilliseconds": [0-9.e-]+', '"pMilliseconds": T', s)
        out.append(s)
    return out
bad = 0
for name in ('vecadd', 'runtime', 'structs', 'many', 'gpu'):
    a, b = events('%s/this.%s.json' % (sys.argv[1], name)), events('%s/other.%s.json' % (sys.argv[1], name))
    if a == b:
        print('%-8s same: %d events' % (name, len(a)))
        continue
    bad += 1
    print('%-8s DIFFERENT: %d and %d events' % (name, len(a), len(b)))
    for x, y in [(x, y) for x, y in zip(a, b) if x != y][:3]:
        print('  this:  ' + x + '\n  other: ' + y)
sys.exit(1 if bad else 0)
PY
