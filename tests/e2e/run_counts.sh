#!/bin/sh
# run_counts.sh PRELOAD FAKE_DIR OUT_DIR PROGRAM [ARGS...]
# Runs PROGRAM with the shim preloaded and its call counter on (CUSHIM_COUNTS), while the fake driver and
# runtime (and NVML, NCCL, cuBLAS, cuBLASLt) write their own counts (FAKE_CUDA_COUNTS, FAKE_CUDART_COUNTS,
# FAKE_NVML_COUNTS, FAKE_NCCL_COUNTS, FAKE_CUBLAS_COUNTS, FAKE_CUBLASLT_COUNTS). The program must pass, and the
# shim's file must equal the fakes' files line for line: every call the libraries received was counted by
# the shim exactly once, and the shim counted nothing that did not reach them. Forked children write
# '<file>.<pid>'; each child's files are compared the same way.
set -u
preload=$1 fake=$2 out=$3
shift 3
name=$(basename "$1")${E2E_RUN_TAG-}
dir=$out/$name.counts
rm -rf "$dir"
mkdir -p "$dir"
# run_dropin.sh overrides how the shim comes in: E2E_RUN_PRELOAD, E2E_RUN_LDPATH, E2E_RUN_EXPECT_SHIM.
env LD_PRELOAD="${E2E_RUN_PRELOAD-$preload}" LD_LIBRARY_PATH="${E2E_RUN_LDPATH-$fake}" \
    E2E_EXPECT_SHIM="${E2E_RUN_EXPECT_SHIM-1}" E2E_COUNTS_DIR="$dir" \
    CUSHIM_COUNTS="$dir/shim" FAKE_CUDA_COUNTS="$dir/drv" FAKE_CUDART_COUNTS="$dir/rt" FAKE_NVML_COUNTS="$dir/nvml" \
    FAKE_NCCL_COUNTS="$dir/nccl" FAKE_CUBLAS_COUNTS="$dir/cublas" FAKE_CUBLASLT_COUNTS="$dir/cublaslt" "$@" \
    || { echo "$name failed"; exit 1; }
[ -f "$dir/shim" ] || { echo "$name: the shim wrote no counts file ($dir/shim)"; exit 1; }
status=0
for shimfile in "$dir"/shim "$dir"/shim.*; do
    [ -f "$shimfile" ] || continue
    suffix=${shimfile#"$dir"/shim}
    # E2E_RUN_DRIVER_ONLY=1 (drop-in mode): only driver APIs pass through the shim.
    filter=cat
    [ "${E2E_RUN_DRIVER_ONLY-}" = 1 ] && filter="grep -v ^cuda"
    cat "$dir/drv$suffix" "$dir/rt$suffix" "$dir/nvml$suffix" "$dir/nccl$suffix" "$dir/cublas$suffix" \
        "$dir/cublaslt$suffix" 2>/dev/null | $filter | sort > "$dir/fakes$suffix.sorted"
    $filter "$shimfile" | sort > "$shimfile.sorted"
    if ! diff -u "$dir/fakes$suffix.sorted" "$shimfile.sorted" > "$dir/diff$suffix"; then
        cat "$dir/diff$suffix"
        echo "$name: shim counts$suffix differ from what the fakes received (- fakes, + shim)"
        status=1
    else
        echo "$name: shim counts$suffix equal the fakes' ($(wc -l < "$shimfile.sorted") APIs," \
             "$(awk -F'\t' '{s+=$2} END {print s+0}' "$shimfile.sorted") calls)"
    fi
done
for f in "$dir"/drv.*; do
    [ -f "$f" ] || continue
    [ -f "$dir/shim${f#"$dir"/drv}" ] || { echo "$name: no shim counts for child ${f#"$dir"/drv.}"; status=1; }
done
exit $status
