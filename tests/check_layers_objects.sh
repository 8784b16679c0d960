#!/usr/bin/env bash
# check_layers_objects.sh - tools/check-layers.py --objects (ctest lua_symbols_selftest) catches what it must:
# two files that call each other (a circle of symbols, which no include shows), and a call into a higher layer;
# and passes a tree whose calls go down only. A small tree of its own (its docs page and plugins/lua/) in a
# temporary folder, compiled with cc.
#
#   bash tests/check_layers_objects.sh REPO_ROOT
set -euo pipefail
ROOT=$(cd "${1:-.}" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/docs" "$T/plugins/lua" "$T/obj"
cat > "$T/docs/lua-policies.md" <<'MD'
## Layers

| layer | files | what |
| --- | --- | --- |
| 0 | `lo` | the bottom |
| 1 | `hi` | above it |

## Source files

| file | what |
| --- | --- |
| `plugins/lua/lo.c` | the bottom |
| `plugins/lua/hi.c` | above it |
MD
fail=0
# check NAME EXPECT(0|1) PATTERN LO_BODY: lo.c's body varies; hi.c calls lo_f. Declarations are local to the
# functions, so that the include check sees nothing: only the symbols join the files.
check() {
    local name=$1 expect=$2 pattern=$3 lobody=$4 out rc=0
    printf '#include "lo.h"\nint lo_f(void)\n{\n%s\n}\n' "$lobody" > "$T/plugins/lua/lo.c"
    printf '#ifndef LO_H\n#define LO_H\nint lo_f(void);\n#endif\n' > "$T/plugins/lua/lo.h"
    printf '#include "lo.h"\nint hi_f(void)\n{\n    return lo_f() + 1;\n}\n' > "$T/plugins/lua/hi.c"
    printf '#ifndef HI_H\n#define HI_H\nint hi_f(void);\n#endif\n' > "$T/plugins/lua/hi.h"
    rm -f "$T"/obj/*.o
    for f in lo hi; do cc -c -o "$T/obj/$f.c.o" "$T/plugins/lua/$f.c"; done
    out=$(python3 "$ROOT/tools/check-layers.py" "$T" lua --objects "$T/obj/lo.c.o;$T/obj/hi.c.o" 2>&1) || rc=$?
    if [ "$rc" -ne "$expect" ] || ! grep -q -- "$pattern" <<<"$out"; then
        echo "FAIL $name: exit $rc (expected $expect), output:"; echo "$out"; fail=1
    else
        echo "ok   $name"
    fi
}
check "calls go down: passes" 0 "no upward call, no circle" "    return 1;"
check "lo calls up into hi (a circle): fails" 1 "lo.c (layer 0) uses hi_f of hi.c (layer 1" \
      "    int hi_f(void);
    return hi_f();"
check "the circle is named" 1 "call each other in a circle: hi.c -> lo.c (lo_f); lo.c -> hi.c (hi_f)" \
      "    int hi_f(void);
    return hi_f();"
exit $fail
