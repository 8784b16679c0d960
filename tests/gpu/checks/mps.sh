# mps.sh - the GPU's own sharing, MPS, beside ours: the workloads of the priority, smlimit (the 50% matmul loop) and
# memlimit (the 4 GiB quota) checks run as clients of an MPS control daemon private to this check, with MPS's own
# controls, then the shim's priorities on top of MPS. Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu
# mps` runs it (one GPU; about 4 minutes). docs/isolation.md, "MPS", gives the table these lines fill.
#
# The daemon: nvidia-cuda-mps-control -d with CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY under $WORK (its
# clients get the same two variables, so nothing else on the machine is touched); quit (echo quit |
# nvidia-cuda-mps-control) on every path: the check's end, a TERM or INT of the suite (its trap, chained), and a
# watchdog that quits it after MPS_MAX_S (900) seconds if the check never came back. Every line is SKIP with the
# reason when the daemon cannot run here: no nvidia-cuda-mps-control, compute mode Prohibited, or a first client
# that does not reach an MPS server (not permitted for this user, a daemon of another user, ...).
#
#   mps daemon        the daemon started and a client reached its server (PASS), or why not (SKIP)
#   mps alone         information: the latency loop alone (an MPS client): its p99; the trainer alone: its rate
#   mps plain         information: the loop beside the saturating bf16 trainer, both MPS clients, no priorities
#   mps client-prio   information: the same with CUDA_MPS_CLIENT_PRIORITY=0 for the loop and 1 for the trainer: the
#                     loop's p99 against alone and the issue's bound (+10%), the trainer's rate
#   mps shim-prio     the shim's priorities on top of MPS: the loop at smlimit priority=high, the trainer at
#                     priority=low (one group), CUDA_MPS_CLIENT_PRIORITY left to the plugin: PASS when the plugin set
#                     it (0 and 1, its log lines) and the loop's p99 is at most 10% above alone (the issue's bound)
#   mps shim-order    information: the same pair with smlimit's priorities and both clients at MPS priority 0 (set,
#                     so the plugin keeps it): our admission order alone under MPS, beside 'client-prio' and 'shim-prio'
#   mps sm50          information: the bf16 matmul loop with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50: its rate over the
#                     MPS client's rate without it (smlimit's 50% row)
#   mps smlimit50     information: the same loop with smlimit limit=50 under MPS (smlimit's time accounting assumes
#                     time-slicing: docs/plugins/smlimit.md, "Limits")
#   mps mem4g         information: PyTorch (ml_frameworks.py torch 4) with CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4G:
#                     the memory its query reports, what allocating 6 GiB gives (own OOM or not), results = native

MPS_SECS=${MPS_SECS:-4}
MPS_MAX_S=${MPS_MAX_S:-900}

# mps_ctl [ARGS...]: the control program on this check's daemon (stdin: a command)
mps_ctl() { env CUDA_MPS_PIPE_DIRECTORY="$MPS_PIPE" CUDA_MPS_LOG_DIRECTORY="$MPS_LOG" nvidia-cuda-mps-control "$@"; }

