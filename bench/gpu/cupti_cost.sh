#!/usr/bin/env bash
# bench/gpu/cupti_cost.sh - what CUPTI's parts cost each CUDA call of the PyTorch step (docs/benchmarks.md "What
# --trace-gpu's CUPTI costs"): tests/gpu/trace/trace_gpu.py bench STEPS under cushim run --trace, each
# configuration a fresh process, ROUNDS rounds in rotated order:
#   trace         --trace alone (no CUPTI)
#   gpu           --trace + CUPTI's kernel, memcpy and memset records (tests/gpu/trace/cupti_activity.c as the
#                 injection library, CUPTI_ACTIVITY_KINDS=gpu)
#   gpu+cb        + an empty callback subscriber on the launch, copy and set functions (what --trace-gpu links with)
#   trace-gpu     --trace --trace-gpu (the plugin's own CUPTI: GPU records + that subscriber + its work)
#   gpu+api       --trace + CUPTI's driver and runtime API records too (CUPTI activity tracing alone, as tracebench)
# The trace's summary at exit times every call from inside the shim, CUPTI's own work in the driver included: per
# configuration the median over processes of each API's median (ns), and of the step.
# USAGE: bash bench/gpu/cupti_cost.sh [BUILD_DIR]   (ROUNDS=3 STEPS=300 CONFIGS="...", OUT=dir for cupti_cost.md;
#   PY: the python; CUPTI_COST_LIB: an injection library built already - bench/gpu/dryrun.sh gives stand-ins)
# Exit status 1 when a process failed or a configuration has no figures.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
OUTD=${OUT:-/tmp}
mkdir -p "$OUTD" || exit 1
W=$(mktemp -d /tmp/cupti_cost.XXXXXX)
CUDA=${CUDA_HOME:-/usr/local/cuda}
inc=$CUDA/extras/CUPTI/include
[ -f "$inc/cupti.h" ] || inc=$CUDA/include
if [ -n "${CUPTI_COST_LIB:-}" ]; then
  cp "$CUPTI_COST_LIB" "$W/libca.so" || exit 1
else
  gcc -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -I"$inc" -I"$CUDA/include" \
    -o "$W/libca.so" tests/gpu/trace/cupti_activity.c -L"$CUDA/lib64" -L"$CUDA/extras/CUPTI/lib64" -lcupti \
    -Wl,-rpath,"$CUDA/lib64:$CUDA/extras/CUPTI/lib64" || { echo "cupti_cost: cannot build the injection library" >&2; exit 1; }
fi
failed=0
read -r -a configs <<<"${CONFIGS:-trace gpu gpu+cb trace-gpu gpu+api}"
apis=(cuCtxGetCurrent cudaGetLastError cuCtxGetDevice_v2 cudaGetDevice cuDevicePrimaryCtxGetState cuLaunchKernel)
PY=${PY:-python3}
for ((r = 0; r < ${ROUNDS:-3}; r++)); do
  n=${#configs[@]}
  for ((i = 0; i < n; i++)); do
    c=${configs[$(((i + r) % n))]}
    extra=() envs=()
    case $c in
      trace) ;;
      gpu) envs=(CUDA_INJECTION64_PATH="$W/libca.so" CUPTI_ACTIVITY_KINDS=gpu) ;;
      gpu+cb) envs=(CUDA_INJECTION64_PATH="$W/libca.so" CUPTI_ACTIVITY_KINDS=gpu+cb) ;;
      gpu+api) envs=(CUDA_INJECTION64_PATH="$W/libca.so") ;;
      trace-gpu) extra=(--trace-gpu) ;;
      *) echo "cupti_cost: unknown configuration $c" >&2; exit 2 ;;
    esac
    env CUSHIM_BUILD_DIR="$BUILD" "${envs[@]}" CUPTI_ACTIVITY_OUT="$W/$c.$r.cupti" timeout 300 tools/cushim run \
      --trace="$W/t.json" "${extra[@]}" -- "$PY" tests/gpu/trace/trace_gpu.py bench "${STEPS:-300}" \
      >"$W/$c.$r.out" 2>"$W/$c.$r.err" || { echo "cupti_cost: $c round $r failed: $(tail -n 2 "$W/$c.$r.err" | tr '\n' ' ')" >&2; failed=1; }
    rm -f "$W/t.json"
  done
done
med() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }
{
  echo "# CUPTI's parts per call, $(date -u '+%Y-%m-%d %H:%M UTC'), ${ROUNDS:-3} rounds of ${STEPS:-300} steps"
  echo
  printf '| configuration | step (ns) |'; for a in "${apis[@]}"; do printf ' %s med (ns) |' "$a"; done; echo
  printf '| --- | ---: |'; for a in "${apis[@]}"; do printf ' ---: |'; done; echo
  for c in "${configs[@]}"; do
    printf '| %s | %s |' "$c" "$(cat "$W/$c".*.out 2>/dev/null | awk '/^median_step_ns/ {print $2}' | med)"
    for a in "${apis[@]}"; do
      # the at-exit table: ... Med (ns) is the 5th column, the name the last
      printf ' %s |' "$(for f in "$W/$c".*.err; do awk -v a="$a" '$NF == a && NF == 9 {gsub(",", "", $5); print $5}' "$f"; done | med)"
    done
    echo
  done
  echo
  for f in "$W"/*.cupti; do [ -f "$f" ] && echo "$(basename "$f"): $(tr '\n' ' ' <"$f")"; done
} | tee "$OUTD/cupti_cost.md"
# the processes' logs (the trace's table at exit), named without '+'
mkdir -p "$OUTD/cupti_cost"
for f in "$W"/*.err "$W"/*.out; do cp "$f" "$OUTD/cupti_cost/$(basename "$f" | tr '+' '_')"; done
tar czf "$OUTD/cupti_cost.logs.tar.gz" -C "$OUTD" cupti_cost && rm -rf "$OUTD/cupti_cost"
# every configuration has a step time and at least one API's figure
for c in "${configs[@]}"; do
  grep -Eq "^\| ${c//+/\\+} \| [0-9.]+ \|.* [0-9.]+ \|" "$OUTD/cupti_cost.md" || { echo "cupti_cost: $c has no figures" >&2; failed=1; }
done
rm -rf "$W"
exit $failed
