# shellcheck shell=bash
# remotestep: PyTorch training steps over remoting, timed against local in the same run - issue 43's step targets
# (docs/benchmarks.md, "PyTorch steps over remoting"). tests/gpu/remote/torch_step.py runs two models:
#   mlp          launch-bound (4 small Linear layers, batch 64, f32, SGD; ~1 ms a step locally)
#   transformer  compute-bound (16 blocks of width 2048, 8 x 1024 tokens, bf16, SGD; >= 50 ms a step locally)
# each in three ways, interleaved, REMOTESTEP_ROUNDS rounds (default 2): locally (the real driver, no shim); over
# remoting by the unix socket with shared memory (the default transport on one host); and over TCP loopback with
# the plugin's delay_us=1000 (a simulated 1 ms round trip, as remotenet). The servers are cushim-serve on this
# machine's driver with PyTorch's own cuBLAS (remotert.sh's remote_server_env, remote_server_blas, remote_serve);
# the clients run as remotert's 'train' (remote_client: the shim and the plugin preloaded, cuBLAS and cuBLASLt
# interposed, every libcuda.so* file hidden where a mount namespace can be made, stats=1). Results:
#   remotestep MODEL shm      remote/local ratio of the median step (wall clock; the events' ratio beside it)
#                             against the target: <= 1.3x (mlp), <= 1.05x (transformer, whose local step must be
#                             >= 50 ms to count as compute-bound)
#   remotestep MODEL 1ms      the same ratio at delay_us=1000 over TCP (information: the issue sets no target)
#   remotestep MODEL trips    synchronous round trips per driver call of a step, from the client's exit line
#                             ('remote: pid N: C driver calls, T round trips ...'; all its processes summed) of
#                             two shared-memory runs of W+N and W+2N steps: their difference over N removes the
#                             start-up; target <= 1 round trip per 20 calls; the APIs making the most round trips
#   remotestep MODEL loss     each shared-memory run's last loss equal to the local run's of its round (bits)
# PASS/FAIL per target; no timed assertion runs in CI: the ctest e2e_remote_step_dryrun runs this check's plumbing
# only, against the fake driver with a stand-in python (tests/e2e/run_remote_step_dryrun.sh).
# Steps per run: REMOTESTEP_MLP="W N W1 N1" (default "20 200 5 50": W warm-up and N timed steps locally and over
# shared memory, W1 and N1 at 1 ms), REMOTESTEP_TRANSFORMER (default "3 15 2 8"); REMOTESTEP_MODELS (default
# "mlp transformer"); TORCH_STEP_LAYERS=K gives the transformer K blocks (16). Expected time on an H100: about
# 3-4 minutes, estimated (most of it Python and CUDA start-up, over remoting and at 1 ms a round trip); outputs in
# $DATA/remote.step.*, stderr and LD_DEBUG=files logs in $LOGS, the servers' logs in $LOGS/remote.step.{serve,tcp}.log.

# rs_steps MODEL: "W N W1 N1" for MODEL
rs_steps() {
    case $1 in
    mlp) echo "${REMOTESTEP_MLP:-20 200 5 50}" ;;
    transformer) echo "${REMOTESTEP_TRANSFORMER:-3 15 2 8}" ;;
    *) echo "" ;;
    esac
}
# rs_val FILE NAME: the median of line NAME (gpu_ms, wall_ms) of a torch_step.py output; rs_loss FILE: its loss
rs_val() { awk -v n="$2" '$1 == n && $2 == "median" { print $3 }' "$1" 2>/dev/null; }
rs_loss() { awk '$1 == "loss" { print $2 }' "$1" 2>/dev/null; }
# rs_counts ERRFILE: "CALLS TRIPS", the client's exit lines (stats=1) summed over its processes
rs_counts() {
    sed -nE 's/^remote: pid [0-9]+: ([0-9]+) driver calls, ([0-9]+) round trips .*/\1 \2/p' "$1" 2>/dev/null |
        awk '{ c += $1; t += $2; n++ } END { if (n) print c, t }'
}
# rs_spread VALUES...: "median (min..max)" of the numbers given
rs_spread() {
    printf '%s\n' "$@" | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "?"; exit }
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.3f (%.3f..%.3f)", m, v[1], v[NR] }'
}
# rs_ratio A B: A / B with 3 decimals ("?" when either is not a number or B is 0)
rs_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { n = "^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$"
        if (a !~ n || b !~ n || b + 0 == 0) print "?"; else printf "%.3f", a / b }'
}

