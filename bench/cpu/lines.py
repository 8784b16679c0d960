#!/usr/bin/env python3
"""lines.py CALLGRIND_OUT CALLS [DETAIL] - bench/cpu/lines.sh's reader of a callgrind --dump-instr=yes file:
per object (the shim, the plugins, ld.so, libc) and function, the distinct instructions that ran at least
0.9 x CALLS times (once a call) and the distinct 64-byte lines they lie in. The driver and the benchmark's
own code are left out."""
import collections
import re
import sys


def main():
    path, calls = sys.argv[1], int(sys.argv[2])
    detail = len(sys.argv) > 3 and sys.argv[3] not in ("", "0")
    names = {}

    def name(kind, text):   # callgrind's name compression: "(N) name" defines, "(N)" refers
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2):
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), text)

    ob = fn = None
    addr = 0
    skip = False
    cost = collections.defaultdict(int)
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            ob = name("ob", line[3:])
        elif line.startswith("fn="):
            fn = name("fn", line[3:])
        elif line.startswith("cob="):
            name("ob", line[4:])
        elif line.startswith("cfn="):
            name("fn", line[4:])
        elif line.startswith("calls="):
            skip = True   # the next cost line is the call's inclusive cost, not this instruction's
        else:
            m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+\s+(\d+)", line)
            if not m:
                continue
            a = m.group(1)
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a != "*":
                addr += int(a)
            if skip:
                skip = False
                continue
            cost[(ob, fn, addr)] += int(m.group(2))
    keep = ("libcushim", "trace.so", "ld-linux", "libc.so")
    objs = collections.defaultdict(list)
    for (ob, fn, a), c in cost.items():
        if ob and c >= calls * 0.9 and any(k in ob for k in keep):
            objs[ob].append((a, fn))
    total_i = total_l = 0
    for ob in sorted(objs):
        L = objs[ob]
        lines = {a >> 6 for a, _ in L}
        total_i += len(L)
        total_l += len(lines)
        print("%-28s instructions %4d  lines %3d" % (ob.rsplit("/", 1)[-1], len(L), len(lines)))
        byfn = collections.Counter(f for _, f in L)
        for f, n in byfn.most_common():
            print("    %-36s instructions %4d  lines %3d" % (f, n, len({a >> 6 for a, g in L if g == f})))
        if detail:
            per = collections.Counter(a >> 6 for a, _ in L)
            base = min(per)
            print("    " + " ".join("+%x:%d" % ((l - base) * 64, n) for l, n in sorted(per.items())))
    print("%-28s instructions %4d  lines %3d" % ("total", total_i, total_l))


if __name__ == "__main__":
    main()
