#!/usr/bin/env bash
# bench/gpu/run.sh - launch-rate and cuCtxGetCurrent overhead of the shim, on a GPU.
#
# USAGE: bash bench/gpu/run.sh [BUILD_DIR]      (default build-gpu)
#   BENCH_ROUNDS=15        rounds; each round runs every configuration once, each a
#                          fresh process, in a rotated order
#   BENCH_LAUNCHES=200000  empty-kernel launches per process
#   BENCH_CALLS=10000000   cuCtxGetCurrent calls per process
#   BENCH_CUPTI_LIB=...    libcupti to dlopen for the 'cupti' configuration
#   BENCH_BIN=path         use this launch_bench instead of building one
#   BENCH_MAX_S=240        no new round starts when the last round's duration would take the benchmark
#                          past this many seconds (the rounds done are reported)
#   OUT=dir                where bench-raw.txt and bench.md go (default ./gpu-out)
#   BENCH_BASELINE=dir     an older build to compare with in the same run: dir/runtime/libcushim.so
#                          and dir/launch_bench.c (that build's benchmark source); adds the configs
#                          base-shim and base-shim+hooks, interleaved with the others
#   BENCH_CONFIGS="a b"    run only these configurations (e.g. "ab-hooks ab-cupti ab-trace" with BENCH_AB;
#                          BENCH_AB_CALLS, BENCH_AB_BURSTS pass through to launch_bench)
#   BENCH_TRACE_BASE=file  an older build's trace.so (run with this build's shim): adds the config
#                          trace-base, interleaved with the others, and its figures next to trace's
#   BENCH_TRACE_OPTS=o=v,.. more trace options in the trace, ab-trace and ab-vs configs (clock=host: the core's
#                          clocks instead of the TSC read in the hooks)
#   BENCH_AB=N             adds four configurations measured inside one process (launch_bench's BENCH_AB:
#                          N blocks, the addition on and off in ABBA order): ab-hooks (the trace plugin's
#                          hooks, empty - timed at entry, cuCtxGetCurrent's exit alone - added and
#                          removed), ab-cupti (the empty CUPTI callback's domain enabled and
#                          disabled), ab-trace (the trace plugin's recording toggled with SIGUSR2; its paused
#                          blocks still pay the hooks' dispatch, so trace's cost is ab-trace + ab-hooks;
#                          BENCH_AB_GAP_MS (150) of sleep before each of its blocks lets the writer finish
#                          rendering the previous block's records first), and ab-vs (compared in one
#                          process: the trace plugin - unhooked while paused -, the empty CUPTI callback and
#                          the floor of any recorder - two TSC reads and one 64-byte store around each call,
#                          no hook - take turns with blocks of none of them, in cycles none, trace, CUPTI,
#                          floor, floor, CUPTI, trace, none: the ratios trace / CUPTI and floor / CUPTI per
#                          process, paired, so that a process on a slower or faster core moves every side
#                          together; launch_bench's BENCH_AB_VS; BENCH_AB of 8 or more, a cycle each 8);
#                          their tables and issue 11's verdicts from them follow the others;
#                          BENCH_FLOOR_RING_MB=512 BENCH_FLOOR_READER=1 (bench/floor.h) make the floor a
#                          recorder whose records leave the caches and are read by a second thread;
#                          ab-vs also times each launch of as many bursts again and compares the median
#                          launch (a burst's mean carries the driver's occasional slow launch);
#                          BENCH_GATE=1 times each burst of launches while the GPU waits behind a gate
#                          kernel (launch_bench.c), so the GPU's progress does not land in the host's time
# Configurations: native; shim (LD_PRELOAD, no hook); shim+hooks (an empty pre and
# post hook on every driver API); cupti (native, with an empty CUPTI callback on the
# whole driver API domain); trace (the trace plugin recording every call with its arguments, writing
# to /dev/null; a tenth of the cuCtxGetCurrent calls, so that the exit flush stays short; only when
# BUILD_DIR/plugins/trace.so exists; its at-exit cost line gives bytes per recorded call and the writer's
# calls/s). Prints a markdown table: median and min-max per config, then trace's and cupti's added ns per
# call over native side by side, unpaired and paired per round, with issue 11's verdict (trace's extra at
# most half of cupti's, for cuCtxGetCurrent and for the empty cuLaunchKernel: its host issue time in bursts
# of 256 launches, and in the long loop where the stream's queue is full and launches wait for the GPU),
# reported, not asserted.
set -u
unset LD_PRELOAD CUSHIM_COUNTS CUDA_INJECTION64_PATH
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${1:-${BUILD_DIR:-build-gpu}}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
ROUNDS=${BENCH_ROUNDS:-15}
LAUNCHES=${BENCH_LAUNCHES:-200000}
CALLS=${BENCH_CALLS:-10000000}
CUDA=${CUDA_HOME:-/usr/local/cuda}
SHIM=$BUILD_DIR/runtime/libcushim.so
WORK=${BENCH_WORK:-${TMPDIR:-/tmp}/cushim-bench}
mkdir -p "$WORK"
BIN=$WORK/launch_bench