# rs_why TAG RC: why run TAG failed - a driver loaded (98), else its stderr's last two lines, the plugin's exit
# lines (stats=1) aside
rs_why() {
    if [ "$2" = 98 ]; then echo "the client loaded a driver (logs/remote.$1.ld.*)"; return; fi
    grep -v '^remote: pid [0-9]*: ' "$LOGS/remote.$1.err" 2>/dev/null | tail -n 2 | tr '\n' ' ' | cut -c1-200
}

# rs_run MODEL MODE ROUND W N: one run of torch_step.py; its output in $DATA/remote.step.MODEL.MODE.ROUND.out
# (remote_client's naming), stderr in $LOGS; returns its exit status (a remote client that loaded a driver: 98)
rs_run() {
    local model=$1 mode=$2 w=$4 n=$5 tag=step.$1.$2.$3 opts
    case $mode in
    local)
        tmo 300 "$PY" "$HERE/remote/torch_step.py" "$model" "$w" "$n" > "$DATA/remote.$tag.out" 2> "$LOGS/remote.$tag.err"
        return ;;
    shm) opts="server=unix:$RSTEP_SOCK,stats=1" ;;
    1ms) opts="server=tcp://127.0.0.1:$RSTEP_PORT,token_file=$RSTEP_TOKEN,stats=1,delay_us=1000" ;;
    esac
    remote_client "$tag" 'libcuda\.so' LD_PRELOAD="$SHIM $RSTEP_PLUGIN" LD_LIBRARY_PATH="$RSTEP_DLP" \
        CUSHIM_REAL_LIBCUDA=none CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
        CUSHIM_PLUGINS="$RSTEP_PLUGIN:$opts" -- "$PY" "$HERE/remote/torch_step.py" "$model" "$w" "$n"
    local rc=$? drv
    drv=$(remote_loaded_driver "$tag")
    if [ "$rc" = 0 ] && [ -n "$drv" ]; then
        echo "remotestep: the client loaded a driver: $drv" >> "$LOGS/remote.$tag.err"
        return 98
    fi
    return "$rc"
}

