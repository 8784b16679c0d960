#!/usr/bin/env bash
# fuzz.sh - the bounded fuzzing stage: builds each libFuzzer harness in tests/fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined) and runs it for FUZZ_SECONDS (default 30) each, FUZZ_JOBS (default: the
# number of cores) harnesses at a time (libFuzzer runs on one core).
# Fails if a harness does not build, crashes, leaks, hangs (FUZZ_TIMEOUT s for one input, default 10) or
# trips a FUZZ_CHECK; the input that did it is kept in build-fuzz/artifacts/<name>/ (replay it with
# `build-fuzz/fuzz_<name> <file>`). Inputs found are kept in build-fuzz/corpus/<name>/ between runs.
#
#   bash tools/fuzz.sh [NAME...]        all harnesses, or only those named
#   bash tools/fuzz.sh --standalone     those that need no configured build tree (tools/test.sh runs them while
#                                       the pinned headers download), --build-tree the others
#   FUZZ_SECONDS=300 bash tools/fuzz.sh cfg
#
# Needs Debian's clang (14 on Debian 12: its libclang-common-14-dev ships libclang_rt.fuzzer); as root it is
# installed when missing (CUSHIM_NO_INSTALL=1 skips that).
#
# Adding a harness (e.g. for the plugin list or the launcher's options):
#   1. write tests/fuzz/fuzz_<name>.c defining
#          int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#      that turns the bytes into the parser's input (fuzz_common.h: fuzz_cstr gives an exact-size C string),
#      calls the parser, and checks with FUZZ_CHECK what must hold for every input (fuzz_check_line for a
#      log line the shim would print). The parser must be reachable without the rest of the shim: expose it
#      as a hidden function (declared in its module's header in runtime/), pure where possible (no environment, no
#      files), as env_parse is;
#   2. add one line to HARNESSES below: "<name> <sources...>" (paths from the repository root, the harness
#      itself first; the runtime's sources it needs after it);
#   3. optionally add seed inputs, one file each, in tests/fuzz/corpus/<name>/.
set -euo pipefail
cd "$(dirname "$0")/.."

# The selector harness links the generated metadata and the library table: the configured build tree's
# cushim_symver.h and the fetched nvml.h (tools/test.sh builds build/ first; FUZZ_BUILD names another).
fuzz_build=${FUZZ_BUILD:-build}
HARNESSES=(
  "cfg tests/fuzz/fuzz_cfg.c runtime/env.c"
  "opts tests/fuzz/fuzz_opts.c runtime/options.c runtime/optvalue.c runtime/env.c runtime/log.c runtime/once.c"
  "firule tests/fuzz/fuzz_firule.c plugins/faultinject/rules.c"
  "limits tests/fuzz/fuzz_limits.c plugins/memlimit/ml_limits.c plugins/memlimit/ml_ovopts.c plugins/smlimit/limitspec.c plugins/common/visible.c -Iplugins/common"
  "usage tests/fuzz/fuzz_usage.c plugins/memlimit/usage.c plugins/memlimit/ml_budget.c plugins/memlimit/ml_limits.c plugins/common/region.c plugins/common/visible.c -DCUSHIM_USAGE_NO_MAIN -Iplugins/memlimit -Iplugins/common -Iplugins/smlimit"
  "stats tests/fuzz/fuzz_stats.c tools/cushim-stats.c tools/stats-nvtx.c tools/stats-pf.c plugins/trace/lib/tr_stats.c plugins/trace/lib/tr_json.c -DCUSHIM_STATS_NO_MAIN -lz -lm -l:libyajl_s.a"
  "jsonstr tests/fuzz/fuzz_jsonstr.c plugins/trace/lib/tr_json.c"
  "tpath tests/fuzz/fuzz_tpath.c plugins/trace/tr_path.c"
  "flight tests/fuzz/fuzz_flight.c plugins/flight/fl_read.c plugins/common/region.c plugins/common/visible.c -Iplugins/flight -Iplugins/common"
  "lua tests/fuzz/fuzz_lua.c plugins/lua/lua.c plugins/lua/lp_hooks.c plugins/lua/lp_watch.c plugins/lua/lp_state.c plugins/lua/lp_gen.c plugins/lua/lp_bridge.c plugins/lua/lp_call.c plugins/lua/lp_params.c plugins/lua/lp_values.c plugins/lua/lp_sandbox.c plugins/lua/lp_pattern.c plugins/lua/lp_pmatch.c plugins/lua/lp_budget.c plugins/lua/lp_shared.c plugins/lua/lp_report.c plugins/lua/lp_engine.c plugins/lua/lp_load.c -Iplugins/lua -I/usr/include/lua5.4"
  "select tests/fuzz/fuzz_select.c runtime/select.c runtime/api.c runtime/libs.c runtime/log.c runtime/env.c runtime/once.c generated/cuda-${CUSHIM_CUDA_VERSION:-13.0}/cushim_meta.c -I$fuzz_build/runtime -I$fuzz_build/cuda-headers/nvml-13.0/include"
  "remote tests/fuzz/fuzz_remote.c remote/rm_wire.c remote/rm_plan.c remote/rm_special.c remote/rm_jit.c remote/rm_codec.c remote/rm_num.c remote/rm_arena.c remote/rm_auth.c remote/rm_sock.c remote/rm_shm.c remote/rm_meta_gen.c generated/cuda-${CUSHIM_CUDA_VERSION:-13.0}/cushim_meta.c -Iremote -I$fuzz_build/cuda-headers/nvml-13.0/include -lcrypto"
)

