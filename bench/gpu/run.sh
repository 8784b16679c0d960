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
#   OUT=dir                where bench-raw.txt and bench.md go (default ./gpu-out)
#   BENCH_BASELINE=dir     an older build to compare with in the same run: dir/runtime/libcushim.so
#                          and dir/launch_bench.c (that build's benchmark source); adds the configs
#                          base-shim and base-shim+hooks, interleaved with the others
# Configurations: native; shim (LD_PRELOAD, no hook); shim+hooks (an empty pre and
# post hook on every driver API); cupti (native, with an empty CUPTI callback on the
# whole driver API domain); trace (the trace plugin recording every call with its arguments, writing
# to /dev/null; a tenth of the cuCtxGetCurrent calls, so that the exit flush stays short; only when
# BUILD_DIR/plugins/trace.so exists). Prints a markdown table: median and min-max per config.
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
elif ! gcc -std=gnu11 -O2 -Wall -Wextra -I"$CUDA/include" -I"$ROOT/sdk/include" \
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
BASE_SHIM="" BASE_BIN=$WORK/launch_bench_base
if [ -n "${BENCH_BASELINE:-}" ]; then
    BASE_SHIM=$BENCH_BASELINE/runtime/libcushim.so
    if [ ! -f "$BASE_SHIM" ] || ! gcc -std=gnu11 -O2 -Wall -I"$CUDA/include" -I"$BENCH_BASELINE/sdk/include" \
            -o "$BASE_BIN" "$BENCH_BASELINE/launch_bench.c" $LINKDIRS -lcuda -ldl >"$WORK/build-base.log" 2>&1; then
        echo "bench: baseline $BENCH_BASELINE unusable (see $WORK/build-base.log)" >&2
        exit 1
    fi
    CONFIGS+=(base-shim base-shim+hooks)
fi
run_one() {
    local cfg=$1 t="timeout -k 5 60"
    case $cfg in
    native) $t env BENCH_LABEL=native "$BIN" "$LAUNCHES" "$CALLS" ;;
    shim) $t env BENCH_LABEL=shim LD_PRELOAD="$SHIM" "$BIN" "$LAUNCHES" "$CALLS" ;;
    shim+hooks) $t env BENCH_LABEL=shim+hooks BENCH_HOOKS=1 LD_PRELOAD="$SHIM" "$BIN" "$LAUNCHES" "$CALLS" ;;
    cupti) $t env BENCH_LABEL=cupti BENCH_CUPTI=1 "$BIN" "$LAUNCHES" "$CALLS" ;;
    trace) $t env BENCH_LABEL=trace LD_PRELOAD="$SHIM" \
        CUSHIM_PLUGINS="$TRACE_SO:file=/dev/null,summary=0,buffer=4GiB" "$BIN" "$LAUNCHES" "$((CALLS / 10))" ;;
    base-shim) $t env BENCH_LABEL=base-shim LD_PRELOAD="$BASE_SHIM" "$BASE_BIN" "$LAUNCHES" "$CALLS" ;;
    base-shim+hooks) $t env BENCH_LABEL=base-shim+hooks BENCH_HOOKS=1 LD_PRELOAD="$BASE_SHIM" "$BASE_BIN" \
        "$LAUNCHES" "$CALLS" ;;
    esac
}
fails=0
for ((r = 0; r < ROUNDS; r++)); do
    for ((k = 0; k < ${#CONFIGS[@]}; k++)); do
        cfg=${CONFIGS[$(((k + r) % ${#CONFIGS[@]}))]}
        if ! run_one "$cfg" >>"$RAW" 2>>"$WORK/stderr.txt"; then
            echo "bench: round $r config $cfg failed (see $WORK/stderr.txt)" >&2
            echo "label=$cfg FAILED" >>"$RAW"
            fails=$((fails + 1))
        fi
    done
done

python3 - "$RAW" "$ROUNDS" "$LAUNCHES" "$CALLS" >"$OUT/bench.md" <<'EOF'
import re, statistics, sys
raw, rounds, launches, calls = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
order = ["native", "shim", "shim+hooks", "cupti", "trace", "base-shim", "base-shim+hooks"]
data = {c: {"launches_per_s": [], "issue_ns": [], "ctxgetcurrent_ns": []} for c in order}
failed = {c: 0 for c in order}
for line in open(raw):
    kv = dict(re.findall(r"(\w[\w+]*)=(\S+)", line))
    c = kv.get("label")
    if c not in data:
        continue
    if "FAILED" in line:
        failed[c] += 1
        continue
    for k in data[c]:
        if k in kv:
            data[c][k].append(float(kv[k]))

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

print("GPU launch benchmark: %s rounds x every configuration, each a fresh process; %s empty-kernel "
      "launches and %s cuCtxGetCurrent calls per process. Median (IQR, min-max)." % (rounds, launches, calls))
print()
print("| config | runs | launches/s | host issue ns/launch | cuCtxGetCurrent ns/call | vs native: issue ns, ctx ns |")
print("| --- | --- | --- | --- | --- | --- |")
base = data["native"]
for c in order:
    d = data[c]
    n = len(d["launches_per_s"])
    if n == 0 and (c.startswith("base-") or c == "trace"):
        continue
    delta = "n/a"
    if n and base["issue_ns"]:
        delta = "%+.1f, %+.2f" % (statistics.median(d["issue_ns"]) - statistics.median(base["issue_ns"]),
                                  statistics.median(d["ctxgetcurrent_ns"]) - statistics.median(base["ctxgetcurrent_ns"]))
    print("| %s | %d%s | %s | %s | %s | %s |" % (
        c, n, (" (+%d failed)" % failed[c]) if failed[c] else "", fmt(d["launches_per_s"], 0),
        fmt(d["issue_ns"], 1), fmt(d["ctxgetcurrent_ns"], 2), delta))
EOF
cat "$OUT/bench.md"
[ "$fails" -eq 0 ]
