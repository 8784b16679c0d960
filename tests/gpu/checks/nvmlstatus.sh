# nvmlstatus: the real NVML's statuses through the plugins, on nvidia-smi -L (which dlopens libnvidia-ml.so.1):
#   nvmlstatus trace        the trace of its NVML calls (filter lib:nvml): same output as natively, every NVML
#                           event's result a name (NVML_SUCCESS...), never hex; a call that failed shows no output
#                           value ("(not written: the call failed)")
#   nvmlstatus faultinject  rule glob:nvmlDeviceGetCount*:NVML_ERROR_UNKNOWN: nvidia-smi sees the error (its output or
#                           status changes) and the rule's summary counts injected faults
#   nvmlstatus lua          a policy skipping nvmlDeviceGetCount* with NVML_ERROR_GPU_IS_LOST: the same
check_nvmlstatus() {
    local smi nat natrc out rc tr fsum lu
    smi=$(command -v nvidia-smi || true)
    if [ -z "$smi" ]; then
        result "nvmlstatus" SKIP "no nvidia-smi here"
        return
    fi
    nat=$(tmo 30 "$smi" -L 2>&1)
    natrc=$?
    if [ "$natrc" != 0 ]; then
        result "nvmlstatus" FAIL "nvidia-smi -L natively: status $natrc: $(echo "$nat" | head -c 200)"
        return
    fi
    # 1. the trace
    tr=$WORK/nvmlstatus.json
    out=$(tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$BUILD_DIR/plugins/trace.so:file=$tr,filter=lib:nvml,summary=0" \
        "$smi" -L 2>"$LOGS/nvmlstatus.trace.err")
    rc=$?
    if [ "$rc" != 0 ] || [ "$out" != "$nat" ]; then
        result "nvmlstatus trace" FAIL "status $rc; output $(echo "$out" | head -c 150) (natively $(echo "$nat" | head -c 150))"
    else
        local verdict
        verdict=$("$PY" - "$tr" <<'PY'
import json, re, sys, collections
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
calls = [e for e in ev if e.get("ph") == "X" and e.get("name", "").startswith("nvml")]
res = collections.Counter(e["args"].get("result") for e in calls)
bad = [e["name"] + "=" + str(e["args"].get("result")) for e in calls
       if not isinstance(e["args"].get("result"), str) or not e["args"]["result"].startswith("NVML_")]
failed = [e for e in calls if e["args"].get("result") not in (None, "NVML_SUCCESS")]
outs = {"nvmlDeviceGetCount": "deviceCount", "nvmlDeviceGetHandleBy": "device"}   # their one output
shown = [e["name"] for e in failed for pre, k in outs.items()
         if e["name"].startswith(pre) and isinstance(e["args"].get(k), str) and "not written" not in e["args"][k]]
if not calls or bad or shown or res.get("NVML_SUCCESS", 0) == 0:
    print("FAIL %d NVML events; results not named: %s; outputs of failed calls shown: %s" % (len(calls), bad[:5], shown[:5]))
else:
    print("PASS %d NVML events, every result named: %s" % (len(calls), ", ".join("%s %d" % kv for kv in res.most_common(4))))
PY
)
        case $verdict in
            PASS\ *|FAIL\ *) result "nvmlstatus trace" "${verdict%% *}" "${verdict#* }" ;;
            *) result "nvmlstatus trace" FAIL "the trace's check gave no verdict: $(echo "$verdict" | tail -c 200)" ;;
        esac
    fi
    # 2. faultinject: the count fails
    out=$(tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$BUILD_DIR/plugins/faultinject.so:rule=glob:nvmlDeviceGetCount*:NVML_ERROR_UNKNOWN" \
        "$smi" -L 2>"$LOGS/nvmlstatus.fi.err")
    rc=$?
    fsum=$(grep -o "[0-9]* faults\{0,1\} injected" "$LOGS/nvmlstatus.fi.err" | head -n 1)
    if { [ "$rc" != 0 ] || [ "$out" != "$nat" ]; } && [ -n "$fsum" ] && [ "${fsum%% *}" -gt 0 ]; then
        result "nvmlstatus faultinject" PASS "nvidia-smi -L: status $rc ($(echo "$out" | head -n 1 | head -c 120)); $fsum"
    else
        result "nvmlstatus faultinject" FAIL "status $rc, output '$(echo "$out" | head -c 120)'; summary '${fsum}'; $(grep -m 2 -i 'error' "$LOGS/nvmlstatus.fi.err" | head -c 200)"
    fi
    # 3. a Lua policy
    printf '%s\n' 'cushim.before["glob:nvmlDeviceGetCount*"] = function(call) return cushim.skip("NVML_ERROR_GPU_IS_LOST") end' \
        > "$WORK/nvmlstatus.lua"
    out=$(tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$BUILD_DIR/plugins/lua.so:script=$WORK/nvmlstatus.lua" \
        "$smi" -L 2>"$LOGS/nvmlstatus.lua.err")
    rc=$?
    lu=$(grep -c '^cushim\[[0-9]*\] error' "$LOGS/nvmlstatus.lua.err")
    if { [ "$rc" != 0 ] || [ "$out" != "$nat" ]; } && [ "$lu" = 0 ]; then
        result "nvmlstatus lua" PASS "nvidia-smi -L: status $rc ($(echo "$out" | head -n 1 | head -c 120)); no policy error"
    else
        result "nvmlstatus lua" FAIL "status $rc, output '$(echo "$out" | head -c 120)'; $(grep -m 2 '^cushim\[[0-9]*\] error' "$LOGS/nvmlstatus.lua.err" | head -c 200)"
    fi
}
gpu_check nvmlstatus check_nvmlstatus
