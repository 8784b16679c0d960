#!/bin/sh
# run_dropin.sh DROPIN_DIR FAKE_DIR OUT_DIR DIRECT_PROGRAM CUDART_PROGRAM
# Drop-in mode: no LD_PRELOAD; the shim's libcuda.so.1 comes first on LD_LIBRARY_PATH and loads the real
# (here: fake) driver (1) by the path in CUSHIM_REAL_LIBCUDA, (2) without it, from later on the path.
# Each program must pass and the shim's counts must equal what the fakes received (run_counts.sh).
# e2e_cudart cannot reach the hook API (the drop-in is loaded RTLD_LOCAL by the runtime), so it is judged
# by the counts alone; only driver APIs are compared (drop-in mode does not interpose libcudart).
set -u
dropin=$1 fake=$2 out=$3 direct=$4 cudart=$5
here=$(dirname "$0")
[ -f "$dropin/libcuda.so.1" ] || { echo "no drop-in library at $dropin/libcuda.so.1"; exit 1; }
status=0
export E2E_RUN_PRELOAD=
export E2E_DROPIN=1
export E2E_RUN_DRIVER_ONLY=1   # the runtime library is the real (fake) one: not interposed
export E2E_RUN_LDPATH="$dropin"
export CUSHIM_REAL_LIBCUDA="$fake/libcuda.so.1"
E2E_RUN_TAG=.dropin-path E2E_RUN_EXPECT_SHIM=1 sh "$here/run_counts.sh" - "$fake" "$out" "$direct" || status=1
E2E_RUN_TAG=.dropin-path E2E_RUN_EXPECT_SHIM= sh "$here/run_counts.sh" - "$fake" "$out" "$cudart" || status=1
unset CUSHIM_REAL_LIBCUDA
export E2E_RUN_LDPATH="$dropin:$fake"
E2E_RUN_TAG=.dropin-search E2E_RUN_EXPECT_SHIM=1 sh "$here/run_counts.sh" - "$fake" "$out" "$direct" || status=1
E2E_RUN_TAG=.dropin-search E2E_RUN_EXPECT_SHIM= sh "$here/run_counts.sh" - "$fake" "$out" "$cudart" || status=1
exit $status
