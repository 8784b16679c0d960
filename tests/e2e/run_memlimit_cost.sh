#!/bin/sh
# run_memlimit_cost.sh CASE BENCH PLUGIN: what memlimit's quota adds to a cuMemAlloc_v2+cuMemFree_v2 pair, on
# the fake driver, with bench/gpu/memlimit_bench.c (built against the fake: gpubench_memlimit_fake). ctest sets
# LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes).
#   drivercalls  the driver calls per pair (the fake's FAKE_CUDA_COUNTS at two pair counts: start-up cancels),
#                without the plugin and with a quota: one device visible, the quota adds none (the allocation's
#                device is 0 without asking); two, one cuCtxGetDevice per allocation and none per free. Any other
#                call per pair (cuMemGetInfo, cuPointerGetAttribute, cuDeviceTotalMem, cuCtxGetCurrent...) fails.
#   inproc       the in-process comparison the GPU check runs (MEMLIMIT_BENCH_INPROC): its line is printed and
#                parses, the shim's wrappers and the driver's functions are told apart (same_pointer 0), and
#                without the shim they are the same (1). Its figures mean nothing on the fake.
set -u
case=$1 bench=$2 plugin=$3
# the shim (and, in the sanitizer stage, its runtime) only for the bench: the tools run plain (LeakSanitizer
# preloaded into tr or awk changes their exit status)
preload=${LD_PRELOAD:-}
unset LD_PRELOAD
out=${E2E_OUT:-${TMPDIR:-/tmp}}/memlimit-cost.$case.$$
trap 'rm -f "$out".*' EXIT
fail() { echo "FAIL: $*" >&2; for f in "$out".err; do [ -f "$f" ] && sed "s|^|  $f: |" "$f" >&2; done; exit 1; }
export CUSHIM_LOG=warn
# calls DEVICES SPEC: "name per-pair;" for every driver function whose count grows with the pairs (the bench's
# 200 or 400 timed pairs after the same warm-up: the difference over 200)
calls() {
    for n in 200 400; do
        rm -f "$out.c$n"
        FAKE_CUDA_DEVICES=$1 FAKE_CUDA_COUNTS="$out.c$n" CUSHIM_PLUGINS="$2" LD_PRELOAD=$preload "$bench" $n \
            >/dev/null 2>"$out.err" || fail "devices $1, plugins '$2': exit $?"
        [ -s "$out.c$n" ] || fail "the fake wrote no counts"
    done
    # the fake's counts file: "name<TAB>count" per function called
    awk 'NR == FNR { a[$1] = $2; next } { d = $2 - a[$1]; if (d != 0) printf "%s %s\n", $1, d / 200 }' \
        "$out.c200" "$out.c400" | sort | tr '\n' ';'
}
case $case in
  drivercalls)
    want_plain="cuMemAlloc_v2 1;cuMemFree_v2 1;"
    for d in 1 2; do
        got=$(calls $d "") || exit 1
        echo "devices $d, no plugin: $got"
        [ "$got" = "$want_plain" ] || fail "devices $d, no plugin: '$got', want '$want_plain'"
        got=$(calls $d "$plugin:limit=64GiB") || exit 1
        echo "devices $d, quota: $got"
        if [ $d = 1 ]; then want=$want_plain; else want="cuCtxGetDevice 1;$want_plain"; fi
        [ "$got" = "$want" ] || fail "devices $d, quota: '$got', want '$want' (a driver call the quota added per pair)"
    done
    echo "PASS" ;;
  inproc)
    MEMLIMIT_BENCH_INPROC=6 CUSHIM_PLUGINS="$plugin:limit=64GiB" LD_PRELOAD=$preload "$bench" 600 >"$out.q" \
        2>"$out.err" || fail "with the quota: exit $?"
    cat "$out.q"
    grep -Eq '^inproc hooked_med -?[0-9.]+ driver_med -?[0-9.]+ diff_med -?[0-9.]+ diff_q1 -?[0-9.]+ diff_q3 -?[0-9.]+ diff_min -?[0-9.]+ diff_max -?[0-9.]+ blocks 6 same_pointer 0$' "$out.q" ||
        fail "no in-process line, or the shim's wrappers were not told from the driver's functions"
    MEMLIMIT_BENCH_INPROC=6 "$bench" 600 >"$out.n" 2>"$out.err" || fail "without the shim: exit $?"
    cat "$out.n"
    grep -q 'same_pointer 1$' "$out.n" || fail "without the shim the lookup found another function than the program's"
    echo "PASS" ;;
  *) fail "unknown case $case" ;;
esac
