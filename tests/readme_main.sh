#!/bin/sh
# readme_main.sh - the README's main command (its first sh block, "Set-up commands"), as the README writes it,
# after the build it starts with: the part after 'tools/test.sh --build-only && ', run from a scratch folder
# that has the checkout's tools/ and this build as build/. Then what the README says of it: the trace file
# opens (strict JSON), its launch names the kernel vecadd, the table of Nsight's cuda_api_sum columns and the
# file's name are printed at exit, and 'tools/cushim stats FILE' prints the same table. So the README's
# first command cannot rot unseen.
# USAGE: readme_main.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
fail() { echo "FAIL: $*"; [ -f "${dir:-/nonexistent}/err" ] && sed 's/^/  err: /' "$dir/err" | head -20; exit 1; }
line=$(sh "$src/tools/readme-command.sh" "$src")
[ -n "$line" ] || fail "no 'bash tools/test.sh --build-only && ...' line in the README's first sh block"
cmd=${line#bash tools/test.sh --build-only && }
file=$(printf '%s\n' "$cmd" | sed -n 's/.*--trace=\([^ ]*\).*/\1/p')
[ -n "$file" ] || fail "the README's command has no --trace=FILE: $cmd"
dir=$(mktemp -d "${TMPDIR:-/tmp}/cushim-readme.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
ln -s "$src/tools" "$dir/tools" && ln -s "$build" "$dir/build" || fail "scratch folder"
cd "$dir" || exit 1
echo "README: $cmd"
env -u LD_PRELOAD CUSHIM_BUILD_DIR="$build" sh -c "$cmd" >out 2>err || fail "exited with $?"
[ -s "$file" ] || fail "no $file"
python3 - "$file" <<'PY' || fail "$file"
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
ev = d['traceEvents']
launches = [e for e in ev if e.get('ph') == 'X' and e.get('name', '').startswith(('cuLaunchKernel', 'cudaLaunchKernel'))]
assert launches, 'no launch event'
assert any('vecadd' in json.dumps(e.get('args', {})) for e in launches), 'no launch names the kernel vecadd'
PY
hdr='Time (%)  *Total Time (ns)  *Num Calls  *Avg (ns)  *Med (ns)  *Min (ns)  *Max (ns)  *StdDev (ns)  *Name'
cat out err | grep -q "$hdr" || fail "no cuda_api_sum table at exit"
cat out err | grep -q "$file.*open it at https://ui.perfetto.dev" || fail "the file's name and how to open it are not printed at exit"
! cat out err | grep -q "record bytes and\|chunks: " || fail "the writer's internals are printed to the user (only at CUSHIM_LOG=info)"
env -u LD_PRELOAD CUSHIM_BUILD_DIR="$build" tools/cushim stats "$file" >stats.out 2>stats.err || fail "cushim stats"
grep -q "$hdr" stats.out || fail "cushim stats printed no table"
grep '^ ' err > t.exit
grep '^ ' stats.out > t.stats
cmp -s t.exit t.stats || fail "cushim stats differs from the table at exit"
echo "PASS: the README's main command"
