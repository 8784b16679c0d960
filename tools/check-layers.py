#!/usr/bin/env python3
"""check-layers.py - runtime/'s includes follow its layering table, so that the include graph is the dependency
graph and no circle runs between its files.

    python3 tools/check-layers.py [REPO_ROOT]          (ctest: runtime_layers)

Reads the table under "## Layers of the runtime" in docs/architecture.md: one row per layer, its number first, then
the files of that layer in backquotes (`api` names api.c and api.h; a name ending in .c or .h names that file).
Fails, with one line per problem and what to do, when
  - a file of runtime/ (*.c, *.h; rt_internal.h, the whitebox tests' umbrella, excepted) is in no layer, or the
    table names a file that does not exist;
  - a file includes a header of runtime/ of a higher layer (an upward include), or includes rt_internal.h;
  - the headers files include make a circle between modules (X.c and X.h are one module), even within a layer;
  - a .c file declares an extern of its own instead of including the header that declares it (only the names
    of the toolchain, beginning with '_', may be declared there: __cxa_atexit, _DYNAMIC, the linker's
    __start_/__stop_ bounds);
  - a .c file of runtime/ is missing from the module table under "## Modules" in docs/runtime.md.
Exits 0 and prints a one-line summary otherwise.
"""
import os
import re
import sys

UMBRELLA = "rt_internal.h"


def section(text, title):
    """The lines of markdown section 'title' (up to the next heading of the same or a higher level)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"(#+) (.*)$", line)
        if m and m.group(2).strip() == title:
            depth = len(m.group(1))
            out = []
            for rest in lines[i + 1:]:
                n = re.match(r"(#+) ", rest)
                if n and len(n.group(1)) <= depth:
                    break
                out.append(rest)
            return out
    return None


def declared_name(line):
    """The name an extern declaration declares: the last identifier outside parentheses that a '(', '[' or ';'
    follows (a type written as a macro call, ElfW(Dyn), comes before it)."""
    decl = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", line.split("=")[0])
    depth, name = 0, ""
    for m in re.finditer(r"[A-Za-z_]\w*|[()\[;]", decl):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0 and tok not in ("[", ";"):
            rest = decl[m.end():].lstrip()
            if rest[:1] in ("(", "[", ";", ""):
                name = tok
    return name


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    rt = os.path.join(root, "runtime")
    arch = os.path.join(root, "docs", "architecture.md")
    rtdoc = os.path.join(root, "docs", "runtime.md")
    errors = []
    files = sorted(f for f in os.listdir(rt) if f.endswith((".c", ".h")) and f != UMBRELLA)

    rows = section(open(arch).read(), "Layers of the runtime")
    if rows is None:
        print("check-layers: docs/architecture.md has no section '## Layers of the runtime'", file=sys.stderr)
        return 1
    layer, layer_name = {}, {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")] if row.startswith("|") else []
        if len(cells) < 2 or not re.fullmatch(r"\d+", cells[0]):
            continue
        n = int(cells[0])
        layer_name[n] = cells[2] if len(cells) > 2 else ""
        for name in re.findall(r"`([^`]+)`", cells[1]):
            named = [name] if name.endswith((".c", ".h")) else [name + ".c", name + ".h"]
            present = [f for f in named if f in files]
            if not present:
                errors.append("docs/architecture.md: layer %d names `%s`, but runtime/ has no %s: remove it from "
                              "the table" % (n, name, " or ".join(named)))
            for f in present:
                if f in layer and layer[f] != n:
                    errors.append("docs/architecture.md: runtime/%s is in layers %d and %d: keep one" % (f, layer[f], n))
                layer[f] = n
    for f in files:
        if f not in layer:
            errors.append("runtime/%s is in no layer: add it to the table under '## Layers of the runtime' in "
                          "docs/architecture.md (the lowest layer whose files it may include)" % f)

    def module(f):
        return f[:-2]

    graph = {}
    for f in files:
        text = open(os.path.join(rt, f)).read()
        for lineno, line in enumerate(text.split("\n"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                inc = m.group(1)
                if inc == UMBRELLA:
                    errors.append("runtime/%s:%d includes %s, the tests' umbrella: include the headers of the modules "
                                  "it uses instead" % (f, lineno, UMBRELLA))
                    continue
                if inc not in files:
                    continue   # generated, SDK or system header
                if f in layer and inc in layer and layer[inc] > layer[f]:
                    errors.append("runtime/%s:%d (layer %d) includes %s (layer %d, %s): an upward include. Move what it "
                                  "needs down, hand it in from above (a table, a callback, an entry in the lifecycle "
                                  "table), or change the layers in docs/architecture.md"
                                  % (f, lineno, layer[f], inc, layer[inc], layer_name.get(layer[inc], "")))
                if module(inc) != module(f):
                    graph.setdefault(module(f), set()).add(module(inc))
            if f.endswith(".c") and re.match(r"extern\b", line):
                name = declared_name(line)
                if not name.startswith("_"):
                    errors.append("runtime/%s:%d declares extern '%s' itself: declare it in its module's header and "
                                  "include that" % (f, lineno, name))

    # circles between modules (Tarjan's strongly connected components)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v, counter=[0]):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    for comp in comps:
        edges = ["%s -> %s" % (a, b) for a in comp for b in sorted(graph.get(a, ())) if b in comp]
        errors.append("runtime/: the modules %s include each other in a circle (%s): one of them must not depend on "
                      "the other" % (", ".join(comp), "; ".join(edges)))

    mods = section(open(rtdoc).read(), "Modules")
    listed = set()
    for row in mods or []:
        if row.startswith("|"):
            first = row.strip().strip("|").split("|")[0]
            listed.update(re.findall(r"`([^`]+)`", first))
    for f in files:
        if f.endswith(".c") and f not in listed:
            errors.append("runtime/%s is missing from the module table under '## Modules' in docs/runtime.md: add a "
                          "row (file, prefix, responsibility)" % f)

    for e in errors:
        print("check-layers: " + e, file=sys.stderr)
    if errors:
        return 1
    print("check-layers: %d files of runtime/ in %d layers; no upward include, no circle; docs/runtime.md lists "
          "every .c" % (len(files), len(layer_name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
