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

    python3 tools/check-layers.py REPO_ROOT trace      (ctest: trace_layers)

does the same for the trace plugin (plugins/trace/ and its lib/): the table under "### Parts and layers" in
docs/plugins/trace.md (`lib/tr_json` names lib/tr_json.c and lib/tr_json.h; a header is found by its name alone,
as the plugin includes it), and its module table, "## Source files" in docs/plugins/trace.md, which names each
.c by its path (`plugins/trace/tr_hooks.c`).

    python3 tools/check-layers.py REPO_ROOT lua        (ctest: lua_layers)

does the same for the lua plugin (plugins/lua/): the table under "## Layers" in docs/lua-policies.md, and its
module table, "## Source files" there.

    python3 tools/check-layers.py REPO_ROOT TREE --objects OBJ...     (ctest: lua_symbols)

checks the compiled files of the tree as well: OBJ are its object files (X.c.o or X.o; a directory stands for
the object files in it; a ';'-separated list, as CMake's $<TARGET_OBJECTS:...> gives, is split). A file uses
another when it references a global symbol the other defines (nm); this fails, naming the symbols, when a file
uses one of a higher layer or the uses make a circle - which the include check does not see: a function
declared in a shared header, or an extern, joins two files whatever they include.
"""
import os
import re
import subprocess
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


# The trees checked: where their files are, the layering table, the module table (and how it names a file).
TREES = {
    "runtime": {"dirs": ["runtime"], "layers": ("docs/architecture.md", "Layers of the runtime"),
                "modules": ("docs/runtime.md", "Modules"), "listed_as": "{f}"},
    "trace": {"dirs": ["plugins/trace", "plugins/trace/lib"], "layers": ("docs/plugins/trace.md", "Parts and layers"),
              "modules": ("docs/plugins/trace.md", "Source files"), "listed_as": "plugins/trace/{f}"},
    "lua": {"dirs": ["plugins/lua"], "layers": ("docs/lua-policies.md", "Layers"),
            "modules": ("docs/lua-policies.md", "Source files"), "listed_as": "plugins/lua/{f}"},
}


def circles(graph):
    """The strongly connected components of more than one node (Tarjan), each sorted."""
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
    return comps


def nm_symbols(obj, *flags):
    """The names nm lists for 'obj' with 'flags' (the last field of each line)."""
    out = subprocess.run(["nm", *flags, obj], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.split("\n") if line.strip()}


def check_objects(args, base, by_base, layer, layer_name, arch_name, errors):
    """The symbol-level check (--objects): uses between the tree's compiled files follow the layers, no circle."""
    objs = []
    for arg in args:
        for a in arg.split(";"):
            if os.path.isdir(a):
                objs += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".o"))
            elif a:
                objs.append(a)
    if not objs:
        errors.append("--objects: no object file given")
        return 0
    src = {}   # object -> the tree's file it was compiled from ("lp_gen.c")
    for o in objs:
        name = os.path.basename(o)
        name = name[:-4] if name.endswith(".c.o") else name[:-2]
        f = by_base.get(name + ".c")
        if f is None:
            errors.append("%s: compiled from no .c of %s/ (%s.c): pass only the tree's object files" % (o, base, name))
            continue
        src[o] = f
    defines = {}
    for o, f in src.items():
        for sym in nm_symbols(o, "-g", "--defined-only"):
            defines[sym] = f
    graph, why = {}, {}
    for o, f in src.items():
        for sym in sorted(nm_symbols(o, "-u")):
            g = defines.get(sym)
            if g is None or g == f:
                continue
            graph.setdefault(f, set()).add(g)
            why.setdefault((f, g), []).append(sym)
    for (f, g), syms in sorted(why.items()):
        if f in layer and g in layer and layer[g] > layer[f]:
            errors.append("%s/%s (layer %d) uses %s of %s (layer %d, %s): an upward call. Move it down, or hand it in "
                          "from above (a table, a callback), or change the layers in %s"
                          % (base, f, layer[f], ", ".join(syms), g, layer[g], layer_name.get(layer[g], ""), arch_name))
    for comp in circles(graph):
        edges = ["%s -> %s (%s)" % (a, b, ", ".join(why[(a, b)][:3])) for a in comp for b in sorted(graph.get(a, ()))
                 if b in comp]
        errors.append("%s/: the compiled files %s call each other in a circle: %s: one of them must not use the "
                      "other" % (base, ", ".join(comp), "; ".join(edges)))
    return len(src)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    tree_name = sys.argv[2] if len(sys.argv) > 2 else "runtime"
    objects = None
    if len(sys.argv) > 3:
        if sys.argv[3] != "--objects":
            print("check-layers: expected --objects OBJ... after the tree, not '%s'" % sys.argv[3], file=sys.stderr)
            return 2
        objects = sys.argv[4:]
    if tree_name not in TREES:
        print("check-layers: no tree '%s' (%s)" % (tree_name, ", ".join(sorted(TREES))), file=sys.stderr)
        return 2
    tree = TREES[tree_name]
    base = tree["dirs"][0]
    rt = os.path.join(root, base)
    arch = os.path.join(root, tree["layers"][0])
    rtdoc = os.path.join(root, tree["modules"][0])
    arch_name, rtdoc_name = tree["layers"][0], tree["modules"][0]
    errors = []
    # each file by its path under the tree's first folder ("tr_hooks.c", "lib/tr_json.c")
    files = []
    for d in tree["dirs"]:
        sub = os.path.relpath(os.path.join(root, d), rt)
        sub = "" if sub == "." else sub + "/"
        files += [sub + f for f in os.listdir(os.path.join(root, d))
                  if f.endswith((".c", ".h")) and f != UMBRELLA and os.path.isfile(os.path.join(root, d, f))]
    files.sort()
    by_base = {os.path.basename(f): f for f in files}

    rows = section(open(arch).read(), tree["layers"][1])
    if rows is None:
        print("check-layers: %s has no section '%s'" % (arch_name, tree["layers"][1]), file=sys.stderr)
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
                errors.append("%s: layer %d names `%s`, but %s/ has no %s: remove it from "
                              "the table" % (arch_name, n, name, base, " or ".join(named)))
            for f in present:
                if f in layer and layer[f] != n:
                    errors.append("%s: %s/%s is in layers %d and %d: keep one" % (arch_name, base, f, layer[f], n))
                layer[f] = n
    for f in files:
        if f not in layer:
            errors.append("%s/%s is in no layer: add it to the table under '%s' in "
                          "%s (the lowest layer whose files it may include)" % (base, f, tree["layers"][1], arch_name))

    def module(f):
        return f[:-2]

    graph = {}
    for f in files:
        text = open(os.path.join(rt, f)).read()
        for lineno, line in enumerate(text.split("\n"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                inc = m.group(1)
                if inc == UMBRELLA and tree_name == "runtime":
                    errors.append("runtime/%s:%d includes %s, the tests' umbrella: include the headers of the modules "
                                  "it uses instead" % (f, lineno, UMBRELLA))
                    continue
                inc = inc if inc in files else by_base.get(inc, "")
                if inc not in files:
                    continue   # generated, SDK or system header
                if f in layer and inc in layer and layer[inc] > layer[f]:
                    errors.append("%s/%s:%d (layer %d) includes %s (layer %d, %s): an upward include. Move what it "
                                  "needs down, hand it in from above (a table, a callback, an entry in the lifecycle "
                                  "table), or change the layers in %s"
                                  % (base, f, lineno, layer[f], inc, layer[inc], layer_name.get(layer[inc], ""),
                                     arch_name))
                if module(inc) != module(f):
                    graph.setdefault(module(f), set()).add(module(inc))
            if f.endswith(".c") and re.match(r"extern\b", line):
                name = declared_name(line)
                if not name.startswith("_"):
                    errors.append("%s/%s:%d declares extern '%s' itself: declare it in its module's header and "
                                  "include that" % (base, f, lineno, name))

    # circles between modules
    comps = circles(graph)
    for comp in comps:
        edges = ["%s -> %s" % (a, b) for a in comp for b in sorted(graph.get(a, ())) if b in comp]
        errors.append("%s/: the modules %s include each other in a circle (%s): one of them must not depend on "
                      "the other" % (base, ", ".join(comp), "; ".join(edges)))

    mods = section(open(rtdoc).read(), tree["modules"][1])
    listed = set()
    for row in mods or []:
        if row.startswith("|"):
            first = row.strip().strip("|").split("|")[0]
            listed.update(re.findall(r"`([^`]+)`", first))
    for f in files:
        if f.endswith(".c") and tree["listed_as"].format(f=f) not in listed:
            errors.append("%s/%s is missing from the module table under '%s' in %s: add a "
                          "row (file, prefix, responsibility)" % (base, f, tree["modules"][1], rtdoc_name))

    nobj = check_objects(objects, base, by_base, layer, layer_name, arch_name, errors) if objects is not None else 0
    for e in errors:
        print("check-layers: " + e, file=sys.stderr)
    if errors:
        return 1
    if objects is not None:
        print("check-layers: %d compiled files of %s/: no upward call, no circle" % (nobj, base))
        return 0
    print("check-layers: %d files of %s/ in %d layers; no upward include, no circle; %s lists "
          "every .c" % (len(files), base, len(layer_name), rtdoc_name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
