#!/usr/bin/env python3
"""check-doc-tables.py - every plugin source file is in its plugin's module table, and every file a module table
names exists (the ctest doc_tables).

    python3 tools/check-doc-tables.py [ROOT]

ROOT is the repository (default: the one this script is in). The sources are plugins/*/*.c; each plugin directory
has one page:

    plugins/<name>/   docs/plugins/<name>.md
    plugins/lua/      docs/lua-policies.md
    plugins/common/   docs/plugin-sdk.md (code the shipped plugins share)

A module table is a markdown table on that page whose first header cell is 'file' (or 'module', 'source',
'source file') and whose rows name C files (a table of example policies is not one); a source file is in it when a
row's first cell names it in backticks, as `plugins/<name>/<file>.c` or as `<file>.c`. Prints every page without a module table, every source file missing
from its page's tables and every file a table names that does not exist, each with what to do, and exits 1; exits
0 when every source file is listed. Needs nothing but Python 3.
"""
import glob
import os
import re
import sys

HEADER_WORDS = ("file", "module", "source", "source file")
SPECIAL_PAGES = {"lua": "docs/lua-policies.md", "common": "docs/plugin-sdk.md"}


def page_of(plugin):
    return SPECIAL_PAGES.get(plugin, "docs/plugins/%s.md" % plugin)


def cells(line):
    """The cells of a markdown table row ('| a | b |' -> ['a', 'b']); None if the line is not a row."""
    line = line.strip()
    if not line.startswith("|"):
        return None
    # a '|' inside backticks or escaped as '\|' does not split cells
    out, cur, in_code, i = [], "", False, 1
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line) and line[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


def module_tables(text):
    """The first cells of the data rows of every module table in a page: a list of tables, each a list of
    (line number, first cell)."""
    lines = text.split("\n")
    tables, i = [], 0
    in_fence = False
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            in_fence = not in_fence
            i += 1
            continue
        head = None if in_fence else cells(lines[i])
        sep = cells(lines[i + 1]) if i + 1 < len(lines) else None
        if head and sep and all(re.fullmatch(r":?-{3,}:?", c) for c in sep if c):
            rows, j = [], i + 2
            while j < len(lines) and cells(lines[j]) is not None:
                rows.append((j + 1, cells(lines[j])[0] if cells(lines[j]) else ""))
                j += 1
            names_c = any(re.search(r"`[^`]*\.[ch]`", first) for _, first in rows)
            if head[0].strip("* ").lower() in HEADER_WORDS and names_c:
                tables.append(rows)
            i = j
            continue
        i += 1
    return tables


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 2 or not os.path.isdir(os.path.join(root, "plugins")):
        print("usage: check-doc-tables.py [ROOT]   (ROOT: the repository, with plugins/ and docs/)", file=sys.stderr)
        return 2
    sources = {}
    for path in sorted(glob.glob(os.path.join(root, "plugins", "*", "*.c"))):
        plugin = os.path.basename(os.path.dirname(path))
        sources.setdefault(plugin, []).append(os.path.basename(path))

    problems, listed = [], 0
    for plugin, files in sorted(sources.items()):
        page = page_of(plugin)
        ppath = os.path.join(root, page)
        want = ", ".join(files)
        if not os.path.isfile(ppath):
            problems.append("%s: no such page for plugins/%s/; write it, with a module table listing: %s"
                            % (page, plugin, want))
            continue
        tables = module_tables(open(ppath, encoding="utf-8").read())
        if not tables:
            problems.append("%s: no module table (a markdown table whose first header cell is 'file', "
                            "rows naming C files in backticks) for plugins/%s/; add one with a row for each of: %s" % (page, plugin, want))
            continue
        named = {}
        for rows in tables:
            for lineno, first in rows:
                for tok in re.findall(r"`([^`]+)`", first):
                    tok = tok.strip()
                    if tok.endswith(".c"):
                        named.setdefault(tok, lineno)
        found = set()
        for tok in named:
            base = os.path.basename(tok)
            if tok in ("plugins/%s/%s" % (plugin, base), base) and base in files:
                found.add(base)
        missing = [f for f in files if f not in found]
        if missing:
            problems.append("%s: plugins/%s/ files missing from its module table: %s (add a row each, the file "
                            "in backticks in the first cell)" % (page, plugin, ", ".join(missing)))
        for tok, lineno in sorted(named.items()):
            rel = tok if "/" in tok else "plugins/%s/%s" % (plugin, tok)
            if not os.path.isfile(os.path.join(root, rel)):
                problems.append("%s:%d: the module table names %s, which does not exist (remove or rename the row)"
                                % (page, lineno, rel))
        listed += len(found)

    for p in problems:
        print("check-doc-tables: " + p, file=sys.stderr)
    if problems:
        print("check-doc-tables: %d problem(s); %d of %d plugin source files listed"
              % (len(problems), listed, sum(len(f) for f in sources.values())), file=sys.stderr)
        return 1
    print("check-doc-tables: all %d plugin source files are in their pages' module tables" % listed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
