#!/bin/sh
# install_check.sh BUILD_DIR VECADD - 'cmake --install' into a fresh prefix lays out what users, plugin
# vendors and the launcher rely on (shim, drop-in, fake driver, SDK headers, pkg-config file, CMake package,
# launcher and its cushim-info helper, shipped plugins), the installed launcher (the compiled program, not a
# script) runs the sample against the installed fake driver, describes the installed plugins and takes flags
# derived from their declared options, and the tree still works once moved elsewhere.
set -eu
build=$1 vecadd=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
p=$t/prefix
cmake --install "$build" --prefix "$p" >/dev/null
for f in lib/libcushim.so lib/cushim/dropin/libcuda.so.1 lib/cushim/fake/libcuda.so.1 \
         include/cushim/cushim.h include/cushim/cushim_meta.h include/cushim/cushim_io.h include/cushim/cushim_params.h \
         include/cushim/cushim_api_ids.h include/cushim/cushim_cuda_headers.h include/cushim/cushim_results.inc \
         lib/cushim/plugins/faultinject.so bin/cushim \
         libexec/cushim/cushim-info share/cushim/apis.tsv share/cushim/procaddr.tsv lib/pkgconfig/cushim.pc \
         lib/cmake/cushim/cushimConfig.cmake lib/cmake/cushim/cushimConfigVersion.cmake; do
  [ -e "$p/$f" ] || { echo "install_check: $f missing from the installed tree" >&2; exit 1; }
done
# memlimit's usage helper, found by the installed launcher ('cushim usage').
if [ -f "$build/plugins/memlimit.so" ]; then
  [ -x "$p/libexec/cushim/cushim-usage" ] || { echo "install_check: libexec/cushim/cushim-usage missing" >&2; exit 1; }
  "$p/bin/cushim" usage "$t/no-such-budget" 2>&1 | grep -q 'budget region: cannot open' \
    || { echo "install_check: the installed 'cushim usage' did not reach its helper" >&2; exit 1; }
fi
# Every plugin the build ships is installed where the shim looks for a NAME.
nplugins=0
for so in "$build"/plugins/*.so; do
  [ -e "$so" ] || continue
  nplugins=$((nplugins + 1))
  [ -f "$p/lib/cushim/plugins/$(basename "$so")" ] || { echo "install_check: lib/cushim/plugins/$(basename "$so") missing" >&2; exit 1; }
done

"$p/bin/cushim" run --fake --counts="$t/counts.tsv" -- "$vecadd" >/dev/null
grep -q '^cuLaunchKernel	1$' "$t/counts.tsv" || { echo "install_check: the installed shim did not count the launch" >&2; cat "$t/counts.tsv" >&2; exit 1; }
# The installed launcher uses the installed files only.
"$p/bin/cushim" where > "$t/where"
if awk -F'\t' -v p="$p/" 'index($2, p) != 1 && !($1 == "plugins" && $2 == "?") { bad = 1; print } END { exit bad }' "$t/where" >&2; then :
else echo "install_check: 'cushim where' names files outside the prefix" >&2; exit 1; fi
"$p/bin/cushim" version | grep -q '^cushim .*, CUDA .* headers, SDK ABI [0-9]*\.[0-9]*$' \
  || { echo "install_check: cushim version: $("$p/bin/cushim" version 2>&1)" >&2; exit 1; }
"$p/bin/cushim" plugins > "$t/plugins"
[ "$(grep -c "^  file: $p/lib/cushim/plugins/" "$t/plugins")" = "$nplugins" ] \
  || { echo "install_check: cushim plugins did not describe the $nplugins installed plugin(s):" >&2; cat "$t/plugins" >&2; exit 1; }
# A shipped plugin by name: the installed shim finds lib/cushim/plugins/faultinject.so.
if CUSHIM_PLUGINS='faultinject:rule=cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2' \
   "$p/bin/cushim" run --fake -- "$vecadd" >/dev/null 2>"$t/fault.err"; then
  echo "install_check: vecadd passed although the installed faultinject plugin should fail its second allocation" >&2
  cat "$t/fault.err" >&2; exit 1
fi
grep -q 'failed: CUDA_ERROR_OUT_OF_MEMORY' "$t/fault.err" || { echo "install_check: no injected fault" >&2; cat "$t/fault.err" >&2; exit 1; }
# The launcher is the compiled program (tools/launcher/), and its plugin flags come from the installed plugins.
[ "$(head -c 4 "$p/bin/cushim" | tr -d '\177')" = ELF ] || { echo "install_check: bin/cushim is not the compiled launcher" >&2; exit 1; }
"$p/bin/cushim" help run > "$t/runhelp"
for so in "$p"/lib/cushim/plugins/*.so; do
  [ -e "$so" ] || continue
  grep -q "^  --$(basename "$so" .so)-" "$t/runhelp" \
    || { echo "install_check: cushim help run lists no flag of $(basename "$so")" >&2; exit 1; }
done
if "$p/bin/cushim" run --fake --faultinject-rule='cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2' -- "$vecadd" >/dev/null 2>"$t/fault2.err" \
   || ! grep -q 'failed: CUDA_ERROR_OUT_OF_MEMORY' "$t/fault2.err"; then
  echo "install_check: --faultinject-rule (a flag derived from the installed plugin) injected no fault" >&2
  cat "$t/fault2.err" >&2; exit 1
fi

# Relocatable: the launcher, pkg-config file and CMake package locate the prefix from their own position.
mv "$p" "$t/moved"
"$t/moved/bin/cushim" run --fake --counts="$t/counts2.tsv" -- "$vecadd" >/dev/null
grep -q '^cuLaunchKernel	1$' "$t/counts2.tsv" || { echo "install_check: the moved tree's shim did not count the launch" >&2; exit 1; }
inc=$(PKG_CONFIG_PATH="$t/moved/lib/pkgconfig" pkg-config --cflags cushim)
inc=${inc%% *}   # pkg-config ends it with a space
[ -f "${inc#-I}/cushim/cushim.h" ] || { echo "install_check: the moved tree's pkg-config gives '$inc'" >&2; exit 1; }
echo "install_check: installed tree complete ($nplugins shipped plugin(s)); launcher + shim + fake driver ran vecadd, with faultinject (by CUSHIM_PLUGINS and by a derived flag), and after a move"
