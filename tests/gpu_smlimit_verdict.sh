#!/bin/sh
# gpu_smlimit_verdict.sh SOURCE_DIR - the GPU check smlimit's verdicts (tests/gpu/checks/smlimit.sh,
# sml_share_result) on recorded rates and SM clocks, without a GPU: a throttled power-bound load whose clock rose
# is judged by its share of GPU time (the rate share scaled by native's clock over its own) and passes; the
# same rates without a clock rise, or a limiter that did not throttle, fail; throughput-share rows (NNc) are
# judged by the rate alone. Clocks: tests/gpu/fixtures/smlimit/clocks.txt (GPU runs 70 and 3, docs/data).
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# verdict KIND LIMIT NATIVE_RATE LIMITED_RATE CLOCKS_FILE: the result line sml_share_result prints
verdict() {
    mkdir -p "$tmp/d"
    rm -f "$tmp/d"/*
    printf '%s\n' "$3" >"$tmp/d/$1.native"
    printf '%s\n' "$4" >"$tmp/d/$1.$2"
    cp "$5" "$tmp/d/clocks.txt"
    bash -c '
        eval "$(sed -n "/^median() {/,/^}/p" "$2/tests/gpu/run.sh")"   # the suite'"'"'s own median
        result() { printf "%s|%s|%s\n" "$1" "$2" "$3"; }
        gpu_check() { :; }
        LOGS=$1
        . "$2/tests/gpu/checks/smlimit.sh"
        SML_D=$1/d
        sml_share_result "$3" "$4"' sh "$tmp" "$src" "$1" "$2"
}
expect() {   # expect STATUS SUBSTRING LINE
    case $3 in *"|$1|"*"$2"*) ;; *) fail "expected $1 with '$2', got: $3" ;; esac
}
clk=$src/tests/gpu/fixtures/smlimit/clocks.txt
# run 70's medians: the matmul loop at 25/50/75 against native 665.47 TFLOP/s, clocks 1965/1815/1627 vs 1470 MHz
expect PASS "time share 22.6% (the rate 30.2% of native at 1965 MHz against 1470" "$(verdict matmul 25 665.47 200.78 "$clk")"
expect PASS "time share 47.8%" "$(verdict matmul 50 665.47 392.76 "$clk")"
expect PASS "time share 75.8%" "$(verdict matmul 75 665.47 558.64 "$clk")"
expect PASS "time share 47.0%" "$(verdict train 50 211.82 117.73 "$clk")"
# run 3's graph replay: 58.4% of the rate at 1800 MHz against 1455
expect PASS "time share 47.2%" "$(verdict graph 50 657.63 384.32 "$clk")"
# a limiter that did not throttle (native's rate at the throttled clocks): fails
expect FAIL "time share 80.8%" "$(verdict graph 50 657.63 657.63 "$clk")"
expect FAIL "time share 74.8%" "$(verdict matmul 25 665.47 665.47 "$clk")"
# no clock samples: the rate share itself, and 59% at a limit of 50 fails
: >"$tmp/noclk.txt"
expect FAIL "achieved 59.0% of native; target 50+-5" "$(verdict matmul 50 665.47 392.76 "$tmp/noclk.txt")"
# the clock did not rise (the same clock throttled and native): the rate share, 49% passes
printf 'coop native sm_mhz 1980 1980 1980 power_w 300 reasons 0x0 samples 100\ncoop 50 sm_mhz 1980 1980 1980 power_w 200 reasons 0x0 samples 100\n' >"$tmp/flat.txt"
expect PASS "achieved 49.0% of native (1980 MHz against 1980)" "$(verdict coop 50 100 49 "$tmp/flat.txt")"
# a throughput-share row (clock_ref_mhz): the rate alone, whatever the clocks
expect FAIL "achieved 59.0% of native; target 50+-5" "$(verdict matmul 50c 665.47 392.76 "$clk")"
expect PASS "achieved 45.3% of native; target 50+-5" "$(verdict matmul 50c 662.36 299.80 "$clk")"
echo "gpu_smlimit_verdict: every verdict as expected"
