#!/usr/bin/env bash
# bench/cpu/footprint.sh - how much memory one interposed call touches: distinct 64-byte lines and 4 KiB pages
# of code and of data between the marks of bench/cpu/footprint.c, under valgrind's lackey (every instruction
# fetch and data access). A call made between stretches of the application's own work (PyTorch's Python
# between its CUDA calls) finds few of these lines in the near caches: each line is a possible miss, each page
# a possible TLB miss, whatever the instruction count. Deterministic: no timing.
#
# USAGE: bash bench/cpu/footprint.sh [BUILD_DIR [CONFIG...]]
#   CONFIG: direct (no shim), shim (no plugin), trace (the trace
#   plugin recording every call), paused (the trace plugin hooked but paused: the core's dispatch and entry clock,
#   the plugin's hooks returning at once), trace=PATH (another trace.so); default: shim trace
#   APIS="cuCtxGetCurrent cuCtxSynchronize"   MARKED=9 (marked calls per run; the median is reported)
#   BASE_DIR=DIR: another build (DIR/runtime/libcushim.so, DIR/plugins/trace.so): each configuration but direct
#   is measured with it too, as CONFIG@base
#   FP_DRIVER=PATH: the fake driver to call (a Release build has none: build/tests/fake/libcuda.so.1)
#   FP_DETAIL=1: the lines per object (code and data) of the median call, and the code lines' functions
#   (addr2line) of the last configuration; FP_DETAIL=2: also each code line's offset in its object and the
#   function at its start (how the path is laid out)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
shift || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(shim trace)
FP=$BUILD/bench/cpu/cushim_footprint
SHIM=$BUILD/runtime/libcushim.so
DRV=${FP_DRIVER:-$BUILD/tests/fake/libcuda.so.1}
[ -e "$DRV" ] || DRV=$BUILD/bench/cpu/standin/libcuda.so.1
for f in "$FP" "$SHIM" "$DRV"; do [ -e "$f" ] || { echo "footprint.sh: missing $f" >&2; exit 1; }; done
command -v valgrind >/dev/null || { echo "footprint.sh: needs valgrind" >&2; exit 1; }
if [ -n "${BASE_DIR:-}" ]; then
  BASE_DIR=$(cd "$BASE_DIR" && pwd)
  for c in "${configs[@]}"; do [ "$c" = direct ] || configs+=("$c@base"); done
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CUSHIM_LOG=error
for api in ${APIS:-cuCtxGetCurrent cuCtxSynchronize}; do
  for name in "${configs[@]}"; do
    e=(env) cfg=$name SHIM_=$SHIM TRACE_=$BUILD/plugins/trace.so
    case $cfg in *@base) cfg=${cfg%@base} SHIM_=$BASE_DIR/runtime/libcushim.so TRACE_=$BASE_DIR/plugins/trace.so ;; esac
    case $cfg in
      direct) ;;
      shim) e+=(LD_PRELOAD="$SHIM_") ;;
      trace) e+=(LD_PRELOAD="$SHIM_" CUSHIM_PLUGINS="$TRACE_:file=$TMP/t.json,summary=0") ;;
      paused) e+=(LD_PRELOAD="$SHIM_" CUSHIM_PLUGINS="$TRACE_:file=$TMP/t.json,summary=0,paused=1") ;;
      trace=*) e+=(LD_PRELOAD="$SHIM_" CUSHIM_PLUGINS="${cfg#trace=}:file=$TMP/t.json,summary=0") ;;
      *) echo "footprint.sh: unknown configuration $cfg" >&2; exit 2 ;;
    esac
    "${e[@]}" valgrind --tool=lackey --trace-mem=yes --log-file="$TMP/lk" "$FP" "$DRV" "$api" "${MARKED:-9}" \
      2>"$TMP/err" >/dev/null || { echo "footprint.sh: $name $api failed:" >&2; tail -5 "$TMP/err" >&2; exit 1; }
    python3 - "$TMP/lk" "$TMP/err" "$api" "$name" "${FP_DETAIL:-0}" <<'PY'
import collections, statistics, subprocess, sys
lk, err, api, cfg, detail = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5] or 0)
segs, marks, stack, tcb, heap = [], None, 0, 0, 0
for line in open(err):
    w = line.split()
    if w and w[0] == "fp_marks":
        marks = (int(w[1], 16), int(w[2], 16))
    elif w and w[0] == "fp_stack":
        stack = int(w[1], 16)
    elif w and w[0] == "fp_tcb":
        tcb = int(w[1], 16)
    elif w and w[0] == "fp_heap":
        heap = int(w[1], 16)
    elif w and w[0] == "fp_seg":
        segs.append((int(w[1], 16), int(w[2], 16), w[3], w[4]))