# rs_model MODEL: its runs (ROUNDS rounds of local, shm, 1ms; then the longer shared-memory run for the counts)
# and its four results
rs_model() {
    local model=$1 w n w1 n1 r mode rc failed="" cut=""
    read -r w n w1 n1 <<< "$(rs_steps "$model")"
    if [ -z "${n1:-}" ]; then
        result "remotestep $model" FAIL "no step counts for $model: $(rs_steps "$model") (want W N W1 N1)"
        return
    fi
    local wall_l=() wall_s=() wall_d=() gpu_l=() gpu_s=() gpu_d=() ratio_s=() ratio_d=() lossbad=""
    for r in $(seq "$RSTEP_ROUNDS"); do
        for mode in local shm 1ms; do
            if [ "$mode" = 1ms ]; then rs_run "$model" $mode "r$r" "$w1" "$n1"; else rs_run "$model" $mode "r$r" "$w" "$n"; fi
            rc=$?
            if [ $rc != 0 ]; then
                failed+="$mode r$r rc $rc: $(rs_why "step.$model.$mode.r$r" $rc); "
                [ -e "$WORK/.cut" ] && cut=1
            fi
        done
        [ -n "$cut" ] && break
        local f=$DATA/remote.step.$model
        wall_l+=("$(rs_val "$f.local.r$r.out" wall_ms)") gpu_l+=("$(rs_val "$f.local.r$r.out" gpu_ms)")
        wall_s+=("$(rs_val "$f.shm.r$r.out" wall_ms)") gpu_s+=("$(rs_val "$f.shm.r$r.out" gpu_ms)")
        wall_d+=("$(rs_val "$f.1ms.r$r.out" wall_ms)") gpu_d+=("$(rs_val "$f.1ms.r$r.out" gpu_ms)")
        ratio_s+=("$(rs_ratio "${wall_s[-1]}" "${wall_l[-1]}")") ratio_d+=("$(rs_ratio "${wall_d[-1]}" "${wall_l[-1]}")")
        [ "$(rs_loss "$f.shm.r$r.out")" = "$(rs_loss "$f.local.r$r.out")" ] && [ -n "$(rs_loss "$f.local.r$r.out")" ] ||
            lossbad+="r$r local $(rs_loss "$f.local.r$r.out") shm $(rs_loss "$f.shm.r$r.out"); "
    done
    # the counts: W+2N steps over shared memory against round 1's W+N
    if [ -z "$cut" ]; then
        rs_run "$model" shm count "$w" $((2 * n))
        rc=$?
        [ $rc = 0 ] || failed+="count run rc $rc: $(rs_why "step.$model.shm.count" $rc); "
    fi
    local pre="${failed:+runs failed: $failed}"
    # shm: the target
    local lm sm dm gl gs gd ratio target=1.3 ok=PASS why=""
    [ "$model" = transformer ] && target=1.05
    lm=$(rs_spread "${wall_l[@]}") sm=$(rs_spread "${wall_s[@]}") dm=$(rs_spread "${wall_d[@]}")
    gl=$(rs_spread "${gpu_l[@]}") gs=$(rs_spread "${gpu_s[@]}") gd=$(rs_spread "${gpu_d[@]}")
    ratio=$(rs_ratio "${sm%% *}" "${lm%% *}")
    awk -v r="$ratio" -v t="$target" 'BEGIN { exit !(r != "?" && r <= t) }' || { ok=FAIL why="target missed; "; }
    if [ "$model" = transformer ] && ! awk -v l="${lm%% *}" 'BEGIN { exit !(l != "?" && l >= 50) }'; then
        ok=FAIL why+="the local step is under 50 ms: not compute-bound as the issue asks (make the model larger); "
    fi
    [ -n "$failed" ] && ok=FAIL
    result "remotestep $model shm" $ok "$pre${why}median step local $lm ms, shared memory $sm ms (wall clock, ${#wall_l[@]} rounds): ratio ${ratio}x (per round $(rs_spread "${ratio_s[@]}")), events' ratio $(rs_ratio "${gs%% *}" "${gl%% *}")x; target <= ${target}x ($w+$n steps)"
    # 1 ms: information
    ok=PASS
    { [ -n "$failed" ] || [ "$(rs_ratio "${dm%% *}" "${lm%% *}")" = "?" ]; } && ok=FAIL
    result "remotestep $model 1ms" $ok "$pre""median step local $lm ms, at delay_us=1000 over TCP $dm ms: ratio $(rs_ratio "${dm%% *}" "${lm%% *}")x (per round $(rs_spread "${ratio_d[@]}")), events' ratio $(rs_ratio "${gd%% *}" "${gl%% *}")x; no target ($w1+$n1 steps)"
    # round trips per call of a step
    local c1 t1 c2 t2 per
    read -r c1 t1 <<< "$(rs_counts "$LOGS/remote.step.$model.shm.r1.err")"
    read -r c2 t2 <<< "$(rs_counts "$LOGS/remote.step.$model.shm.count.err")"
    if [ -z "${t1:-}" ] || [ -z "${t2:-}" ] || [ "$c2" -le "$c1" ]; then
        result "remotestep $model trips" FAIL "$pre""no usable exit lines (stats=1): $w+$n steps '${c1:-?} ${t1:-?}', $w+$((2 * n)) steps '${c2:-?} ${t2:-?}' (calls, round trips)"
    else
        per=$(awk -v c=$((c2 - c1)) -v t=$((t2 - t1)) -v n="$n" 'BEGIN {
            printf "%.1f driver calls and %.2f round trips a step: ", c / n, t / n
            if (t <= 0) printf "none per step"; else printf "1 per %.1f calls", c / t }')
        ok=PASS
        [ $((20 * (t2 - t1))) -le $((c2 - c1)) ] || ok=FAIL
        [ -n "$failed" ] && ok=FAIL
        result "remotestep $model trips" $ok "$pre$per (target <= 1 per 20; runs of $w+$n and $w+$((2 * n)) steps: $c1 calls in $t1 round trips, $c2 in $t2); sync: $(sed -n 's/^remote: pid [0-9]*: sync: //p' "$LOGS/remote.step.$model.shm.count.err" | head -n 1)"
    fi
    # the losses
    if [ -n "$lossbad" ] || [ ${#wall_l[@]} = 0 ]; then
        result "remotestep $model loss" FAIL "$pre""the last loss differs from the local run's: ${lossbad:-no round ran}"
    else
        result "remotestep $model loss" PASS "the last loss over shared memory equal to the local run's in ${#wall_l[@]} rounds ($(rs_loss "$DATA/remote.step.$model.local.r1.out"))"
    fi
}

check_remotestep() {
    local serve=$BUILD_DIR/remote/cushim-serve cuda=${CUDA_HOME:-/usr/local/cuda} model userver tserver rc
    RSTEP_PLUGIN=$BUILD_DIR/plugins/remote.so RSTEP_SOCK=$WORK/remote.step.sock RSTEP_TOKEN=$WORK/remote.step.token
    RSTEP_ROUNDS=${REMOTESTEP_ROUNDS:-2}
    if [ ! -x "$serve" ] || [ ! -f "$RSTEP_PLUGIN" ]; then
        result "remotestep" FAIL "$serve or $RSTEP_PLUGIN missing (build-gpu lacks the remoting)"
        return
    fi
    case $RSTEP_ROUNDS in ''|*[!0-9]*|0) result "remotestep" FAIL "REMOTESTEP_ROUNDS=$RSTEP_ROUNDS: give 1 or more"; return ;; esac
    if ! tmo 60 "$PY" -c 'import torch' 2> /dev/null; then
        result "remotestep" SKIP "no torch for $PY"
        return
    fi
    remote_server_env "$cuda"    # remotert.sh: REMOTE_NS, RS_CUDART
    remote_server_blas "$cuda"   # remotert.sh: PyTorch's own cuBLAS on the server (the losses as native)
    head -c 32 /dev/urandom | base64 > "$RSTEP_TOKEN" && chmod 600 "$RSTEP_TOKEN"
    RSTEP_PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    remote_serve "unix:$RSTEP_SOCK" "$LOGS/remote.step.serve.log"
    rc=$? userver=$RS_SERVER
    remote_serve "tcp://127.0.0.1:$RSTEP_PORT" "$LOGS/remote.step.tcp.log" --token-file="$RSTEP_TOKEN"
    rc=$((rc + $?)) tserver=$RS_SERVER
    if [ $rc != 0 ]; then
        result "remotestep" FAIL "cushim-serve did not listen: $(head -c 200 "$LOGS/remote.step.serve.log") $(head -c 200 "$LOGS/remote.step.tcp.log")"
    else
        RSTEP_DLP="$DROPIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        for model in ${REMOTESTEP_MODELS:-mlp transformer}; do
            rs_model "$model"
        done
    fi
    kill "$userver" "$tserver" 2>/dev/null
    wait "$userver" "$tserver" 2>/dev/null
}
gpu_check remotestep check_remotestep
