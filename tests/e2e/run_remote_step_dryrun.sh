#!/usr/bin/env bash
# run_remote_step_dryrun.sh - the GPU check 'remotestep' (tests/gpu/checks/remotestep.sh) run without a GPU: its
# plumbing, not its figures. cushim-serve runs on the fake driver (a unix socket, and TCP with a token); a stand-in
# 'python' answers torch_step.py: locally it prints invented step times; as a remote client (the check's
# environment: the shim and the remote plugin, the drop-in on the path, no driver) it runs examples/vecadd through
# the plugin once for its start-up and once per step, so that the plugin's real exit lines (stats=1) carry counts
# that grow with the steps, and prints invented times. Checked: every run happens (local, shared memory, 1 ms over
# TCP with delay_us, 2 rounds, and the longer run for the counts), the ratios come out of the times printed
# (mlp 1.2x: target met; transformer 1.1x: missed), the round trips per call come out of the exit lines' difference
# (vecadd's calls, nearly one round trip each: target missed), the losses are compared, and a client that loads a
# driver is caught. The figures mean nothing.
# Usage: run_remote_step_dryrun.sh BUILD_DIR OUT_DIR
# shellcheck disable=SC2317  # the functions run.sh gives a check: called from the sourced check
set -u
BUILD_DIR=$(cd "${1:?usage: run_remote_step_dryrun.sh BUILD_DIR OUT_DIR}" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/gpu
WORK=${2:?usage: run_remote_step_dryrun.sh BUILD_DIR OUT_DIR}/remote_step_dryrun
rm -rf "$WORK" && mkdir -p "$WORK/logs" "$WORK/data" "$WORK/standin"
LOGS=$WORK/logs DATA=$WORK/data S=$WORK/standin
SHIM=$BUILD_DIR/runtime/libcushim.so DROPIN=$BUILD_DIR/dropin FAKE=$BUILD_DIR/tests/fake
for f in "$SHIM" "$DROPIN/libcuda.so.1" "$BUILD_DIR/plugins/remote.so" "$BUILD_DIR/remote/cushim-serve" \
         "$BUILD_DIR/examples/vecadd" "$FAKE/libcuda.so.1"; do
    [ -e "$f" ] || { echo "run_remote_step_dryrun.sh: $f missing" >&2; exit 2; }
done
unset LD_PRELOAD CUSHIM_PLUGINS
export LD_LIBRARY_PATH=$FAKE   # the server's driver: the fake (the clients get the drop-in first)

PY3=$(python3 -c 'import sys; print(sys.executable)')   # not through a version manager's shim, each time
# the stand-in python. STEP_TIMES="mode:model:wall:gpu ...", the loss by mode (STEP_LOSS_<mode>)
cat > "$S/python" <<EOF
#!/bin/bash
case \${1:-} in   # python3 itself where it is not torch_step.py (the check's port, torch's folders)
-c) case \${2:-} in "import torch") exit 0 ;; *torch*) exit 1 ;; esac   # no torch's folders to find
    exec "$PY3" "\$@" ;;
*/torch_step.py) ;;
*) exec "$PY3" "\$@" ;;
esac
model=\$2 w=\$3 n=\$4 mode=local
case \${CUSHIM_PLUGINS:-} in *delay_us=1000*) mode=1ms ;; *remote.so*) mode=shm ;; esac
if [ \$mode != local ]; then   # at 1 ms, one vecadd (each of its round trips delayed): its counts are not used
    k=\$n; [ \$mode = 1ms ] && k=0; [ -n "\${STEP_NO_VECADD:-}" ] && k=-1
    for ((i = 0; i <= k; i++)); do "$BUILD_DIR/examples/vecadd" 1024 > /dev/null || exit 1; done
    [ -n "\${STEP_LOAD_DRIVER:-}" ] && env LD_PRELOAD="$FAKE/libcuda.so.1" true
fi
for t in \$STEP_TIMES; do
    IFS=: read -r m mo wall gpu <<< "\$t"
    [ "\$m" = \$mode ] && [ "\$mo" = "\$model" ] && break
done
echo "torch_step \$model warmup \$w steps \$n"
echo "gpu_ms median \$gpu p10 \$gpu p90 \$gpu"
echo "wall_ms median \$wall p10 \$wall p90 \$wall"
loss=STEP_LOSS_\$mode
echo "loss \${!loss:-0x1.8p+0}"
EOF
chmod +x "$S/python"
export STEP_TIMES="local:mlp:1.0:0.9 shm:mlp:1.2:1.1 1ms:mlp:30.0:29.0 local:transformer:60.0:59.0 shm:transformer:66.0:65.0 1ms:transformer:90.0:89.0"

