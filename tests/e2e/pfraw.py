#!/usr/bin/env python3
"""pfraw.py - a second, independent check of the trace plugin's Perfetto files: Google's own protobuf parser.

`protoc --decode_raw` (Debian's protobuf-compiler) parses the file's wire format with the reference protobuf
implementation - no schema, none of our code - and prints it as text with field numbers; this script checks that
it parses whole (a truncated field, a bad tag or length fails it) and that the field structure is the one
Perfetto's published protos give the messages the plugin writes (protos/perfetto/trace/trace.proto,
trace_packet.proto, track_event/track_event.proto, track_event/track_descriptor.proto): a Trace is only its
`packet` field (1); a TracePacket holds only clock_snapshot (6), timestamp (8), trusted_packet_sequence_id (10),
track_event (11), interned_data (12), sequence_flags (13), trace_packet_defaults (59), track_descriptor (60),
each one at most once; a TrackEvent only category_iids (3), debug_annotations (4), type (9), name_iid (10),
track_uuid (11), flow_ids (47), terminating_flow_ids (48); a TrackDescriptor only uuid (1), name (2), process (3),
thread (4), parent_uuid (5). tests/e2e/pftrace.py walks the same bytes with its own decoder and the full subset.

  pfraw.py FILE [PACKETS]   checks FILE (.gz: gunzipped first); PACKETS: the number of packets it must hold
Exit status 0 (prints "N packets, M track events"), 1 (the first violation), 77 (no protoc: skipped, said).
"""
import gzip
import re
import shutil
import subprocess
import sys

PACKET = {6, 8, 10, 11, 12, 13, 59, 60}
TRACK_EVENT = {3, 4, 9, 10, 11, 47, 48}
TRACK_DESCRIPTOR = {1, 2, 3, 4, 5}
LINE = re.compile(r'^(\d+)(?:: (.*)| \{)$')


def parse(text):
    """decode_raw's text as a tree: a list of (field, value) where value is a string or a list (a message)."""
    root, stack = [], []
    cur = root
    for ln in text.splitlines():
        s = ln.strip()
        if not s:
            continue
        if s == '}':
            if not stack:
                raise ValueError('an unmatched }')
            cur = stack.pop()
            continue
        m = LINE.match(s)
        if m is None:
            raise ValueError('not a field: %r' % s[:80])
        if m.group(2) is None:
            child = []
            cur.append((int(m.group(1)), child))
            stack.append(cur)
            cur = child
        else:
            cur.append((int(m.group(1)), m.group(2)))
    if stack:
        raise ValueError('an unclosed message')
    return root


def check(tree, want):
    n_ev = 0
    if any(f != 1 for f, _ in tree):
        raise ValueError('the Trace holds fields other than packet (1): %s' % sorted({f for f, _ in tree}))
    for i, (_, pkt) in enumerate(tree):
        if not isinstance(pkt, list):
            raise ValueError('packet %d is not a message' % i)
        fields = [f for f, _ in pkt]
        if not set(fields) <= PACKET or len(fields) != len(set(fields)):
            raise ValueError('packet %d: fields %s (a TracePacket of the plugin: %s, each once)' %
                             (i, fields, sorted(PACKET)))
        for f, v in pkt:
            if f in (8, 10, 13) and not (isinstance(v, str) and v.isdigit()):
                raise ValueError('packet %d: field %d is not a varint: %r' % (i, f, v))
            if f in (6, 11, 12, 59, 60) and not isinstance(v, list):
                raise ValueError('packet %d: field %d is not a message' % (i, f))
            if f == 11:
                n_ev += 1
                bad = {g for g, _ in v} - TRACK_EVENT
                if bad:
                    raise ValueError('packet %d: a TrackEvent with fields %s' % (i, sorted(bad)))
            if f == 60:
                bad = {g for g, _ in v} - TRACK_DESCRIPTOR
                if bad:
                    raise ValueError('packet %d: a TrackDescriptor with fields %s' % (i, sorted(bad)))
    if want is not None and len(tree) != want:
        raise ValueError('%d packets, the walker counted %d' % (len(tree), want))
    return n_ev


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    protoc = shutil.which('protoc')
    if protoc is None:
        print('pfraw: skipped: no protoc (Debian package protobuf-compiler) to decode %s with' % argv[1])
        return 77
    path = argv[1]
    data = gzip.open(path).read() if path.endswith('.gz') else open(path, 'rb').read()
    r = subprocess.run([protoc, '--decode_raw'], input=data, capture_output=True)
    if r.returncode != 0:
        print('pfraw: %s: protoc --decode_raw refused it: %s' % (path, r.stderr.decode(errors='replace').strip()),
              file=sys.stderr)
        return 1
    try:
        tree = parse(r.stdout.decode('utf-8', errors='replace'))
        n_ev = check(tree, int(argv[2]) if len(argv) > 2 else None)
    except ValueError as e:
        print('pfraw: %s: %s' % (path, e), file=sys.stderr)
        return 1
    print('%d packets, %d track events' % (len(tree), n_ev))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
