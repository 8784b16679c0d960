#!/usr/bin/env python3
"""pftrace.py - an independent reader of the trace plugin's Perfetto files, for the tests (no protobuf package).

A generic protobuf wire-format walker (tags, varints, fixed64, length-delimited fields) that checks every field
number and wire type against the subset of Perfetto's schema (protos/perfetto/trace/...) the plugin writes, and
that every interned id a packet uses was defined earlier on its sequence since the last
SEQ_INCREMENTAL_STATE_CLEARED. It turns the packets back into events shaped like the JSON format's ('X' from a
SLICE_BEGIN and its SLICE_END, 'B'/'E', 'b'/'e', 'i', 'M' thread/process names), timestamps in ns.

  pftrace.py FILE                 prints a summary (packets, events by kind) or fails with the first violation
  pftrace.py --compare PF JSON    the two files hold the same events (calls, names, args, threads, nesting);
                                  prints the calls and the packets
  pftrace.py --count PF           the number of CUDA API calls in the file
"""
import gzip
import json
import re
import struct
import sys

V, I64, LEN, I32 = 0, 1, 2, 5

# message -> {field: (wire type, submessage or kind, repeated)}; kinds: 'u' varint, 's' string, 'b' bytes,
# 'f64' fixed64, 'd' double
SCHEMA = {
    'Trace': {1: (LEN, 'TracePacket')},
    'TracePacket': {8: (V, 'u'), 10: (V, 'u'), 11: (LEN, 'TrackEvent'), 12: (LEN, 'InternedData'), 13: (V, 'u'),
                    6: (LEN, 'ClockSnapshot'), 59: (LEN, 'TracePacketDefaults'), 60: (LEN, 'TrackDescriptor')},
    'ClockSnapshot': {1: (LEN, 'Clock'), 2: (V, 'u')},
    'Clock': {1: (V, 'u'), 2: (V, 'u')},
    'TracePacketDefaults': {58: (V, 'u')},
    'TrackDescriptor': {1: (V, 'u'), 2: (LEN, 's'), 3: (LEN, 'ProcessDescriptor'), 4: (LEN, 'ThreadDescriptor'),
                        5: (V, 'u')},
    'ProcessDescriptor': {1: (V, 'u'), 6: (LEN, 's'), 8: (LEN, 's')},
    'ThreadDescriptor': {1: (V, 'u'), 2: (V, 'u'), 5: (LEN, 's')},
    'TrackEvent': {3: (V, 'u'), 4: (LEN, 'DebugAnnotation'), 9: (V, 'u'), 10: (V, 'u'), 11: (V, 'u'),
                   47: (I64, 'f64'), 48: (I64, 'f64')},
    'DebugAnnotation': {1: (V, 'u'), 2: (V, 'u'), 3: (V, 'u'), 4: (V, 'u'), 5: (I64, 'd'), 6: (LEN, 's'),
                        7: (V, 'u'), 9: (LEN, 's'), 17: (V, 'u')},
    'InternedData': {1: (LEN, 'Interned'), 2: (LEN, 'Interned'), 3: (LEN, 'Interned'), 29: (LEN, 'Interned')},
    'Interned': {1: (V, 'u'), 2: (LEN, 'b')},
}


class Bad(Exception):
    pass


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise Bad('varint past the end at %d' % i)
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if not c & 0x80:
            return v, i
        if s > 63:
            raise Bad('varint longer than 10 bytes at %d' % i)


def walk(b, msg, base=0):
    """[(field, value)] of message 'msg' in bytes b; submessages walked (dicts of lists)."""
    out = {}
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wt = key >> 3, key & 7
        spec = SCHEMA[msg].get(field)
        if spec is None:
            raise Bad('%s: field %d (wire type %d) is not in the schema, at byte %d' % (msg, field, wt, base + i))
        if spec[0] != wt:
            raise Bad('%s.%d: wire type %d, the schema says %d' % (msg, field, wt, spec[0]))
        if wt == V:
            v, i = varint(b, i)
        elif wt == I64:
            if i + 8 > len(b):
                raise Bad('%s.%d: fixed64 past the end' % (msg, field))
            raw = b[i:i + 8]
            v = struct.unpack('<d', raw)[0] if spec[1] == 'd' else struct.unpack('<Q', raw)[0]
            i += 8
        else:
            n, i = varint(b, i)
            if i + n > len(b):
                raise Bad('%s.%d: %d bytes past the end' % (msg, field, n))
            raw = b[i:i + n]
            if spec[1] == 's':
                v = raw.decode('utf-8')   # a string field must be UTF-8 (strict)
            elif spec[1] == 'b':
                v = raw
            else:
                v = walk(raw, spec[1], base + i)
            i += n
        out.setdefault(field, []).append(v)
    return out