# what tests/gpu/run.sh gives a check (the check calls these functions and reads these variables)
# shellcheck disable=SC2034
PY=$S/python
DEADLINE=$(($(date +%s) + 120))
time_left() { echo $((DEADLINE - $(date +%s))); }
budget_out() { : > "$WORK/.cut"; }
tmo() { local s=$1; shift; timeout -k 5 "$s" "$@"; }
want() { return 0; }
RESULTS=$WORK/results.tsv
result() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" | tee -a "$RESULTS"; }
gpu_check() { :; }
# shellcheck source=tests/gpu/checks/remotert.sh
. "$HERE/checks/remotert.sh"
# shellcheck source=tests/gpu/checks/remotestep.sh
. "$HERE/checks/remotestep.sh"

status=0
fail() { echo "run_remote_step_dryrun.sh: FAIL: $*"; status=1; }
expect() {   # expect CHECK PASS|FAIL REGEX...: CHECK's last result has that verdict and its detail every REGEX
    local name=$1 want=$2 line re
    shift 2
    line=$(awk -F'\t' -v n="$name" '$1 == n' "$RESULTS" | tail -n 1)
    case $line in
    *$'\t'"$want"$'\t'*) ;;
    *) fail "$name is not $want: ${line:-no result}"; return ;;
    esac
    for re in "$@"; do
        grep -qE -- "$re" <<< "$line" || fail "$name: no '$re' in: $line"
    done
}

# 1. the launch-bound model, two rounds
REMOTESTEP_ROUNDS=2 REMOTESTEP_MODELS=mlp REMOTESTEP_MLP="1 1 0 2" check_remotestep
expect "remotestep mlp shm" PASS 'median step local 1\.000 \(1\.000\.\.1\.000\) ms, shared memory 1\.200 .* 2 rounds\): ratio 1\.200x' \
    "events' ratio 1\.222x; target <= 1\.3x \(1\+1 steps\)"
expect "remotestep mlp 1ms" PASS 'at delay_us=1000 over TCP 30\.000 .* ratio 30\.000x .*no target \(0\+2 steps\)'
# vecadd for the start-up and per step: each of its calls nearly a round trip (runs of 1+1 and 1+2 steps: 2 and
# 3 vecadds, 62 and 93 calls)
expect "remotestep mlp trips" FAIL '^[^	]*	FAIL	31\.0 driver calls and [0-9.]+ round trips a step: 1 per 1\.[0-9] calls \(target <= 1 per 20; runs of 1\+1 and 1\+2 steps: 62 calls' \
    'sync: [a-zA-Z]'
expect "remotestep mlp loss" PASS 'in 2 rounds \(0x1\.8p\+0\)'
# the runs: 2 rounds x 3 ways + the count run, the remote ones through the plugin with no driver
n=$(find "$DATA" -name 'remote.step.*.out' | wc -l)
[ "$n" = 7 ] || fail "$n runs' outputs, not 7: $(ls "$DATA")"
grep -q 'round trips to tcp://127.0.0.1' "$LOGS/remote.step.mlp.1ms.r1.err" ||
    fail "the 1 ms run did not go over TCP: $(head -c 300 "$LOGS/remote.step.mlp.1ms.r1.err")"
grep -qE '[1-9][0-9]* calls by doorbell' "$LOGS/remote.step.mlp.shm.r1.err" ||
    fail "the shared-memory run rang no doorbell: $(head -c 300 "$LOGS/remote.step.mlp.shm.r1.err")"

# 2. the compute-bound model, one round: its target missed (1.1x), a remote loss that differs from the local
# one, a client that loads a driver (the fake, by LD_PRELOAD) and makes no CUDA call (no exit line to count)
: > "$RESULTS"
STEP_LOSS_shm=0x1.9p+0 STEP_LOAD_DRIVER=1 STEP_NO_VECADD=1 REMOTESTEP_ROUNDS=1 REMOTESTEP_MODELS=transformer \
    REMOTESTEP_TRANSFORMER="0 1 0 1" check_remotestep
expect "remotestep transformer shm" FAIL '^[^	]*	FAIL	runs failed: shm r1 rc 98: the client loaded a driver' \
    'target missed; median step local 60\.000 .*ratio 1\.100x .*target <= 1\.05x'
expect "remotestep transformer 1ms" FAIL 'ratio 1\.500x'
expect "remotestep transformer loss" FAIL 'differs from the local run.s: r1 local 0x1\.8p\+0 shm 0x1\.9p\+0'
expect "remotestep transformer trips" FAIL "no usable exit lines \\(stats=1\\): 0\\+1 steps '\\? \\?', 0\\+2 steps '\\? \\?'"

[ $status = 0 ] && echo "run_remote_step_dryrun.sh: PASS"
exit $status
