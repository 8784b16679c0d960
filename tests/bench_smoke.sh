#!/bin/sh
# bench_smoke.sh SOURCE_DIR BUILD_DIR - runs bench/cpu/cold.sh with a few calls per configuration, hot and cold
# (data, code and branches between calls), and checks that every configuration printed a positive figure: the
# benchmark's plumbing works (the shim preloaded, the hooks registered, the trace plugin recording, the floor's
# own recorder), and bench/cpu/lines.sh counts the call path's code. The figures themselves are not judged:
# timing is never a test assertion here.
set -u
src=$1 build=$2
configs="direct floor floor-ring floor-reader shim hook hooktime posttime paused trace trace-exit"
out=$(BENCH_WARMUP_MS=1 ROUNDS=1 ITERS=200 RUNS=1 COLD="0 1" BENCH_COLD_CODE=4 BENCH_COLD_BRANCHES=20 FLOOR_RING_MB=4 \
      CONFIGS="$configs" bash "$src/bench/cpu/cold.sh" "$build" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "bench_smoke: cold.sh failed ($rc)"; exit 1; }
for cold in 0 1; do
    for c in $configs; do
        # the line of configuration $c in the table of COLD=$cold: its median must be a number above 0
        v=$(printf '%s\n' "$out" | awk -v c="$c" -v k="cold $cold KiB" '
            index($0, k) == 1 { t = 1; next } /^cold / { t = 0 } t && $1 == c { print $2; exit }')
        if ! printf '%s\n' "$v" | awk '/^[0-9]+(\.[0-9]+)?$/ && $1 + 0 > 0 { ok = 1 } END { exit !ok }'; then
            echo "bench_smoke: no figure for '$c' at COLD=$cold (got '$v')"
            exit 1
        fi
    done
done
echo "bench_smoke: every configuration of cold.sh measured"
# the floor's ring must be a power of two: refused with a message, not a ring with holes
drv=$build/tests/fake/libcuda.so.1
if [ -e "$drv" ]; then
    msg=$(BENCH_WARMUP_MS=1 BENCH_FLOOR_RING_MB=3 "$build/bench/cpu/cushim_bench_cpu" "$drv" 10 1 floor 2>&1) &&
        { echo "bench_smoke: BENCH_FLOOR_RING_MB=3 was accepted"; exit 1; }
    printf '%s\n' "$msg" | grep -q "not a power of two" || { echo "bench_smoke: BENCH_FLOOR_RING_MB=3: '$msg'"; exit 1; }
fi
# bench/cpu/lines.sh (valgrind): the code a recorded call runs, counted; it must find the shim's and the
# plugin's functions on the call path
if command -v valgrind >/dev/null; then
    out=$(CALLS=2000 bash "$src/bench/cpu/lines.sh" "$build" trace 2>&1)
    printf '%s\n' "$out"
    for fn in rt_enter rt_post tr_post_query; do
        if ! printf '%s\n' "$out" | grep -q "^    $fn .*lines *[1-9]"; then
            echo "bench_smoke: lines.sh did not count $fn"
            exit 1
        fi
    done
    echo "bench_smoke: lines.sh counted the call path"
else
    echo "bench_smoke: no valgrind here, lines.sh not run"
fi
