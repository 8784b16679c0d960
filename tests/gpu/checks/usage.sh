# usage.sh - GPU check of 'cushim usage' (plugins/memlimit/usage.c, docs/plugins/memlimit.md "Memory by library").
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu usage` runs it (one GPU, about a minute).
#
#   usage bylib   PyTorch training (an fp32 MLP with AdamW, 20 steps) with 16 GiB held and a bf16 cuBLAS matmul,
#                 under memlimit in a shared budget (limit 70 GiB): with everything live, `cushim usage
#                 --prometheus` attributes at least 95% of NVML's per-process used memory (nvidia-smi
#                 --query-compute-apps=used_memory) to named libraries (not '(unknown)', '(other)' nor
#                 '(not attributed)'); the detail lists the libraries, the share of memlimit's own figure, and
#                 NVML's figure minus what memlimit charged (the context's own memory: code, stacks, heaps)
#                 (the `cushim usage --by-library` table is in $LOGS/usage-bylib.err)

check_usage() {
    local plugin=$BUILD_DIR/plugins/memlimit.so tool=$BUILD_DIR/tools/cushim-usage name=usagegpu$$ out
    out=$WORK/usage-bylib
    if [ ! -f "$plugin" ] || [ ! -x "$tool" ]; then
        result "usage bylib" FAIL "$plugin or $tool not built (tools/build-gpu-bundle.sh)"
        return
    fi
    rm -f "/dev/shm/cushim-budget-$name"
    tmo 300 env LD_PRELOAD="$SHIM" CUSHIM_PLUGINS="$plugin:limit=70GiB,budget=$name,by_library=true" \
        "$PY" "$HERE/usage/us_bylib.py" "$tool" "$name" >"$out" 2>"$LOGS/usage-bylib.err"
    rm -f "/dev/shm/cushim-budget-$name"
    cp "$out" "$LOGS/usage-bylib.out" 2>/dev/null
    if grep -q '^skip' "$out"; then
        result "usage bylib" SKIP "$(sed -n 's/^skip //p' "$out")"
        return
    fi
    awk '/^nvml /{n=$2} /^named /{m=$2} /^charged /{c=$2} /^lib /{l = l sprintf("%s %.0f MiB; ", $2, $3 / 1048576)}
         END {
            if (n == "" || m == "" || n == 0) { print "FAIL no figures (see usage-bylib.err)"; exit }
            r = m / n
            printf "%s named libraries %.0f MiB = %.1f%% of NVML %.0f MiB (%.1f%% of memlimit'"'"'s %.0f MiB; NVML - charged = %.0f MiB): %s\n",
                   (r >= 0.95 ? "PASS" : "FAIL"), m / 1048576, 100 * r, n / 1048576, c ? 100 * m / c : 0,
                   c / 1048576, (n - c) / 1048576, l }' "$out" |
        { read -r st rest; result "usage bylib" "$st" "$rest"; }
}

gpu_check usage check_usage