# mps_quit: the daemon (and its server) gone, the watchdog and the chained traps undone; safe to call twice
mps_quit() {
    [ -n "${MPS_UP:-}" ] || return 0
    MPS_UP=
    echo quit | timeout -k 2 20 env CUDA_MPS_PIPE_DIRECTORY="$MPS_PIPE" CUDA_MPS_LOG_DIRECTORY="$MPS_LOG" \
        nvidia-cuda-mps-control >/dev/null 2>&1
    [ -n "${MPS_WATCH:-}" ] && kill "$MPS_WATCH" 2>/dev/null
    MPS_WATCH=
    if [ -n "${MPS_OLD_TERM+x}" ]; then
        if [ -n "$MPS_OLD_TERM" ]; then eval "$MPS_OLD_TERM"; else trap - TERM; fi
        if [ -n "$MPS_OLD_INT" ]; then eval "$MPS_OLD_INT"; else trap - INT; fi
        unset MPS_OLD_TERM MPS_OLD_INT
    fi
    cp "$MPS_LOG"/*.log "$LOGS/" 2>/dev/null
}

# mps_start: 0 when the daemon runs and a client reached its server; else 1 with the reason in MPS_WHY
mps_start() {
    local mode cmd
    MPS_WHY=
    if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
        MPS_WHY="no nvidia-cuda-mps-control on this machine"
        return 1
    fi
    mode=$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null | head -n 1)
    case $mode in
        *Prohibited*) MPS_WHY="the GPU's compute mode is $mode: no process may use it"; return 1 ;;
    esac
    MPS_PIPE=$WORK/mps/pipe MPS_LOG=$WORK/mps/log
    rm -rf "$WORK/mps"
    mkdir -p "$MPS_PIPE" "$MPS_LOG"
    # the suite's TERM/INT trap runs after ours (MPS_OLD_*: restored by mps_quit)
    MPS_OLD_TERM=$(trap -p TERM) MPS_OLD_INT=$(trap -p INT)
    cmd=
    if [ -n "$MPS_OLD_TERM" ]; then eval "set -- $MPS_OLD_TERM"; cmd=$3; fi
    trap "mps_quit; ${cmd:-exit 1}" TERM INT
    if ! mps_ctl -d 2>"$WORK/mps/start.err"; then
        MPS_WHY="nvidia-cuda-mps-control -d failed ($(id -un), compute mode ${mode:-unknown}): $(head -c 200 "$WORK/mps/start.err")"
        MPS_UP=1 mps_quit
        return 1
    fi
    MPS_UP=1
    # the watchdog: the daemon never outlives the check by more than MPS_MAX_S
    (
        sleep "$MPS_MAX_S" &
        s=$!
        trap 'kill $s 2>/dev/null; exit 0' TERM   # mps_quit: the sleep goes with it
        wait $s && echo quit | env CUDA_MPS_PIPE_DIRECTORY="$MPS_PIPE" nvidia-cuda-mps-control
    ) >/dev/null 2>&1 </dev/null &
    MPS_WATCH=$!
    # a first client: it must reach an MPS server (the daemon starts one for it)
    if ! tmo 90 env CUDA_MPS_PIPE_DIRECTORY="$MPS_PIPE" CUDA_MPS_LOG_DIRECTORY="$MPS_LOG" "$PY" -c \
        'import torch; torch.zeros(1, device="cuda"); torch.cuda.synchronize(); print("ok")' \
        >"$WORK/mps/first.out" 2>"$WORK/mps/first.err"; then
        MPS_WHY="a first client failed under MPS ($(id -un), compute mode ${mode:-unknown}): $(tail -n 2 "$WORK/mps/first.err" | tr '\n' ' ' | cut -c1-200); control.log: $(tail -n 2 "$MPS_LOG/control.log" 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
        mps_quit
        return 1
    fi
    MPS_SERVER=$(echo get_server_list | mps_ctl 2>/dev/null | head -n 1)
    if [ -z "$MPS_SERVER" ]; then
        MPS_WHY="the first client ran without an MPS server (get_server_list is empty): not an MPS client here; control.log: $(tail -n 2 "$MPS_LOG/control.log" 2>/dev/null | tr '\n' ' ' | cut -c1-200)"
        mps_quit
        return 1
    fi
    return 0
}

# mps_env: the variables every client of this daemon needs (printed one per line for env)
mps_client() { env CUDA_MPS_PIPE_DIRECTORY="$MPS_PIPE" CUDA_MPS_LOG_DIRECTORY="$MPS_LOG" "$@"; }

# mps_pair NAME "LOOP VAR=VALUE..." "TRAINER VAR=VALUE...": the latency loop and the matmul trainer at once, both MPS
# clients, measured over one window (--start-at after both warmups); files $MPS_D/NAME.loop and NAME.train
mps_pair() {
    local name=$1 t0 pt
    local -a lo=() tr=()
    read -r -a lo <<<"$2"
    read -r -a tr <<<"$3"
    t0=$(awk -v n="$(date +%s)" 'BEGIN { printf "%d", n + 25 }')
    mps_client env "${tr[@]}" timeout -k 5 120 "$PY" "$HERE/smlimit/matmul_loop.py" matmul --seconds "$MPS_SECS" \
        --warmup 1 --start-at "$t0" --linger 2 >"$MPS_D/$name.train" 2>"$MPS_D/$name.train.err" &
    pt=$!
    mps_client env "${lo[@]}" timeout -k 5 120 "$PY" "$HERE/smlimit/latency_loop.py" --seconds "$MPS_SECS" --warmup 1 \
        --start-at "$t0" >"$MPS_D/$name.loop" 2>"$MPS_D/$name.loop.err"
    wait $pt
    cat "$MPS_D/$name.loop.err" "$MPS_D/$name.train.err" >>"$LOGS/mps.err"
}

mps_p99() { sed -n 's/^latency .*p99_ms \([0-9.]*\).*/\1/p' "$1"; }
mps_rate() { sed -n 's/^rate //p' "$1" | tail -n 1; }

# mps_vs_alone NAME: "p99 X ms against A alone (+D%, within/above the bound +10%); trainer R TFLOP/s"
mps_vs_alone() {
    awk -v a="$MPS_ALONE" -v h="$(mps_p99 "$MPS_D/$1.loop")" -v t="$(mps_rate "$MPS_D/$1.train")" 'BEGIN {
        if (a <= 0 || h <= 0) { printf "no measurement (alone %s, here %s)\n", a, h; exit }
        printf "p99 %.3f ms against %.3f alone (%+.1f%%, %s the issue'"'"'s bound +10%%); trainer %s TFLOP/s\n",
            h, a, (h / a - 1) * 100, (h <= a * 1.10 ? "within" : "above"), (t == "" ? "?" : t) }'
}

