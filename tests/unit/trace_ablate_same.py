#!/usr/bin/env python3
"""trace_ablate_same.py - the bench-only variants of the trace plugin's query hook stay the product's hook.

bench/cpu/trace_ablate.c is plugins/trace/tr_query.c's tr_post_query with '#if TR_ABLATE ...' blocks added
(bench/cpu/ablate.sh builds the plugin with it); what it measures holds only while the rest is the product's
hook line for line. Fails when:
  - tr_post_query with every TR_ABLATE block resolved as TR_ABLATE=0 (the '#else' branches kept) differs from
    the product's (whitespace aside),
  - a file of the product (plugins/trace/, its lib/) names TR_ABLATE or TR_GPU_AB (the gpu-ab variant is
    bench/gpu/trace_gpuab.c, linked in place of plugins/trace/tr_gdetach.c).
USAGE: trace_ablate_same.py SOURCE_DIR
"""
import os
import re
import sys


def function(text, name):
    """The text of function 'name' from its signature line to its closing brace at column 0."""
    m = re.search(r'^[^\n]*\b%s\(' % re.escape(name), text, re.M)
    if m is None:
        return None
    end = text.find('\n}\n', m.start())
    return text[m.start():end + 2] if end >= 0 else None


def resolve_zero(text):
    """Lines with every '#if TR_ABLATE ...' block taken as false: its '#else' branch kept, the rest dropped."""
    out, stack = [], []
    for line in text.split('\n'):
        s = line.strip()
        if s.startswith('#if'):
            stack.append('ablate' if 'TR_ABLATE' in s else 'other')
            if stack[-1] == 'ablate':
                stack[-1] = 'skip'
                continue
        elif s.startswith('#else') and stack and stack[-1] in ('skip', 'keep'):
            stack[-1] = 'keep' if stack[-1] == 'skip' else 'skip'
            continue
        elif s.startswith('#endif') and stack:
            kind = stack.pop()
            if kind in ('skip', 'keep'):
                continue
        if 'skip' in stack:
            continue
        out.append(line)
    return '\n'.join(out)


def norm(text):
    return [re.sub(r'\s+', ' ', l).strip() for l in text.split('\n') if l.strip()]


def main():
    root = sys.argv[1]
    bad = 0
    prod = open(os.path.join(root, 'plugins/trace/tr_query.c')).read()
    bench = open(os.path.join(root, 'bench/cpu/trace_ablate.c')).read()
    a, b = function(prod, 'tr_post_query'), function(bench, 'tr_post_query')
    if a is None or b is None:
        print('tr_post_query not found in %s' % ('tr_query.c' if a is None else 'trace_ablate.c'))
        return 1
    if 'TR_ABLATE' not in b:
        print('bench/cpu/trace_ablate.c: tr_post_query has no TR_ABLATE block')
        bad = 1
    na, nb = norm(a), norm(resolve_zero(b))
    if na != nb:
        bad = 1
        print('bench/cpu/trace_ablate.c: tr_post_query without its ablations is not plugins/trace/tr_query.c\'s:')
        for i in range(max(len(na), len(nb))):
            x = na[i] if i < len(na) else '<end>'
            y = nb[i] if i < len(nb) else '<end>'
            if x != y:
                print('  product: %s\n  bench:   %s' % (x, y))
                break
    for d in ('plugins/trace', 'plugins/trace/lib'):
        for f in sorted(os.listdir(os.path.join(root, d))):
            p = os.path.join(root, d, f)
            if not (os.path.isfile(p) and f.endswith(('.c', '.h'))):
                continue
            text = open(p).read()
            for switch, home in (('TR_ABLATE', 'bench/cpu/trace_ablate.c'), ('TR_GPU_AB', 'bench/gpu/trace_gpuab.c')):
                if switch in text:
                    print('%s/%s names %s: a bench switch in the product (%s holds the variant)' % (d, f, switch, home))
                    bad = 1
    if not bad:
        print('tr_post_query: the bench variants are the product hook but for their TR_ABLATE blocks')
    return bad


if __name__ == '__main__':
    sys.exit(main())
