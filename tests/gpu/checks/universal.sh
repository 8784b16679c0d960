# universal: libraries beyond the driver and runtime through the shim (codegen/libs/*.lib), on real
# programs. Each check compares what the shim counted (CUSHIM_COUNTS) with the library's own account.
#   universal nvml-smi     nvidia-smi -q under the shim: same device names as without it, and the shim
#                          counted its NVML calls (nvidia-smi dlopens libnvidia-ml.so.1 and dlsyms it)
#   universal nvml-torch   PyTorch's NVML queries (torch.cuda._raw_device_count_nvml: nvmlInit +
#                          nvmlDeviceGetCount_v2 through ctypes; the pynvml-based ones when pynvml is
#                          installed) answer as without the shim, and the shim counted each call
#   universal cublas       a float32 torch.mm with CUSHIM_LIBS=...,cublas,cublaslt: right result, and for every
#                          API in cuBLAS's own log (CUBLAS_LOGINFO_DBG=1) the shim counted as many calls
#   universal nccl         (nvidia-h200-x2) two-process all-reduce with torch.distributed/NCCL: sum 3 on both
#                          ranks, and each rank's ncclAllReduce count equals the AllReduce lines of its NCCL
#                          debug log (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL); SKIP with one GPU
#   universal bench        bench/gpu/bench_libs.c: ns per NVML (nvmlDeviceGetCount_v2) and cuBLAS
#                          (cublasGetPointerMode_v2) call, no hook: UNIV_BENCH_ROUNDS (11) rounds of a direct and a
#                          shim process (alternately first, pinned to one core with taskset), and in each shim
#                          process the wrapper against the real function (read from the library's ELF .dynsym) in
#                          UNIV_BENCH_BLOCKS (21) alternating block pairs; medians and min..max of the differences,
#                          "target met"/"target missed" (issue 7: within 2 ns) in the text; PASS with the figures
#                          (FAIL only when no figure came, or the shim did not interpose); alone as check
#                          'univbench' (about 1.5 minutes)
UNI=$HERE/universal

# uni_names FILE: the device names of an nvidia-smi -q output
uni_names() { grep -E '^\s*Product Name' "$1" | sed 's/.*: //' | sort; }

check_universal_nvml_smi() {
    local smi c=$LOGS/universal-smi.counts n
    smi=$(command -v nvidia-smi) || { result "universal nvml-smi" SKIP "no nvidia-smi"; return; }
    tmo 60 "$smi" -q >"$LOGS/universal-smi.native" 2>&1 || { result "universal nvml-smi" FAIL "native nvidia-smi failed"; return; }
    rm -f "$c" "$c".*
    if ! tmo 60 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$c" "$smi" -q >"$LOGS/universal-smi.shim" 2>"$LOGS/universal-smi.err"; then
        result "universal nvml-smi" FAIL "nvidia-smi under the shim failed: $(tail -n 2 "$LOGS/universal-smi.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    n=$(shim_lines "$c" '^nvml')
    if [ "$(uni_names "$LOGS/universal-smi.native")" != "$(uni_names "$LOGS/universal-smi.shim")" ] ||
       [ -z "$(uni_names "$LOGS/universal-smi.shim")" ]; then
        result "universal nvml-smi" FAIL "device names differ under the shim (or none): $(uni_names "$LOGS/universal-smi.shim" | tr '\n' ',')"
    elif [ "$n" -lt 3 ]; then
        result "universal nvml-smi" FAIL "the shim counted $n NVML APIs of nvidia-smi ($(head -c 200 "$c" 2>/dev/null | tr '\n' ' '))"
    else
        result "universal nvml-smi" PASS "same devices ($(uni_names "$LOGS/universal-smi.shim" | head -n 1)); $n NVML APIs counted, nvmlInit*: $(shim_count "$c" nvmlInit_v2)+$(shim_count "$c" nvmlInitWithFlags)"
    fi
}

