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
         include/cushim/cushim_api_ids.h include/cushim/cushim_results.inc bin/cushim share/cushim/apis.tsv share/cushim/procaddr.tsv; do
  [ -e "$p/$f" ] || { echo "install_check: $f missing from the installed tree" >&2; exit 1; }
done
"$p/bin/cushim" run --fake --counts="$p/counts.tsv" -- "$vecadd" >/dev/null
grep -q '^cuLaunchKernel	1$' "$p/counts.tsv" || { echo "install_check: the installed shim did not count the launch" >&2; cat "$p/counts.tsv" >&2; exit 1; }
echo "install_check: installed tree complete; installed launcher + shim + fake driver ran vecadd"