seconds=${FUZZ_SECONDS:-30}
per_input=${FUZZ_TIMEOUT:-10}
cuda_version=${CUSHIM_CUDA_VERSION:-13.0}
cuda_root=${CUSHIM_CUDA_ROOT:-/usr/local/cuda}
out=build-fuzz

if ! command -v clang > /dev/null; then
  if [ "$(id -u)" = 0 ] && [ "${CUSHIM_NO_INSTALL:-0}" != 1 ]; then
    echo "fuzz.sh: installing clang"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends clang > /dev/null
  else
    echo "fuzz.sh: clang not found (apt-get install clang)" >&2
    exit 1
  fi
fi

cflags=(-g -O1 -std=gnu11 -Wall -Wextra -Werror -Wno-deprecated-declarations
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
        -Iruntime -Isdk/include -Isdk/include/cushim -Itests/fuzz -Iplugins/faultinject -Iplugins/trace -Iplugins/trace/lib -Iplugins/memlimit -Iplugins/smlimit
        "-Igenerated/cuda-$cuda_version" "-I$cuda_root/include")

group=""
case "${1:-}" in
  --standalone|--build-tree) group=$1; shift ;;
esac
want=("$@")
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
mkdir -p "$out"
# fuzz_one NAME SRC...: build and run one harness; its output in $out/fuzz_NAME.{build,log}, status in .status
fuzz_one() {
  local name=$1
  shift
  local corpus=$out/corpus/$name artifacts=$out/artifacts/$name seeds=()
  if ! clang "${cflags[@]}" -o "$out/fuzz_$name" "$@" -ldl -lpthread > "$out/fuzz_$name.build" 2>&1; then
    echo build > "$out/fuzz_$name.status"
    return
  fi
  mkdir -p "$corpus" "$artifacts"
  [ -d "tests/fuzz/corpus/$name" ] && seeds=("tests/fuzz/corpus/$name")
  if "$out/fuzz_$name" -max_total_time="$seconds" -timeout="$per_input" -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "${seeds[@]}" > "$out/fuzz_$name.log" 2>&1; then
    echo ok > "$out/fuzz_$name.status"
  else
    echo run > "$out/fuzz_$name.status"
  fi
}
names=()
running=0
for h in "${HARNESSES[@]}"; do
  read -r -a words <<< "$h"
  name=${words[0]}
  if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $name "* ]]; then
    continue
  fi
  case "$group:$h" in
    "--standalone:"*" -I$fuzz_build/"*) continue ;;
    --build-tree:*" -I$fuzz_build/"*) ;;
    --build-tree:*) continue ;;
  esac
  names+=("$name")
  rm -f "$out/fuzz_$name.status"
  echo "=== fuzz_$name: build and ${seconds}s"
  fuzz_one "${words[@]}" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
[ ${#names[@]} -gt 0 ] || { echo "fuzz.sh: no harness named: ${want[*]} ${group}" >&2; exit 1; }
failed=0
for name in "${names[@]}"; do
  case $(cat "$out/fuzz_$name.status" 2>/dev/null) in
    ok) grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$out/fuzz_$name.log" | sed "s/^/fuzz_$name: /" ;;
    build)
      cat "$out/fuzz_$name.build"
      echo "fuzz.sh: fuzz_$name did not build" >&2
      failed=1 ;;
    *)
      tail -n 40 "$out/fuzz_$name.log"
      echo "fuzz.sh: fuzz_$name failed; the input is in $out/artifacts/$name/ (full log: $out/fuzz_$name.log)" >&2
      failed=1 ;;
  esac
done
[ $failed -eq 0 ] || exit 1
echo "fuzz.sh: ${#names[@]} harness(es) ran ${seconds}s each without a failure ($jobs at a time)"
