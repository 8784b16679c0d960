#!/usr/bin/env bash
# abi-snapshot.sh MAJOR.MINOR > tests/sdk/abi/MAJOR.MINOR.c
#
# Writes the SDK's ABI as it stands in sdk/include/cushim/*.h, as a C test that pins it: for every field
# of every public struct its offset, size and type (_Static_assert with offsetof, sizeof and
# __builtin_types_compatible_p), every integer constant (the CUSHIM_* macros and the enumerators) with
# its value, and the two string names a program looks up (the plugin entry point, cushim_host_get).
# Run it once when a version is released; the file it writes is never edited afterwards. Every released
# version's file is compiled and run against the current headers (tests/sdk/CMakeLists.txt, test
# sdk_abi): a field that moves, shrinks or changes type, a constant that changes value, anything
# removed, fails the build - what the append-only rule (docs/plugin-sdk.md "ABI rules") promises.
# What may change in a minor release is left out: CUSHIM_ABI_MINOR, CUSHIM_ABI_VERSION and the
# structs' total sizes (they grow by appending).
#
# Needs gcc and gdb (the field list and types come from gdb's 'ptype /o' of a build with -g).
set -euo pipefail
[ $# -eq 1 ] && [[ $1 =~ ^[0-9]+\.[0-9]+$ ]] || { echo "usage: $0 MAJOR.MINOR" >&2; exit 2; }
ver=$1
src=$(cd "$(dirname "$0")/.." && pwd)
inc=$src/sdk/include
hdrs=("$inc/cushim/cushim.h" "$inc/cushim/cushim_meta.h")
cc=${CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

maj=$(sed -n 's/^#define CUSHIM_ABI_MAJOR \([0-9]*\)$/\1/p' "$inc/cushim/cushim.h")
min=$(sed -n 's/^#define CUSHIM_ABI_MINOR \([0-9]*\)$/\1/p' "$inc/cushim/cushim.h")
[ "$maj.$min" = "$ver" ] || { echo "$0: the headers say ABI $maj.$min, not $ver" >&2; exit 1; }

# The public structs: every 'typedef struct NAME {' of the headers.
structs=$(sed -n 's/^typedef struct \(cushim_[a-z0-9_]*\) {.*/\1/p; s/^struct \(cushim_[a-z0-9_]*\) {.*/\1/p' "${hdrs[@]}" | sort -u)
[ -n "$structs" ] || { echo "$0: no struct found" >&2; exit 1; }
{
  echo '#include <cushim/cushim.h>'
  for s in $structs; do echo "struct $s *v_$s;"; done
  echo 'int main(void) { return 0; }'
} > "$tmp/t.c"
"$cc" -g -O0 -I"$inc" "$tmp/t.c" -o "$tmp/t"
gdbargs=()
for s in $structs; do gdbargs+=(-ex "ptype /o struct $s"); done
gdb -nx -batch "${gdbargs[@]}" "$tmp/t" > "$tmp/ptype" 2>&1

# Integer constants: object-like CUSHIM_* macros that are integer constant expressions, and every enumerator.
macros=$("$cc" -dM -E -I"$inc" -x c - <<<'#include <cushim/cushim.h>' | sed -n 's/^#define \(CUSHIM_[A-Z0-9_]*\) .*/\1/p' | sort -u)
enums=$(sed -n 's/^ *\(CUSHIM_[A-Z0-9_]*\) *\(=[^,]*\)\?,\?\( *\/\*.*\)\?$/\1/p' "${hdrs[@]}" | sort -u)
consts=""
for n in $macros $enums; do
  case $n in CUSHIM_ABI_MINOR|CUSHIM_ABI_VERSION|CUSHIM_H|CUSHIM_META_H) continue ;; esac
  printf '#include <cushim/cushim.h>\nenum { probe_ = (%s) };\n' "$n" > "$tmp/c.c"
  if "$cc" -fsyntax-only -I"$inc" "$tmp/c.c" 2>/dev/null; then consts+="$n "; fi
done
{
  echo '#include <stdio.h>'
  echo '#include <cushim/cushim.h>'
  echo 'int main(void) {'
  for n in $consts; do echo "    printf(\"%s %lld\\n\", \"$n\", (long long)($n));"; done
  echo '    return 0; }'
} > "$tmp/v.c"
"$cc" -I"$inc" "$tmp/v.c" -o "$tmp/v"

cat <<EOF
/*
 * SDK ABI $ver as released: written by tools/abi-snapshot.sh $ver from the headers of sdk/include/cushim,
 * never edited.
 * Compiled and run against the current headers (test sdk_abi): a field that moved, shrank or changed
 * type, a constant with another value, anything removed, fails. Appending is what a minor release may do.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cushim/cushim.h>

#define ABI_FIELD(T, F, OFF, SIZE, ...)                                                      \\
    _Static_assert(offsetof(T, F) == (OFF), #T "." #F ": offset");                           \\
    _Static_assert(sizeof(((T *)0)->F) == (SIZE), #T "." #F ": size");                       \\
    _Static_assert(__builtin_types_compatible_p(__typeof__(((T *)0)->F), __VA_ARGS__), #T "." #F ": type");
#define ABI_CONST(N, V) _Static_assert((long long)(N) == (V##LL), #N);

_Static_assert(CUSHIM_ABI_MAJOR == $maj, "another major version: this file pins $ver");
_Static_assert(CUSHIM_ABI_MINOR >= $min, "an older minor than $ver");
EOF
echo
# ptype /o lines: '/*   OFF   |   SIZE */    TYPE NAME;'; nested struct/union members would be indented further
# (none today: refuse rather than pin them wrongly).
awk -v structs="$structs" '
  /type = struct / { s = $0; sub(/.*type = struct /, "", s); sub(/ .*/, "", s); next }
  /^\/\* *[0-9]+ *\| *[0-9]+ \*\// {
    line = $0
    off = line; sub(/^\/\* */, "", off); sub(/ *\|.*/, "", off)
    size = line; sub(/^[^|]*\| */, "", size); sub(/ *\*\/.*/, "", size)
    decl = substr(line, index(line, "*/") + 2); sub(/^ +/, "", decl); sub(/;$/, "", decl)
    if (decl ~ /[{}]/ || decl ~ /:/) { print "abi-snapshot: cannot pin " s ": " decl > "/dev/stderr"; exit 1 }
    if (match(decl, /\(\*[A-Za-z_][A-Za-z0-9_]*\)/)) {          # a function pointer: (*name)(...)
      name = substr(decl, RSTART + 2, RLENGTH - 3)
      type = substr(decl, 1, RSTART) "*" substr(decl, RSTART + RLENGTH - 1)
    } else if (match(decl, /[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])+$/)) {   # an array: name[N]
      arr = substr(decl, RSTART); name = arr; sub(/\[.*/, "", name)
      type = substr(decl, 1, RSTART - 1) substr(arr, length(name) + 1)
    } else {
      match(decl, /[A-Za-z_][A-Za-z0-9_]*$/)
      name = substr(decl, RSTART); type = substr(decl, 1, RSTART - 1)
    }
    sub(/ +$/, "", type)
    printf "ABI_FIELD(struct %s, %s, %d, %d, %s)\n", s, name, off, size, type
  }' "$tmp/ptype"
echo
"$tmp/v" | while read -r n v; do echo "ABI_CONST($n, $v)"; done
cat <<'EOF'

int main(void)
{
    /* the names a program looks up with dlsym */
    int bad = 0;
    if (strcmp(CUSHIM_PLUGIN_ENTRY_NAME, "cushim_plugin_entry") != 0)
        bad = printf("CUSHIM_PLUGIN_ENTRY_NAME changed: %s\n", CUSHIM_PLUGIN_ENTRY_NAME);
    if (strcmp(CUSHIM_HOST_GET_NAME, "cushim_host_get") != 0)
        bad = printf("CUSHIM_HOST_GET_NAME changed: %s\n", CUSHIM_HOST_GET_NAME);
    if (!bad)
        printf("SDK ABI %u.%u keeps every field, type and constant of the released version\n",
               (unsigned)CUSHIM_ABI_MAJOR, (unsigned)CUSHIM_ABI_MINOR);
    return bad != 0;
}
EOF
