#!/usr/bin/env python3
"""parts.py CALLGRIND_OUT CALLS SRC_ROOT[:SRC_ROOT...] [DETAIL] - bench/cpu/flight_lines.sh's reader: the
instructions one recorded call executes (callgrind's Ir, loops counted, over CALLS calls), split by part of the
work, from the source line each instruction comes from (callgrind's line-level data of a build with debug
information; inlined code is counted where its source is). A line belongs to the source function it lies in -
the nearest definition above it in the file under the SRC_ROOT its path starts with (the first root for the
others) - and the function to a part:

  clocks     the host's clock reads (runtime/clock.h, clock.c; libc's clock_gettime)
  dispatch   the rest of the host: the exported wrapper, the call frame, the epoch, the unwinding record, the
             hook calls (runtime/, generated/, ld.so's TLS descriptor)
  copy       the plugin's copies of the raw params struct and of a launch's kernel arguments
  names      the plugin's work on the launched function: the kernel name (trace) or the function table entry
             (flight) looked up in the thread's cache
  record     the rest of the plugin: the record's header, the thread's buffer, the result
  other      anything else (libc's memset...)

The driver and the program are left out, as lines.py leaves them out. DETAIL (not empty, not 0): also each
source function's share, per part."""
import collections
import os
import re
import sys

COPY = {"tr_copy_params", "tr_copy_params_wide", "tr_copy_params_odd", "fl_copy", "fl_args_copy", "fl_args_simple"}
NAMES = {"tr_kernel_name", "tr_kernel_name_slow", "tr_launch_name", "tr_launch_name_up", "tr_open_kname_up",
         "tr_ptr_hash", "tr_enter_aux", "fl_func_args", "fl_hash", "fl_describe"}
CLOCK_FILES = ("runtime/clock.h", "runtime/clock.c")
DEF = re.compile(r"^(?:static\s+|inline\s+|__attribute__\(\([^)]*\)\)\s+|const\s+|unsigned\s+|struct\s+)*"
                 r"[A-Za-z_][A-Za-z0-9_ \t\*]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions_of(path, cache={}):
    """The source function each line of 'path' lies in (a list by line number), from definitions at column 0."""
    if path in cache:
        return cache[path]
    out = []
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    except OSError:
        cache[path] = None
        return None
    cur = "?"
    for i, line in enumerate(lines):
        m = DEF.match(line)
        if m and not line.startswith(("#", " ", "\t", "}", "{")) and not line.rstrip().endswith(";"):
            cur = m.group(1)
        elif line.startswith("#define "):
            cur = line.split()[1].split("(")[0]
        out.append(cur)
    cache[path] = out
    return out


def main():
    path, calls = sys.argv[1], int(sys.argv[2])
    roots = [r.rstrip("/") for r in sys.argv[3].split(":") if r]   # SRC_ROOT: a list, ':' between
    names = {}

    def name(kind, text):   # callgrind's name compression: "(N) name" defines, "(N)" refers
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2):
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), text)

    ob = fl = fi = None
    npos, li = 1, 0        # position columns ("positions: instr line" with --dump-instr=yes), the line's index
    pos = [0, 0]
    skip = False
    cost = collections.Counter()   # (object, file, line) -> Ir
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("ob="):
            ob = name("ob", line[3:])
        elif line.startswith("fl="):
            fl = fi = name("fl", line[3:])
        elif line.startswith(("fi=", "fe=")):
            fi = name("fl", line[3:])
        elif line.startswith("fn="):
            name("fn", line[3:])
            fi = fl
        elif line.startswith("cob="):
            name("ob", line[4:])
        elif line.startswith(("cfi=", "cfl=")):
            name("fl", line[4:])
        elif line.startswith("cfn="):
            name("fn", line[4:])
        elif line.startswith("positions:"):
            kinds = line.split()[1:]
            npos, li = len(kinds), kinds.index("line") if "line" in kinds else 0
        elif line.startswith("calls="):
            skip = True   # the next cost line is the call's inclusive cost
        else:
            f = line.split()
            if len(f) < npos + 1 or not re.match(r"^(0x[0-9a-f]+|\d+|[+-]\d+|\*)$", f[0]):
                continue
            for k in range(npos):
                a = f[k]
                if a[0] in "+-":
                    pos[k] += int(a)
                elif a != "*":
                    pos[k] = int(a, 0)
            if skip:
                skip = False
                continue
            cost[(ob or "", fi or "", pos[li])] += int(f[npos])
    parts = collections.Counter()
    by_fn = collections.Counter()
    for (ob, f, ln), c in cost.items():
        if not any(k in ob for k in ("libcushim", "trace.so", "flight.so", "ld-linux", "libc.so")):
            continue
        rel, root = f, roots[0]
        for r in roots:
            if rel.startswith(r + "/"):
                rel, root = rel[len(r) + 1:], r
                break
        fns = functions_of(os.path.join(root, rel)) if not rel.startswith("/") and not rel.startswith(".") else None
        fn = fns[ln - 1] if fns and 0 < ln <= len(fns) else "?"
        if rel.startswith(CLOCK_FILES) or "clock_gettime" in f:
            part = "clocks"
        elif rel.startswith(("plugins/", "bench/")):
            part = "copy" if fn in COPY else "names" if fn in NAMES else "record"
        elif rel.startswith(("runtime/", "generated/")) or "ld-linux" in ob:
            part = "dispatch"
        else:
            part = "other"
        parts[part] += c
        by_fn[(part, rel, fn)] += c
    total = sum(parts.values())
    print("executed per call: %.1f instructions: %s" % (
        total / calls, ", ".join("%s %.1f" % (p, parts[p] / calls)
                                 for p in ("clocks", "dispatch", "record", "copy", "names", "other") if parts[p])))
    if len(sys.argv) > 4 and sys.argv[4] not in ("", "0"):
        for (p, rel, fn), c in sorted(by_fn.items(), key=lambda kv: -kv[1]):
            if c >= calls * 0.5:
                print("    %-9s %-40s %-24s %7.1f" % (p, rel, fn, c / calls))


if __name__ == "__main__":
    main()