def one(m, f, default=None):
    v = m.get(f)
    return v[-1] if v else default


def read(path):
    data = open(path, 'rb').read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    packets = walk(data, 'Trace').get(1, [])
    return packets


def events(path):
    """The file's events as JSON-format events: (list, stats)."""
    packets = read(path)
    tables = {}          # per sequence: {interned field: {iid: str}}
    tracks = {}          # uuid -> ('thread', tid) | ('proc', pid) | ('track', name)
    names = {}           # ('thread'|'proc', id) -> name
    open_slices = {}     # track uuid -> stack of begin events
    evs, raw = [], []
    pid = None
    clock_default = {}
    for p in packets:
        seq = one(p, 10)
        if seq is None:
            raise Bad('a packet without trusted_packet_sequence_id')
        flags = one(p, 13, 0)
        if flags & 1:
            tables[seq] = {1: {}, 2: {}, 3: {}, 29: {}}
        if 12 in p:
            if not flags & 2:
                raise Bad('interned data on a packet without SEQ_NEEDS_INCREMENTAL_STATE')
            if seq not in tables:
                raise Bad('interned data before the sequence was cleared')
            for f, entries in one(p, 12).items():
                for e in entries:
                    iid = one(e, 1)
                    if iid in tables[seq][f]:
                        raise Bad('iid %d of interned field %d defined twice' % (iid, f))
                    tables[seq][f][iid] = one(e, 2, b'').decode('utf-8')
        if 59 in p:
            clock_default[seq] = one(one(p, 59), 58)
        if 60 in p:
            td = one(p, 60)
            uuid = one(td, 1)
            if 3 in td:
                pid = one(one(td, 3), 1)
                tracks[uuid] = ('proc', pid)
                names[('proc', pid)] = one(one(td, 3), 6)
            elif 4 in td:
                th = one(td, 4)
                tracks[uuid] = ('thread', one(th, 2))
                if 5 in th:
                    names[('thread', one(th, 2))] = one(th, 5)
            else:
                tracks[uuid] = ('track', uuid)
                if 2 in td:
                    names[('track', uuid)] = one(td, 2)
            if 5 in td and one(td, 5) not in tracks:
                raise Bad('track %x: parent %x not described before' % (uuid, one(td, 5)))
        if 11 in p:
            te = one(p, 11)
            if not flags & 2:
                raise Bad('a track event using interned ids on a packet without SEQ_NEEDS_INCREMENTAL_STATE')
            tab = tables.get(seq)
            if tab is None:
                raise Bad('a track event before the sequence was cleared')

            def lookup(f, iid):
                if iid not in tab[f]:
                    raise Bad('interned id %d (field %d) used before it was defined on the sequence' % (iid, f))
                return tab[f][iid]
            ts = one(p, 8)
            if ts is None:
                raise Bad('a track event without a timestamp')
            uuid = one(te, 11)
            if uuid not in tracks:
                raise Bad('track event on track %x, not described before' % uuid)
            kind, ident = tracks[uuid]
            typ = one(te, 9)
            cat = lookup(1, one(te, 3)) if 3 in te else None
            name = lookup(2, one(te, 10)) if 10 in te else None
            args = {}
            for a in te.get(4, []):
                k = lookup(3, one(a, 1))
                if 7 in a:
                    v = '0x%x' % one(a, 7)
                elif 17 in a:
                    v = lookup(29, one(a, 17))
                elif 6 in a:
                    v = one(a, 6)
                elif 9 in a:
                    v = json.loads(one(a, 9))
                elif 2 in a:
                    v = bool(one(a, 2))
                elif 3 in a:
                    v = one(a, 3)
                elif 4 in a:
                    v = one(a, 4)
                    v = v - (1 << 64) if v >= 1 << 63 else v
                elif 5 in a:
                    v = one(a, 5)
                else:
                    raise Bad('an annotation without a value')
                args[k] = v
            e = {'cat': cat, 'name': name, 'ts': ts, 'track': (kind, ident)}
            if args:
                e['args'] = args
            if 47 in te:
                e['flow_out'] = te[47]
            if 48 in te:
                e['flow_in'] = te[48]
            if typ not in (1, 2, 3):
                raise Bad('track event type %s' % typ)
            e['type'] = typ
            e['uuid'] = uuid
            raw.append(e)
    # as trace_processor does: the events sorted by time (stable: ties in file order), then slices matched
    raw.sort(key=lambda e: e['ts'])
    for e in raw:
        typ, uuid = e.pop('type'), e.pop('uuid')
        if True:
            if typ == 1:
                open_slices.setdefault(uuid, []).append(e)
            elif typ == 2:
                st = open_slices.get(uuid)
                if not st:
                    raise Bad('SLICE_END on track %x with no slice open' % uuid)
                b = st.pop()
                b['dur'] = ts - b['ts']
                b['depth_on_track'] = len(st)
                b['end_cat'] = cat
                evs.append(b)
            elif typ == 3:
                e['instant'] = True
                evs.append(e)
    left = sum(len(s) for s in open_slices.values())
    return evs, {'packets': len(packets), 'open': left, 'names': names, 'pid': pid, 'clock': clock_default}


