#!/usr/bin/env python3
"""compare_launches.py - launches per kernel name: the lua plugin's launches.lua report against the trace
plugin's file of the same run (tests/gpu/checks/lua.sh, 'lua launches trace').

USAGE: compare_launches.py REPORT TRACE.json

REPORT holds 'launches<TAB>N<TAB>NAME' lines (and a 'total' line); TRACE.json is the trace plugin's Chrome
trace: every complete event of a driver launch API carries args.kernel. Prints 'PASS ...' or 'FAIL ...' and
exits 0 / 1.
"""
import collections
import json
import re
import sys

LAUNCH = re.compile(r"^(cuLaunchKernel|cuLaunchKernelEx|cuLaunchCooperativeKernel)(_ptsz)?$")


def main():
    report, trace = sys.argv[1], sys.argv[2]
    lua = {}
    for line in open(report, encoding="utf-8", errors="replace"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3 and parts[0] == "launches" and parts[2] != "total":
            lua[parts[2]] = lua.get(parts[2], 0) + int(parts[1])
    with open(trace, encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    tr = collections.Counter()
    unnamed = 0
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") != "X" or not LAUNCH.match(str(ev.get("name", ""))):
            continue
        if ev.get("cat") not in ("cuda_driver",):
            continue
        name = (ev.get("args") or {}).get("kernel")
        if not name:
            unnamed += 1
            continue
        tr[name] += 1
    if not lua or not tr:
        print(f"FAIL empty: {len(lua)} kernels in the lua report, {len(tr)} in the trace")
        return 1
    diff = {k: (lua.get(k, 0), tr.get(k, 0)) for k in set(lua) | set(tr) if lua.get(k, 0) != tr.get(k, 0)}
    if diff or unnamed:
        shown = "; ".join(f"{k[:60]}: lua {a} trace {b}" for k, (a, b) in sorted(diff.items())[:3])
        print(f"FAIL {len(diff)} kernels differ, {unnamed} trace launches without a name: {shown}")
        return 1
    print(f"PASS {sum(lua.values())} launches of {len(lua)} kernels, every name's count equal to the trace's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