if [ ! -f "$SHIM" ]; then
    echo "bench: $SHIM not found" >&2
    exit 1
fi

# CUPTI: the library the 'cupti' configuration dlopens.
if [ -z "${BENCH_CUPTI_LIB:-}" ]; then
    for c in "$CUDA/extras/CUPTI/lib64/libcupti.so" "$CUDA/lib64/libcupti.so" \
             "$CUDA/targets/x86_64-linux/lib/libcupti.so" "$CUDA/lib/libcupti.so"; do
        if [ -e "$c" ]; then BENCH_CUPTI_LIB=$c; break; fi
    done
fi
export BENCH_CUPTI_LIB=${BENCH_CUPTI_LIB:-libcupti.so.13}

LINKDIRS="-L$CUDA/lib64 -L$CUDA/lib64/stubs"
if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$BENCH_BIN   # a prebuilt launch_bench (or a stand-in for dry runs)
elif ! gcc -std=gnu11 -O2 -Wall -Wextra -I"$CUDA/include" -I"$ROOT/sdk/include" -I"$ROOT/bench" \
        -o "$BIN" "$ROOT/bench/gpu/launch_bench.c" $LINKDIRS -lcuda -ldl >"$WORK/build.log" 2>&1; then
    echo "bench: build failed:" >&2
    cat "$WORK/build.log" >&2
    exit 1
fi

RAW=$OUT/bench-raw.txt
: >"$RAW"
CONFIGS=(native shim shim+hooks cupti)
TRACE_SO=$BUILD_DIR/plugins/trace.so
[ -f "$TRACE_SO" ] && CONFIGS+=(trace)
AB=${BENCH_AB:-}
unset BENCH_AB BENCH_AB_SIGNAL   # each configuration sets its own (launch_bench reads them)
if [ -n "$AB" ]; then
    CONFIGS+=(ab-hooks ab-cupti)
    [ -f "$TRACE_SO" ] && CONFIGS+=(ab-trace ab-vs)
fi
if [ -n "${BENCH_TRACE_BASE:-}" ]; then
    [ -f "$BENCH_TRACE_BASE" ] || { echo "bench: BENCH_TRACE_BASE=$BENCH_TRACE_BASE not found" >&2; exit 1; }
    CONFIGS+=(trace-base)
fi
BASE_SHIM="" BASE_BIN=$WORK/launch_bench_base
if [ -n "${BENCH_BASELINE:-}" ]; then
    BASE_SHIM=$BENCH_BASELINE/runtime/libcushim.so
    if [ ! -f "$BASE_SHIM" ] || ! gcc -std=gnu11 -O2 -Wall -I"$CUDA/include" -I"$BENCH_BASELINE/sdk/include" -I"$ROOT/bench" \
            -o "$BASE_BIN" "$BENCH_BASELINE/launch_bench.c" $LINKDIRS -lcuda -ldl >"$WORK/build-base.log" 2>&1; then
        echo "bench: baseline $BENCH_BASELINE unusable (see $WORK/build-base.log)" >&2
        exit 1
    fi
    CONFIGS+=(base-shim base-shim+hooks)