def json_events(path):
    d = json.load(gzip.open(path, 'rt', encoding='utf-8') if path.endswith('.gz') else open(path, encoding='utf-8'))
    return d


def ns(v):
    return round(v * 1000)


def api_calls(evs):
    return [e for e in evs if e.get('cat') in ('cuda_driver', 'cuda_runtime', 'cuda_api_unfinished')
            and not e.get('instant')]


def norm(v):
    """A value with what differs between two runs of one program masked: addresses, measured times (floats)."""
    if isinstance(v, float):
        return 'float'
    if isinstance(v, str) and re.fullmatch(r'0x[0-9a-f]+', v):
        return '0x?'
    if isinstance(v, str):
        return re.sub(r'0x[0-9a-f]+', '0x?', v)
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):   # a call's number: its thread buffer's (a buffer of a thread that ended is reused)
        return {k: 'n' if k in ('seq', 'parent', 'external id') and isinstance(x, int) else norm(x)
                for k, x in v.items()}
    return v


def by_thread(items):
    """{thread's order of first appearance: [item...]} from (tid, ts, item) in time order."""
    order, out = {}, {}
    for tid, _, it in sorted(items, key=lambda x: (x[1], repr(x[2]))):   # (ties: GPU records of one time)
        out.setdefault(order.setdefault(tid, len(order)), []).append(it)
    return out