check_universal_nvml_torch() {
    local c=$LOGS/universal-torch-nvml.counts out=$LOGS/universal-torch-nvml.json init count
    "$PY" -c 'import torch' 2>/dev/null || { result "universal nvml-torch" SKIP "no torch"; return; }
    tmo 120 "$PY" "$UNI/torch_nvml.py" >"$LOGS/universal-torch-nvml.native" 2>"$LOGS/universal-torch-nvml.native.err" ||
        { result "universal nvml-torch" FAIL "native run failed: $(tail -n 2 "$LOGS/universal-torch-nvml.native.err" | tr '\n' ' ' | cut -c1-200)"; return; }
    rm -f "$c" "$c".*
    if ! tmo 120 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$c" "$PY" "$UNI/torch_nvml.py" >"$out" 2>"$LOGS/universal-torch-nvml.err"; then
        result "universal nvml-torch" FAIL "under the shim: $(tail -n 2 "$LOGS/universal-torch-nvml.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    init=$(( $(shim_count "$c" nvmlInit) + $(shim_count "$c" nvmlInit_v2) ))
    count=$(shim_count "$c" nvmlDeviceGetCount_v2)
    local same
    same=$("$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(int(a["nvml_count"]==b["nvml_count"]==b["cuda_count"]))' \
        "$LOGS/universal-torch-nvml.native" "$out" 2>/dev/null)
    if [ "$same" = 1 ] && [ "$init" -ge 1 ] && [ "$count" -ge 1 ]; then
        result "universal nvml-torch" PASS "NVML device count as native; shim counted nvmlInit* $init, nvmlDeviceGetCount_v2 $count, $(shim_lines "$c" '^nvml') NVML APIs; $(tr -d '\n' <"$out" | cut -c1-160)"
    else
        result "universal nvml-torch" FAIL "same=$same init=$init count=$count: $(tr -d '\n' <"$out" | cut -c1-200)"
    fi
}

check_universal_cublas() {
    local c=$LOGS/universal-cublas.counts log=$LOGS/universal-cublas.log bad="" n=0 name want got
    "$PY" -c 'import torch' 2>/dev/null || { result "universal cublas" SKIP "no torch"; return; }
    rm -f "$c" "$c".* "$log"
    if ! tmo 120 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$c" CUSHIM_LIBS=driver,runtime,nvml,cublas,cublaslt \
            CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG="$log" "$PY" "$UNI/torch_cublas.py" \
            >"$LOGS/universal-cublas.out" 2>"$LOGS/universal-cublas.err"; then
        result "universal cublas" FAIL "torch.mm under the shim: $(tail -n 2 "$LOGS/universal-cublas.err" "$LOGS/universal-cublas.out" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    [ -s "$log" ] || { result "universal cublas" FAIL "cuBLAS wrote no API log ($log)"; return; }
    # cuBLAS logs each API call as '... function <ret> <name>(<types>) called:'
    grep -oE 'function [^(]* (cublas[A-Za-z0-9_]+)\(' "$log" | sed -E 's/.* (cublas[A-Za-z0-9_]+)\($/\1/' |
        sort | uniq -c >"$LOGS/universal-cublas.logcounts"
    while read -r want name; do
        got=$(shim_count "$c" "$name")
        n=$((n + 1))
        [ "$got" = "$want" ] || bad+="$name log $want shim $got; "
    done <"$LOGS/universal-cublas.logcounts"
    if [ "$n" -eq 0 ]; then
        result "universal cublas" FAIL "no API call in cuBLAS's log: $(head -c 200 "$log" | tr '\n' ' ')"
    elif [ -n "$bad" ]; then
        result "universal cublas" FAIL "counts differ from cuBLAS's log: ${bad:0:200}"
    elif ! grep -qiE 'gemm' "$LOGS/universal-cublas.logcounts"; then
        result "universal cublas" FAIL "no GEMM in cuBLAS's log: $(tr '\n' ' ' <"$LOGS/universal-cublas.logcounts" | cut -c1-200)"
    else
        result "universal cublas" PASS "$n cuBLAS APIs, counts equal cuBLAS's own log ($(grep -iE gemm "$LOGS/universal-cublas.logcounts" | head -n 2 | tr -s ' ' | tr '\n' ';')); $(cat "$LOGS/universal-cublas.out")"
    fi
}

check_universal_nccl() {
    local c=$LOGS/universal-nccl.counts out=$LOGS/universal-nccl.out ndev rc bad="" ranks=0 rank pid sums got want
    "$PY" -c 'import torch' 2>/dev/null || { result "universal nccl" SKIP "no torch"; return; }
    ndev=$("$PY" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null)
    if [ "${ndev:-0}" -lt 2 ]; then result "universal nccl" SKIP "${ndev:-0} GPU(s): needs 2 (the nvidia-h200-x2 kind)"; return; fi
    rm -f "$c" "$c".* "$LOGS"/universal-nccl.*.log
    tmo 150 env LD_PRELOAD="$SHIM" CUSHIM_COUNTS="$c" CUSHIM_LIBS=driver,runtime,nvml,nccl \
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL NCCL_DEBUG_FILE="$LOGS/universal-nccl.%p.log" \
        "$PY" "$UNI/torch_nccl.py" "$((29500 + RANDOM % 400))" >"$out" 2>"$LOGS/universal-nccl.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        result "universal nccl" FAIL "rc $rc: $(tail -n 3 "$LOGS/universal-nccl.err" | tr '\n' ' ' | cut -c1-200)"
        return
    fi
    while read -r rank pid sums; do
        ranks=$((ranks + 1))
        [ "$sums" = "3.0,3.0,3.0,3.0" ] || bad+="rank $rank sums $sums; "
        got=$(cat "$c.$pid" 2>/dev/null | awk -F'\t' '$1 == "ncclAllReduce" { s += $2 } END { print s + 0 }')
        want=$(grep -c 'AllReduce: opCount' "$LOGS/universal-nccl.$pid.log" 2>/dev/null)
        [ "${want:-0}" -ge 4 ] && [ "$got" = "$want" ] || bad+="rank $rank (pid $pid): shim ncclAllReduce $got, NCCL log $want; "
    done < <("$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    l = l.strip()
    if l.startswith("{"):
        d = json.loads(l)
        if "rank" in d: print(d["rank"], d["pid"], ",".join(str(s) for s in d["sums"]))' "$out")
    if [ "$ranks" -ne 2 ]; then
        result "universal nccl" FAIL "$ranks rank reports: $(head -c 200 "$out" | tr '\n' ' ')"
    elif [ -n "$bad" ]; then
        result "universal nccl" FAIL "${bad:0:250}"
    else
        result "universal nccl" PASS "2 ranks, sum 3 x4 on each; each rank's ncclAllReduce count (shim) equals its NCCL COLL log ($(shim_lines "$c" '^nccl') NCCL APIs counted)"
    fi
}

# ub_pin: the command prefix that pins a process to one core (the last one this process may use), if taskset exists
ub_pin() {
    local core
    command -v taskset >/dev/null 2>&1 || return 0
    core=$("$PY" -c 'import os; print(sorted(os.sched_getaffinity(0))[-1])' 2>/dev/null) || return 0
    [ -n "$core" ] && echo "taskset -c $core"
}

check_universal_bench() {
    local exe=$BIN/bench_libs lib r w d s ip out rc tsv=$LOGS/universal-bench.tsv line prc
    local rounds=${UNIV_BENCH_ROUNDS:-11} blocks=${UNIV_BENCH_BLOCKS:-21}
    # shellcheck disable=SC2054 # commas inside one element (a list of libraries)
    local -a pin env_s=(LD_PRELOAD="$SHIM" CUSHIM_LIBS=driver,runtime,nvml,cublas BENCH_LIBS_INPROC="$blocks")
    if ! tmo 60 "${CC:-gcc}" -std=gnu11 -O2 -Wall -o "$exe" "$ROOT/bench/gpu/bench_libs.c" -ldl >"$LOGS/universal-bench.build" 2>&1; then
        result "universal bench" FAIL "build: $(tail -n 2 "$LOGS/universal-bench.build" | tr '\n' ' ')"; return
    fi
    read -r -a pin <<<"$(ub_pin)"
    : >"$tsv"
    : >"$LOGS/universal-bench.err"
    for lib in nvml cublas; do
        # the lookup of the real function checked once without the shim: there both pointers are one function
        out=$(tmo 60 "${pin[@]}" env BENCH_LIBS_INPROC=3 "$exe" "$lib" 2>>"$LOGS/universal-bench.err")
        rc=$?
        if [ $rc -ne 0 ] || ! grep -q 'same_pointer 1' <<<"$out"; then
            printf '%s\t0\tprobe\t\t\t%s\n' "$lib" "rc $rc: $(tr '\t\n' '  ' <<<"$out" | cut -c1-200) $(tail -n 1 "$LOGS/universal-bench.err" | cut -c1-100)" >>"$tsv"
            echo "probe $lib rc $rc: $out" >>"$LOGS/universal-bench.err"
            continue
        fi
        echo "probe $lib rc $rc: $out" >>"$LOGS/universal-bench.err"
        for ((r = 0; r < rounds; r++)); do
            # each round a direct and a shim process, alternately first, both pinned to the same core
            d="" s="" ip=""
            for w in $([ $((r % 2)) = 0 ] && echo "direct shim" || echo "shim direct"); do
                if [ "$w" = direct ]; then
                    d=$(tmo 60 "${pin[@]}" "$exe" "$lib" 2>>"$LOGS/universal-bench.err" | awk '$2 == "ns_per_call" { print $3 }')
                else
                    out=$(tmo 90 "${pin[@]}" env "${env_s[@]}" "$exe" "$lib" 2>>"$LOGS/universal-bench.err")
                    s=$(awk '$2 == "ns_per_call" { print $3 }' <<<"$out")
                    ip=$(grep -m1 ' inproc ' <<<"$out")
                fi
            done
            printf '%s\t%d\t%s\t%s\t%s\t%s\n' "$lib" "$r" "$([ $((r % 2)) = 0 ] && echo direct || echo shim)" \
                "$d" "$s" "$ip" >>"$tsv"
        done
    done
    "$PY" "$UNI/bench_summary.py" "$tsv" --md "$LOGS/universal-bench.md" >"$LOGS/universal-bench.txt" 2>&1
    prc=$?
    line=$(grep -m1 '^DETAIL ' "$LOGS/universal-bench.txt")
    line=${line#DETAIL }
    if [ $prc -eq 0 ]; then
        result "universal bench" PASS "$line; no hook, $rounds rounds${pin[*]:+ pinned (${pin[*]})}, in-process $blocks block pairs (bench/gpu/bench_libs.c)"
    else
        result "universal bench" FAIL "${line:-bench_summary.py rc $prc} (logs/universal-bench.err)"
    fi
}

run_universal() {
    check_universal_nvml_smi
    check_universal_nvml_torch
    check_universal_cublas
    check_universal_nccl
    want univbench || check_universal_bench   # 'univbench' runs it (alone, or after these with 'all')
}
gpu_check universal run_universal
gpu_check univbench check_universal_bench
gpu_check univnccl check_universal_nccl   # the two-rank NCCL part alone (the nvidia-h200-x2 kind)