fi
if [ -n "${BENCH_CONFIGS:-}" ]; then   # a subset, e.g. the in-process ones alone
    keep=()
    for c in "${CONFIGS[@]}"; do
        case " $BENCH_CONFIGS " in *" $c "*) keep+=("$c") ;; esac
    done
    [ ${#keep[@]} -gt 0 ] || { echo "bench: BENCH_CONFIGS=$BENCH_CONFIGS names no configuration of this run" >&2; exit 1; }
    CONFIGS=("${keep[@]}")
fi
run_one() {
    local cfg=$1 t="timeout -k 5 60"
    case $cfg in
    native) $t env BENCH_LABEL=native "$BIN" "$LAUNCHES" "$CALLS" ;;
    shim) $t env BENCH_LABEL=shim LD_PRELOAD="$SHIM" "$BIN" "$LAUNCHES" "$CALLS" ;;
    shim+hooks) $t env BENCH_LABEL=shim+hooks BENCH_HOOKS=1 LD_PRELOAD="$SHIM" "$BIN" "$LAUNCHES" "$CALLS" ;;
    cupti) $t env BENCH_LABEL=cupti BENCH_CUPTI=1 "$BIN" "$LAUNCHES" "$CALLS" ;;
    trace) $t env BENCH_LABEL=trace LD_PRELOAD="$SHIM" CUSHIM_LOG=info \
        CUSHIM_PLUGINS="$TRACE_SO:file=/dev/null,summary_file=$WORK/trace-summary.txt,buffer=4GiB${BENCH_TRACE_OPTS:+,$BENCH_TRACE_OPTS}" "$BIN" \
        "$LAUNCHES" "$((CALLS / 10))" ;;
    trace-base) $t env BENCH_LABEL=trace-base LD_PRELOAD="$SHIM" CUSHIM_LOG=info \
        CUSHIM_PLUGINS="$BENCH_TRACE_BASE:file=/dev/null,summary_file=$WORK/trace-summary.txt,buffer=4GiB" "$BIN" \
        "$LAUNCHES" "$((CALLS / 10))" ;;
    ab-hooks) $t env BENCH_LABEL=ab-hooks BENCH_HOOKS=1 BENCH_HOOKS_TIME=2 BENCH_AB="$AB" LD_PRELOAD="$SHIM" \
        "$BIN" "$LAUNCHES" "$((CALLS / 10))" ;;
    ab-cupti) $t env BENCH_LABEL=ab-cupti BENCH_CUPTI=1 BENCH_AB="$AB" "$BIN" "$LAUNCHES" "$((CALLS / 10))" ;;
    ab-trace) $t env BENCH_LABEL=ab-trace BENCH_AB="$AB" BENCH_AB_SIGNAL=1 BENCH_AB_GAP_MS="${BENCH_AB_GAP_MS:-150}" \
        LD_PRELOAD="$SHIM" \
        CUSHIM_PLUGINS="$TRACE_SO:file=/dev/null,summary=0,buffer=4GiB,toggle=USR2${BENCH_TRACE_OPTS:+,$BENCH_TRACE_OPTS}" "$BIN" \
        "$LAUNCHES" "$((CALLS / 10))" ;;
    ab-vs) $t env BENCH_LABEL=ab-vs BENCH_CUPTI=1 BENCH_AB="$AB" BENCH_AB_VS=1 BENCH_AB_GAP_MS="${BENCH_AB_GAP_MS:-150}" \
        LD_PRELOAD="$SHIM" \
        CUSHIM_PLUGINS="$TRACE_SO:file=/dev/null,summary=0,buffer=4GiB,toggle=USR2,unhook=1,paused=1${BENCH_TRACE_OPTS:+,$BENCH_TRACE_OPTS}" "$BIN" \
        "$LAUNCHES" "$((CALLS / 10))" ;;
    base-shim) $t env BENCH_LABEL=base-shim LD_PRELOAD="$BASE_SHIM" "$BASE_BIN" "$LAUNCHES" "$CALLS" ;;
    base-shim+hooks) $t env BENCH_LABEL=base-shim+hooks BENCH_HOOKS=1 LD_PRELOAD="$BASE_SHIM" "$BASE_BIN" \
        "$LAUNCHES" "$CALLS" ;;
    esac
}
fails=0 took=0 done_rounds=0 start=$(date +%s)
MAX_S=${BENCH_MAX_S:-240}
for ((r = 0; r < ROUNDS; r++)); do
    if [ "$r" -gt 0 ] && [ $(($(date +%s) - start + took)) -gt "$MAX_S" ]; then
        echo "bench: stopped after $r of $ROUNDS rounds (BENCH_MAX_S=$MAX_S)" >&2
        break
    fi
    t0=$(date +%s)
    for ((k = 0; k < ${#CONFIGS[@]}; k++)); do
        cfg=${CONFIGS[$(((k + r) % ${#CONFIGS[@]}))]}
        rm -f "$WORK/trace-summary.txt"
        if line=$(run_one "$cfg" 2>>"$WORK/stderr.txt") && [ -n "$line" ]; then
            # the trace plugin's cost line (plugins/trace/tr_writer.c): bytes per recorded call, writer rate
            case $cfg in trace|trace-base) line="$line $(sed -n 's/^cushim trace: \([0-9.]*\) record bytes and \([0-9.]*\) file bytes per call; writer \([0-9.]*\) M calls.*/rec_bytes=\1 file_bytes=\2 writer_mcalls_s=\3/p' \
                "$WORK/trace-summary.txt" 2>/dev/null | tail -n 1)" ;; esac
            echo "$line round=$r" >>"$RAW"
        else
            echo "bench: round $r config $cfg failed (see $WORK/stderr.txt)" >&2
            echo "label=$cfg FAILED round=$r" >>"$RAW"
            fails=$((fails + 1))
        fi
    done
    took=$(($(date +%s) - t0))
    done_rounds=$((r + 1))
done
echo "bench: $done_rounds rounds in $(($(date +%s) - start)) s (last round ${took} s)" >&2

rm -f "$WORK/verdict.txt"
python3 - "$RAW" "$done_rounds" "$LAUNCHES" "$CALLS" "$(($(date +%s) - start))" "$WORK/verdict.txt" >"$OUT/bench.md" <<'EOF'
import re, statistics, sys
raw, rounds, launches, calls, secs, verdict_file = sys.argv[1:7]
verdicts = []
order = ["native", "shim", "shim+hooks", "cupti", "trace", "trace-base", "base-shim", "base-shim+hooks"]
data = {c: {"launches_per_s": [], "issue_ns": [], "burst_ns": [], "ctxgetcurrent_ns": []} for c in order}
failed = {c: 0 for c in order}
by_round = {}   # round -> config -> {issue_ns, ctxgetcurrent_ns}
extra = {}      # config -> key -> [values] (the trace plugin's cost figures)
ab = {}         # ab-* config -> ab_ctx_ns / ab_burst_ns -> [per process: median of its on-off pairs]
ab_failed = {}
vs = {}         # ab-vs: ab_vs_* -> [per process]
vs_failed = 0
vs_gated = []   # ab-vs: per process, whether its bursts waited behind a gate (BENCH_GATE=1)
for line in open(raw):
    kv = dict(re.findall(r"(\w[\w+]*)=(\S+)", line))
    c = kv.get("label")
    if c == "ab-vs":
        if "FAILED" in line:
            vs_failed += 1
        vs_gated.append(kv.get("gate") == "1")
        for k, x in kv.items():
            if k.startswith("ab_vs_") and k != "ab_vs_cycles":
                vs.setdefault(k, []).append(float(x))
        continue
    if c in ("ab-hooks", "ab-cupti", "ab-trace"):
        if "FAILED" in line:
            ab_failed[c] = ab_failed.get(c, 0) + 1
        elif "ab_ctx_ns" in kv:
            for k in ("ab_ctx_ns", "ab_burst_ns"):
                ab.setdefault(c, {}).setdefault(k, []).append(float(kv[k]))
        continue
    if c not in data:
        continue
    if "FAILED" in line:
        failed[c] += 1
        continue
    for k in data[c]:
        if k in kv:
            data[c][k].append(float(kv[k]))
    if "round" in kv:
        by_round.setdefault(kv["round"], {})[c] = {k: float(kv[k]) for k in ("issue_ns", "burst_ns", "ctxgetcurrent_ns")
                                                   if k in kv}
    for k in ("rec_bytes", "file_bytes", "writer_mcalls_s"):
        if k in kv:
            extra.setdefault(c, {}).setdefault(k, []).append(float(kv[k]))

def q(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    i = (len(v) - 1) * p
    lo, hi = int(i), min(int(i) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)

def fmt(v, digits):
    if not v:
        return "n/a"
    return "%.*f (IQR %.*f-%.*f, min-max %.*f-%.*f)" % (
        digits, statistics.median(v), digits, q(v, .25), digits, q(v, .75), digits, min(v), digits, max(v))

print("GPU launch benchmark: %s rounds x every configuration, each a fresh process, in %s s; %s empty-kernel "
      "launches and %s cuCtxGetCurrent calls per process (trace: a tenth of the calls). Median (IQR, min-max)."
      % (rounds, secs, launches, calls))
print()
print("| config | runs | launches/s | host issue ns/launch (queue full) | host issue ns/launch (bursts of 256) | "
      "cuCtxGetCurrent ns/call | vs native: issue ns, burst ns, ctx ns |")
print("| --- | --- | --- | --- | --- | --- | --- |")
base = data["native"]
for c in order:
    d = data[c]
    n = len(d["launches_per_s"])
    if n == 0 and (c.startswith("base-") or c.startswith("trace") or not failed[c]):
        continue   # not in this run (BENCH_CONFIGS, no trace.so, no baseline)
    delta = "n/a"
    if n and base["issue_ns"]:
        bd = "%+.1f" % (statistics.median(d["burst_ns"]) - statistics.median(base["burst_ns"])) \
            if d["burst_ns"] and base["burst_ns"] else "n/a"
        delta = "%+.1f, %s, %+.2f" % (statistics.median(d["issue_ns"]) - statistics.median(base["issue_ns"]), bd,
                                      statistics.median(d["ctxgetcurrent_ns"]) - statistics.median(base["ctxgetcurrent_ns"]))
    print("| %s | %d%s | %s | %s | %s | %s | %s |" % (
        c, n, (" (+%d failed)" % failed[c]) if failed[c] else "", fmt(d["launches_per_s"], 0),
        fmt(d["issue_ns"], 1), fmt(d["burst_ns"], 1), fmt(d["ctxgetcurrent_ns"], 2), delta))

# issue 11: recording every driver call with its arguments (trace) against an empty CUPTI callback on the whole
# driver domain (cupti), each as ns added per call over native; target: trace's extra at most half of cupti's
if data["trace"]["issue_ns"] and data["cupti"]["issue_ns"] and base["issue_ns"]:
    print()
    print("Trace plugin vs CUPTI callbacks (issue 11: trace's added ns per call at most half of cupti's; "
          "reported, not asserted):")
    print()
    print("| call | trace: added ns (median over native's median) | cupti: added ns | trace / cupti | "
          "paired per round: trace / cupti, median (min-max) | verdict |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key, name in (("ctxgetcurrent_ns", "cuCtxGetCurrent"),
                      ("burst_ns", "cuLaunchKernel (empty kernel, host issue in bursts of 256)"),
                      ("issue_ns", "cuLaunchKernel-queue-full (empty kernel, host issue, the stream's queue full)")):
        if not (data["trace"][key] and data["cupti"][key] and base[key]):
            continue
        nb = statistics.median(base[key])
        t = statistics.median(data["trace"][key]) - nb
        c = statistics.median(data["cupti"][key]) - nb
        ratios = []
        for r in by_round.values():
            if all(x in r and key in r[x] for x in ("native", "trace", "cupti")):
                dc = r["cupti"][key] - r["native"][key]
                if dc > 0:
                    ratios.append((r["trace"][key] - r["native"][key]) / dc)
        pr = "%.2f (%.2f-%.2f), %d rounds" % (statistics.median(ratios), min(ratios), max(ratios), len(ratios)) \
            if ratios else "n/a"
        ratio = t / c if c > 0 else float("nan")
        verdict = ("target met" if t <= c / 2 else "target missed") if c > 0 else "n/a (cupti added nothing)"
        print("| %s | %+.2f | %+.2f | %.2f | %s | %s |" % (name, t, c, ratio, pr, verdict))
        verdicts.append("%s trace %+.1f vs cupti %+.1f ns (%s)" % (name.split()[0], t, c, verdict))
    if data["trace-base"]["issue_ns"]:
        print()
        print("The older trace.so (BENCH_TRACE_BASE, config trace-base) in the same rounds: added ns per call over "
              "native, and trace's minus trace-base's paired per round (median, min-max):")
        print()
        for key, name in (("ctxgetcurrent_ns", "cuCtxGetCurrent"), ("burst_ns", "cuLaunchKernel (bursts)"),
                          ("issue_ns", "cuLaunchKernel (queue full)")):
            if not (data["trace"][key] and data["trace-base"][key] and base[key]):
                continue
            nb = statistics.median(base[key])
            diffs = [r["trace"][key] - r["trace-base"][key] for r in by_round.values()
                     if all(x in r and key in r[x] for x in ("trace", "trace-base"))]
            print("- %s: trace %+.2f, trace-base %+.2f ns; trace - trace-base per round %s" % (
                name, statistics.median(data["trace"][key]) - nb, statistics.median(data["trace-base"][key]) - nb,
                "%+.2f (%+.2f..%+.2f), %d rounds" % (statistics.median(diffs), min(diffs), max(diffs), len(diffs))
                if diffs else "n/a"))
    for c in ("trace", "trace-base"):
        e = extra.get(c, {})
        if not e:
            continue
        print()
        print("%s's own figures (its at-exit cost line, median over the runs): %.1f record bytes and "
              "%.1f file bytes per recorded call; writer %.2f M calls/s of busy time." % (
                  c, statistics.median(e.get("rec_bytes", [0])), statistics.median(e.get("file_bytes", [0])),
                  statistics.median(e.get("writer_mcalls_s", [0]))))
    e = extra.get("trace", {})
    if e:
        verdicts.append("%.0f record B/call, writer %.2f M calls/s" % (
            statistics.median(e.get("rec_bytes", [0])), statistics.median(e.get("writer_mcalls_s", [0]))))
if ab:
    print()
    print("Inside one process (BENCH_AB: blocks with the addition on and off in ABBA order; per process the median "
          "of its on-minus-off pairs; here the median over processes, min-max):")
    print()
    print("| addition | processes | cuCtxGetCurrent: on - off ns | cuLaunchKernel (bursts of 256): on - off ns |")
    print("| --- | --- | --- | --- |")
    for c, what in (("ab-hooks", "the trace plugin's hooks, empty (timed at entry; cuCtxGetCurrent's exit alone)"),
                    ("ab-cupti", "an empty CUPTI callback on the driver domain"),
                    ("ab-trace", "the trace plugin recording (vs paused: the hooks stay)")):
        v = ab.get(c, {})
        n = len(v.get("ab_ctx_ns", []))
        def mm(k):
            x = v.get(k, [])
            return "%+.2f (%+.2f..%+.2f)" % (statistics.median(x), min(x), max(x)) if x else "n/a"
        print("| %s: %s | %d%s | %s | %s |" % (c, what, n, (" (+%d failed)" % ab_failed[c]) if ab_failed.get(c) else "",
                                          mm("ab_ctx_ns"), mm("ab_burst_ns")))
    if all(ab.get(c, {}).get("ab_ctx_ns") for c in ("ab-hooks", "ab-cupti", "ab-trace")):
        for key, name in (("ab_ctx_ns", "cuCtxGetCurrent"), ("ab_burst_ns", "cuLaunchKernel")):
            t = statistics.median(ab["ab-trace"][key]) + statistics.median(ab["ab-hooks"][key])
            cu = statistics.median(ab["ab-cupti"][key])
            verdict = ("target met" if t <= cu / 2 else "target missed") if cu > 0 else "n/a (cupti added nothing)"
            print()
            print("%s, in one process: trace (recording + timed hooks) %+.2f ns vs cupti %+.2f ns: %.2f - %s" % (
                name, t, cu, t / cu if cu > 0 else float("nan"), verdict))
            verdicts.append("in-process %s trace %+.1f vs cupti %+.1f ns (%s)" % (name, t, cu, verdict))
if vs.get("ab_vs_ratio_ctx"):
    print()
    print("Paired in one process (ab-vs: the trace plugin - unhooked while paused -, the empty CUPTI callback and "
          "the floor of any recorder - two TSC reads and one 64-byte store around each call, no hook - take turns "
          "with blocks of none of them, in cycles none, trace, CUPTI, floor, floor, CUPTI, trace, none; per "
          "process the median over its cycles; here the median over processes, min-max):")
    print()
    print("| per call | processes | trace: added ns | CUPTI: added ns | floor: added ns | trace / CUPTI | floor / CUPTI |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    gate = " behind a gate" if vs_gated and all(vs_gated) else " (some behind a gate)" if any(vs_gated) else ""
    rows = [("cuCtxGetCurrent", "ctx"), ("cuLaunchKernel (bursts of 256%s)" % gate, "burst")]
    if vs.get("ab_vs_ratio_lmed"):
        rows.append(("cuLaunchKernel (the median launch%s)" % gate, "lmed"))
    for name, k in rows:
        def mm(key, fmt):
            # a ratio is nan where CUPTI added nothing measurable in that process: left out (no ratio)
            x = [y for y in vs.get(key, []) if y == y]
            return (fmt + " (" + fmt + ".." + fmt + ")") % (statistics.median(x), min(x), max(x)) if x else "n/a"
        print("| %s | %d%s | %s | %s | %s | %s | %s |" % (name, len(vs.get("ab_vs_ratio_" + k, [])),
              (" (+%d failed)" % vs_failed) if vs_failed else "", mm("ab_vs_trace_%s_ns" % k, "%+.2f"),
              mm("ab_vs_cupti_%s_ns" % k, "%+.2f"), mm("ab_vs_floor_%s_ns" % k, "%+.2f"),
              mm("ab_vs_ratio_" + k, "%.3f"), mm("ab_vs_floor_ratio_" + k, "%.3f")))
    for name, k in (("cuCtxGetCurrent", "ctx"), ("cuLaunchKernel" + gate, "burst"),
                    ("cuLaunchKernel, the median launch" + gate, "lmed")):
        r = [x for x in vs.get("ab_vs_ratio_" + k, []) if x == x]
        if r:
            m = statistics.median(r)
            verdict = "target met" if m <= 0.5 else "target missed"
            print()
            fl = [x for x in vs.get("ab_vs_floor_ratio_" + k, []) if x == x]
            print("%s, paired in one process: trace / CUPTI median %.3f over %d processes (%.3f..%.3f) - %s%s" % (
                name, m, len(r), min(r), max(r), verdict,
                "; the floor of any recorder / CUPTI %.3f" % statistics.median(fl) if fl else ""))
            verdicts.append("paired %s trace/cupti %.2f (%s)%s" % (name, m, verdict,
                            ", floor/cupti %.2f" % statistics.median(fl) if fl else ""))
if not verdicts:
    verdicts.append("no trace-vs-cupti figure (trace or cupti missing or failed: %d trace, %d cupti runs)" % (
        len(data["trace"]["issue_ns"]), len(data["cupti"]["issue_ns"])))
with open(verdict_file, "w") as f:
    f.write("; ".join(verdicts) + "\n")
EOF
cat "$OUT/bench.md"
[ "$fails" -eq 0 ]