def compare(pf, js):
    """The Perfetto file of one run against the JSON file of another run of the same program: the same calls
    (names, categories, arguments with addresses masked, results), on the same threads, with the same nesting; the
    same GPU work, NVTX ranges and marks, flows and thread names. Times differ between runs: the Perfetto file's
    own are checked for order (every slice ends after it begins, nested slices inside their parent)."""
    evs, info = events(pf)
    d = json_events(js)
    jev = d['traceEvents']
    if info['open']:
        raise Bad('%d slices never ended' % info['open'])
    jx = [(e['tid'], ns(e['ts']), (e['cat'], e['name'], norm(e.get('args', {}))))
          for e in jev if e.get('ph') == 'X']
    px = [(e['track'][1], e['ts'], (e['cat'], e['name'], norm(e.get('args', {}))))
          for e in evs if 'dur' in e and e.get('cat') != 'nvtx']
    # threads in the order of their first events (threads that race come in another order in another run: then
    # matched as a multiset)
    jt, pt = by_thread(jx), by_thread(px)
    if jt != pt and sorted(map(repr, jt.values())) == sorted(map(repr, pt.values())):
        pt = jt
    if jt != pt:
        for t in sorted(set(jt) | set(pt)):
            a, b = jt.get(t, []), pt.get(t, [])
            for i in range(max(len(a), len(b))):
                if i >= len(a) or i >= len(b) or a[i] != b[i]:
                    raise Bad('thread %d, event %d differs:\n  json     %r\n  perfetto %r'
                              % (t, i, a[i] if i < len(a) else None, b[i] if i < len(b) else None))
    # nesting: a call whose parent call is in the file lies inside the parent's slice on the same track, one
    # level deeper than it
    calls = api_calls([e for e in evs if 'dur' in e])
    by_seq = {e['args']['seq']: e for e in calls if 'seq' in e.get('args', {})}
    nested = 0
    for e in calls:
        if e['dur'] < 0:
            raise Bad('%s ends before it begins' % e['name'])
        par = by_seq.get(e.get('args', {}).get('parent'))
        if par is None:
            continue
        if (par['track'] != e['track'] or not par['ts'] <= e['ts'] <= e['ts'] + e['dur'] <= par['ts'] + par['dur']
                or e['depth_on_track'] != par['depth_on_track'] + 1):
            raise Bad('%s (seq %d) is not nested in its parent %s' % (e['name'], e['args']['seq'], par['name']))
        nested += 1
    if nested != sum(1 for e in jev if e.get('ph') == 'X' and e.get('args', {}).get('parent') in
                     {x['args'].get('seq') for x in jev if x.get('ph') == 'X' and 'seq' in x.get('args', {})}):
        raise Bad('%d nested calls, not the JSON\'s number' % nested)
    # flows: a call's flow id is its seq, a GPU record's its external id; as many as the JSON's
    for ph, fk in (('s', 'flow_out'), ('f', 'flow_in')):
        want = len([e for e in jev if e.get('ph') == ph])
        got = [(i, e) for e in evs for i in e.get(fk, [])]
        if want != len(got):
            raise Bad('%d flow %s events in the JSON, %d in the Perfetto file' % (want, ph, len(got)))
        for i, e in got:
            if e['args'].get('seq' if ph == 's' else 'external id') != i:
                raise Bad('flow %d on %s, whose args are %r' % (i, e['name'], e['args']))
    # NVTX: ranges and marks by thread, in order
    jn, stack = [], {}
    for e in jev:
        if e.get('cat') != 'nvtx':
            continue
        if e['ph'] in 'Bb':
            stack.setdefault((e['ph'], e['tid'], e.get('id')), []).append(e)
        elif e['ph'] in 'Ee':
            b = stack[('B' if e['ph'] == 'E' else 'b', e['tid'], e.get('id'))].pop()
            jn.append((b['tid'] if b['ph'] == 'B' else 'async', ns(b['ts']), (b['ph'], b['name'], b.get('args', {}))))
        elif e['ph'] == 'i':
            jn.append((e['tid'], ns(e['ts']), ('i', e['name'], e.get('args', {}))))
    pn = [(e['track'][1] if e['track'][0] == 'thread' else 'async', e['ts'], ('i' if e.get('instant') else 'B' if e['track'][0] == 'thread' else 'b',
                                    e['name'], e.get('args', {}))) for e in evs if e.get('cat') == 'nvtx']
    if [sorted(map(repr, x)) for x in by_thread(jn).values()] != [sorted(map(repr, x)) for x in by_thread(pn).values()]:
        raise Bad('NVTX events differ:\n  json     %r\n  perfetto %r' % (by_thread(jn), by_thread(pn)))
    # thread names: the last name of each thread, in the threads' order
    jnames = {}
    for e in jev:
        if e.get('ph') == 'M' and e['name'] == 'thread_name':
            jnames[e['tid']] = e['args']['name']
    pnames = sorted(v for (k, u), v in info['names'].items() if k == 'thread' or (k == 'track' and u & 3 == 1))
    num = lambda names: sorted(re.sub(r'[0-9]+', 'N', n) for n in names)   # 'thread <tid>': tids differ
    if num(jnames.values()) != num(pnames):
        raise Bad('thread names %r, the JSON has %r' % (pnames, sorted(jnames.values())))
    od = [e for e in evs if e.get('name') == 'otherData']
    if len(od) != 1 or od[0]['args'].get('tool') != 'cushim trace':
        raise Bad('no otherData event')
    if od[0]['args']['events'] != d['otherData']['events']:
        raise Bad('otherData.events %d, the JSON run wrote %d' % (od[0]['args']['events'], d['otherData']['events']))
    return len(calls), info['packets']


def main(argv):
    try:
        if len(argv) == 4 and argv[1] == '--compare':
            n, packets = compare(argv[2], argv[3])
            print('same events: %d calls' % n)
            print('%d packets' % packets)
        elif len(argv) == 3 and argv[1] == '--count':
            evs, info = events(argv[2])
            print(len(api_calls(evs)))
        elif len(argv) == 2:
            evs, info = events(argv[1])
            print('%d packets, %d events, %d calls' % (info['packets'], len(evs), len(api_calls(evs))))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (Bad, UnicodeDecodeError, KeyError, ValueError) as e:
        print('pftrace: %s: %s' % (argv[-1], e), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