if marks is None:
    sys.exit("footprint.sh: no marks in the program's output")
def where(a):
    for lo, hi, kind, name in segs:
        if lo <= a < hi:
            return name.rsplit("/", 1)[-1]
    if stack - (1 << 20) <= a < stack + 4096:
        return "stack"
    if tcb - 16384 <= a < tcb + 4096:
        return "tls"    # the static TLS blocks below the thread's descriptor, and the descriptor
    if abs(a - heap) < (64 << 20):
        return "heap"   # the main arena
    return "anon"   # other mappings: malloc's mmap'd blocks, other threads' stacks, the trace's chunks
calls, cur = [], None
for line in open(lk):
    if line.startswith("I"):
        a = int(line[3:].split(",")[0], 16)
        if a == marks[0]:
            cur = {"i": set(), "d": set(), "s": set(), "n": 0}
            continue
        if a == marks[1] and cur is not None:
            calls.append(cur)
            cur = None
            continue
        if cur is not None:
            cur["i"].add(a >> 6)
            cur["n"] += 1
    elif cur is not None and line[:1] == " " and line[1] in "LSM":
        a = int(line[3:].split(",")[0], 16)
        if not (stack - (1 << 20) <= a < stack + 4096):
            cur["d"].add(a >> 6)
        cur["s"].add(a >> 6)
if not calls:
    sys.exit("footprint.sh: no marked call seen")
def pages(s):
    return len({x >> 6 for x in s})
rows = sorted(calls, key=lambda c: len(c["i"]) + len(c["d"]))
m = rows[len(rows) // 2]
print("%-16s %-10s instr %5d  code lines %3d pages %2d  data lines %3d pages %2d (+%d on the stack)  (median of %d calls; lines %d-%d)" % (
    api, cfg, m["n"], len(m["i"]), pages(m["i"]), len(m["d"]), pages(m["d"]), len(m["s"]) - len(m["d"]), len(calls),
    len(rows[0]["i"]) + len(rows[0]["d"]), len(rows[-1]["i"]) + len(rows[-1]["d"])))
if detail:
    for kind in ("i", "s"):
        per = collections.Counter(where(l << 6) for l in m[kind])
        pg = collections.Counter(where(p << 12) for p in {l >> 6 for l in m[kind]})
        print("    %s lines: %s" % ("code" if kind == "i" else "data",
                                    ", ".join("%s %d" % (k, v) for k, v in per.most_common())))
        print("    %s pages: %s" % ("code" if kind == "i" else "data",
                                    ", ".join("%s %d" % (k, v) for k, v in pg.most_common())))
    def by_object(lines):   # line addresses per loaded object (the program itself left out)
        out = collections.defaultdict(list)
        for l in sorted(lines):
            a = l << 6
            for lo, hi, kind, name in segs:
                if lo <= a < hi and name != "main":
                    out[name].append(a)
        return out
    # the code lines' functions (addr2line on the file offset of each line), the data lines' symbols (nm: the
    # symbols that overlap each line), per object
    byobj, dbyobj = by_object(m["i"]), by_object(m["d"])
    for name, addrs in dbyobj.items():
        base = min(lo for lo, hi, k, n in segs if n == name)
        syms = []
        try:
            for ln in subprocess.run(["nm", "-S", "--defined-only", name], capture_output=True, text=True).stdout.split("\n"):
                w = ln.split()
                if len(w) == 4:
                    syms.append((int(w[0], 16), int(w[1], 16), w[3]))
        except OSError:
            continue
        found = []
        for a in addrs:
            off = a - base
            hit = [n for v, sz, n in syms if v < off + 64 and off < v + sz]
            found.append("+".join(hit[:3]) if hit else "?%x" % off)
        print("    %s data: %s" % (name.rsplit("/", 1)[-1], ", ".join(found)))
    for name, addrs in byobj.items():
        base = min(lo for lo, hi, k, n in segs if n == name)
        try:
            out = subprocess.run(["addr2line", "-f", "-e", name] + ["%x" % (a - base) for a in addrs],
                                 capture_output=True, text=True).stdout.split("\n")[0::2]
        except OSError:
            continue
        fns = collections.Counter(f for f in out if f)
        print("    %s: %s" % (name.rsplit("/", 1)[-1], ", ".join("%s %d" % (k, v) for k, v in fns.most_common())))
        if detail > 1:   # FP_DETAIL=2: each code line, its offset in the object and the function at its start
            print("      " + " ".join("%x:%s" % (a - base, f) for a, f in sorted(zip(addrs, out))))
PY
  done
done