# mps_time SECONDS ROW: 0 when the suite's budget leaves SECONDS; else ROW is reported not run (budget_out), 1
mps_time() {
    [ "$(time_left)" -gt "$1" ] && return 0
    budget_out
    result "mps $2" FAIL "not run (the suite's time budget; GPU_SUITE_BUDGET=900 runs every row)"
    return 1
}

check_mps() {
    local plugin=$BUILD_DIR/plugins/smlimit.so grp="mps$$" nat got detail ok
    MPS_D=$WORK/mps-runs
    rm -rf "$MPS_D"
    mkdir -p "$MPS_D"
    if [ "$(time_left)" -le 200 ]; then
        budget_out
        result "mps daemon" FAIL "not run (the suite's time budget)"
        return
    fi
    if ! mps_start; then
        result "mps daemon" SKIP "$MPS_WHY"
        return
    fi
    result "mps daemon" PASS "nvidia-cuda-mps-control -d as $(id -un), pipes in $MPS_PIPE; a client reached server $MPS_SERVER"

    # priorities: the latency loop alone, beside the trainer, with MPS's client priorities, with ours on top
    mps_client timeout -k 5 60 "$PY" "$HERE/smlimit/latency_loop.py" --seconds "$MPS_SECS" >"$MPS_D/alone.loop" \
        2>>"$LOGS/mps.err"
    MPS_ALONE=$(mps_p99 "$MPS_D/alone.loop")
    mps_client timeout -k 5 60 "$PY" "$HERE/smlimit/matmul_loop.py" matmul --seconds "$MPS_SECS" \
        >"$MPS_D/alone.train" 2>>"$LOGS/mps.err"
    result "mps alone" SKIP "information: the loop's p99 ${MPS_ALONE:-?} ms alone as an MPS client; the trainer alone $(mps_rate "$MPS_D/alone.train") TFLOP/s"
    mps_time 45 plain || { mps_quit; return; }
    mps_pair plain "" ""
    result "mps plain" SKIP "information: no priorities: $(mps_vs_alone plain)"
    mps_time 45 client-prio || { mps_quit; return; }
    mps_pair client-prio "CUDA_MPS_CLIENT_PRIORITY=0" "CUDA_MPS_CLIENT_PRIORITY=1"
    result "mps client-prio" SKIP "information: CUDA_MPS_CLIENT_PRIORITY 0 (loop) / 1 (trainer): $(mps_vs_alone client-prio)"
    rm -f "/dev/shm/cushim-smlimit4-$(id -u)-$grp"
    mps_time 45 shim-prio || { mps_quit; return; }
    mps_pair shim-prio "LD_PRELOAD=$SHIM CUSHIM_LOG=info CUSHIM_PLUGINS=$plugin:priority=high,group=$grp,report=1" \
        "LD_PRELOAD=$SHIM CUSHIM_LOG=info CUSHIM_PLUGINS=$plugin:priority=low,group=$grp,report=1"
    rm -f "/dev/shm/cushim-smlimit4-$(id -u)-$grp"
    detail=$(mps_vs_alone shim-prio)
    ok=1
    grep -q "CUDA_MPS_CLIENT_PRIORITY=0 for priority high" "$MPS_D/shim-prio.loop.err" || ok=0
    grep -q "CUDA_MPS_CLIENT_PRIORITY=1 for priority low" "$MPS_D/shim-prio.train.err" || ok=0
    if [ $ok = 0 ]; then
        result "mps shim-prio" FAIL "the plugin did not set CUDA_MPS_CLIENT_PRIORITY (0 for the loop, 1 for the trainer): $(grep -h 'MPS client' "$MPS_D"/shim-prio.*.err | head -n 2 | tr '\n' ' '); $detail"
    else
        case $detail in
            *within*) result "mps shim-prio" PASS "smlimit priority high/low, CUDA_MPS_CLIENT_PRIORITY 0/1 set by the plugin: $detail" ;;
            *) result "mps shim-prio" FAIL "smlimit priority high/low, CUDA_MPS_CLIENT_PRIORITY 0/1 set by the plugin: $detail" ;;
        esac
    fi

    mps_time 45 shim-order || { mps_quit; return; }
    mps_pair shim-order "LD_PRELOAD=$SHIM CUDA_MPS_CLIENT_PRIORITY=0 CUSHIM_PLUGINS=$plugin:priority=high,group=$grp" \
        "LD_PRELOAD=$SHIM CUDA_MPS_CLIENT_PRIORITY=0 CUSHIM_PLUGINS=$plugin:priority=low,group=$grp"
    rm -f "/dev/shm/cushim-smlimit4-$(id -u)-$grp"
    result "mps shim-order" SKIP "information: smlimit priority high/low, both clients at MPS priority 0: $(mps_vs_alone shim-order)"

    # compute share: the matmul loop at 50% of the SMs (MPS) and at smlimit's 50 under MPS, over the MPS client alone
    nat=$(mps_rate "$MPS_D/alone.train")
    mps_time 60 sm50 || { mps_quit; return; }
    mps_client env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout -k 5 60 "$PY" "$HERE/smlimit/matmul_loop.py" matmul \
        --seconds "$MPS_SECS" --clocks >"$MPS_D/sm50.train" 2>>"$LOGS/mps.err"
    got=$(mps_rate "$MPS_D/sm50.train")
    result "mps sm50" SKIP "information: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50: $(awk -v n="$nat" -v g="$got" 'BEGIN {
        if (n > 0 && g > 0) printf "%.1f%% of the MPS client'"'"'s rate alone (%.1f / %.1f TFLOP/s)", 100 * g / n, g, n
        else printf "no measurement (%s / %s)", g, n }'); $(sed -n 's/^clocks //p' "$MPS_D/sm50.train" | head -n 1)"
    mps_client env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=50,shared=0,report=1" timeout -k 5 60 "$PY" \
        "$HERE/smlimit/matmul_loop.py" matmul --seconds "$MPS_SECS" --clocks >"$MPS_D/smlimit50.train" \
        2>"$MPS_D/smlimit50.err"
    got=$(mps_rate "$MPS_D/smlimit50.train")
    result "mps smlimit50" SKIP "information: smlimit limit=50 as an MPS client: $(awk -v n="$nat" -v g="$got" 'BEGIN {
        if (n > 0 && g > 0) printf "%.1f%% of the MPS client'"'"'s rate alone (%.1f / %.1f TFLOP/s)", 100 * g / n, g, n
        else printf "no measurement (%s / %s)", g, n }'); $(grep -o 'busy [^,]*' "$MPS_D/smlimit50.err" | head -n 1)"

    mps_time 60 mem4g || { mps_quit; return; }
    # memory: MPS's pinned device memory limit against the 4 GiB quota's checks (memlimit's torch-default case)
    mps_client timeout -k 5 120 "$PY" "$HERE/memlimit/ml_frameworks.py" torch 4 >"$MPS_D/mem.native" \
        2>>"$LOGS/mps.err"
    mps_client env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4G timeout -k 5 120 "$PY" "$HERE/memlimit/ml_frameworks.py" \
        torch 4 >"$MPS_D/mem.quota" 2>"$MPS_D/mem.quota.err"
    result "mps mem4g" SKIP "information: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4G: query $(sed -n 's/^total //p' "$MPS_D/mem.quota" | head -n 1) bytes (quota $((4 << 30))), past it (6 GiB) '$(sed -n 's/^oom //p' "$MPS_D/mem.quota" | head -n 1)', results $( [ -n "$(sed -n 's/^result //p' "$MPS_D/mem.native")" ] && [ "$(sed -n 's/^result //p' "$MPS_D/mem.quota")" = "$(sed -n 's/^result //p' "$MPS_D/mem.native")" ] && echo "= native" || echo "differ from native (or none): $(tail -n 1 "$MPS_D/mem.quota.err" | cut -c1-120)")"

    mps_quit
    cp "$MPS_D"/* "$LOGS/" 2>/dev/null
}

gpu_check mps check_mps
