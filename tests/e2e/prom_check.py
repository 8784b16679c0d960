#!/usr/bin/env python3
"""prom_check.py FILE: check 'cushim usage --prometheus' output against the Prometheus text exposition format
(version 0.0.4) and against itself. Every line is a '# HELP'/'# TYPE' comment or a sample
'name{label="value",...} number'; names and label names are valid; label values are correctly escaped UTF-8;
a metric's TYPE comes before its samples and once; no sample repeats a label set. Then, per process and device,
cushim_memlimit_library_used_bytes sums to cushim_memlimit_used_bytes (memory by library covers every charged
byte). Prints 'prom_check: OK N samples' or the first problem, exit 1."""
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def fail(msg, line=None):
    print('prom_check: ' + msg + (': ' + repr(line) if line is not None else ''))
    sys.exit(1)


def parse_labels(s, line):
    labels, pos = {}, 0
    while pos < len(s):
        m = LABEL.match(s, pos)
        if not m:
            fail('bad label at column %d' % pos, line)
        k = m.group(1)
        if k in labels:
            fail('label %s twice' % k, line)
        labels[k] = re.sub(r'\\(.)', lambda x: '\n' if x.group(1) == 'n' else x.group(1), m.group(2))
        pos = m.end()
        if pos < len(s):
            if s[pos] != ',':
                fail('expected , between labels', line)
            pos += 1
    return labels


def main():
    raw = open(sys.argv[1], 'rb').read()
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        fail('not UTF-8 (%s)' % e)
    typed, seen, samples = {}, set(), []
    for line in text.split('\n')[:-1] if text.endswith('\n') else fail('no final newline'):
        if line.startswith('# HELP '):
            continue
        if line.startswith('# TYPE '):
            parts = line.split(' ')
            if len(parts) != 4 or not NAME.fullmatch(parts[2]) or parts[3] not in ('gauge', 'counter'):
                fail('bad TYPE line', line)
            if parts[2] in typed:
                fail('TYPE twice', line)
            typed[parts[2]] = parts[3]
            continue
        if line.startswith('#') or line == '':
            fail('unexpected line', line)
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\d+(?:\.\d+)?)', line)
        if not m:
            fail('not a sample', line)
        name, labels = m.group(1), parse_labels(m.group(2), line)
        if name not in typed:
            fail('sample before its TYPE', line)
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            fail('repeated sample', line)
        seen.add(key)
        if typed[name] == 'counter' and not name.endswith('_total'):
            fail('a counter not named *_total', line)
        samples.append((name, labels, float(m.group(3)) if '.' in m.group(3) else int(m.group(3))))
    used, bylib = {}, {}
    for name, l, v in samples:
        if name == 'cushim_memlimit_used_bytes':
            used[(l['pid'], l['device'])] = v
        elif name == 'cushim_memlimit_library_used_bytes':
            if l['device'] == 'all':
                fail('an (other) entry for every device: the per-device sums cannot be checked')
            k = (l['pid'], l['device'])
            bylib[k] = bylib.get(k, 0) + v
    for k, v in used.items():
        if bylib.get(k, 0) != v:
            fail('pid %s device %s: %d bytes charged, %d by library' % (k[0], k[1], v, bylib.get(k, 0)))
    for k in bylib:
        if k not in used:
            fail('pid %s device %s: by library but no charged row' % k)
    print('prom_check: OK %d samples' % len(samples))


main()
