#!/bin/sh
# install_check.sh BUILD_DIR VECADD - 'cmake --install' into a fresh prefix lays out what users and the
# launcher rely on, and the installed launcher runs the sample against the installed fake driver.
set -eu
build=$1 vecadd=$2
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p" >/dev/null
for f in lib/libcushim.so lib/cushim/dropin/libcuda.so.1 lib/cushim/fake/libcuda.so.1 \
         include/cushim/cushim.h include/cushim/cushim_meta.h include/cushim/cushim_params.h \
         include/cushim/cushim_api_ids.h include/cushim/cushim_results.inc bin/cushim share/cushim/apis.tsv share/cushim/procaddr.tsv \
         lib/cushim/plugins/faultinject.so; do
  [ -e "$p/$f" ] || { echo "install_check: $f missing from the installed tree" >&2; exit 1; }
done
"$p/bin/cushim" run --fake --counts="$p/counts.tsv" -- "$vecadd" >/dev/null
grep -q '^cuLaunchKernel	1$' "$p/counts.tsv" || { echo "install_check: the installed shim did not count the launch" >&2; cat "$p/counts.tsv" >&2; exit 1; }
# A shipped plugin by name: the installed shim finds lib/cushim/plugins/faultinject.so.
if CUSHIM_PLUGINS='faultinject:rule=cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2' \
   "$p/bin/cushim" run --fake -- "$vecadd" >/dev/null 2>"$p/fault.err"; then
  echo "install_check: vecadd passed although the installed faultinject plugin should fail its second allocation" >&2
  cat "$p/fault.err" >&2; exit 1
fi
grep -q 'failed: CUDA_ERROR_OUT_OF_MEMORY' "$p/fault.err" || { echo "install_check: no injected fault" >&2; cat "$p/fault.err" >&2; exit 1; }
echo "install_check: installed tree complete; installed launcher + shim + fake driver ran vecadd, and with faultinject"
