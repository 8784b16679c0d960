#!/usr/bin/env python3
"""compare_procaddr.py - compares procaddr_check recordings: real driver vs shim.

USAGE: compare_procaddr.py NATIVE.tsv SHIM.tsv [--apis apis.tsv] [--shim-obj SUBSTR]

For every (name, flags, cudaVersion) both recordings must give the same CUresult and
the same CUdriverProcAddressQueryResult, and the pointers must correspond:
  wrapped      real 'libcuda..:SYM', shim '<shim object>:SYM' (same exported name)  - ok
  passthrough  real 'libcuda..:?+OFF' (no export), shim returns the same real pointer - ok, counted
  null         both NULL                                                              - ok
  unwrapped    real 'libcuda..:SYM', shim returns that real export unchanged: calls through
               it bypass the shim. A failure when SYM is a driver API of apis.tsv, else
               a warning (an export the headers do not declare).
  mismatch     anything else                                                          - failure
Prints the failures grouped by (name, flags) with version ranges, then 'RESULT PASS|FAIL ...'.
"""
import argparse
import collections
import sys


def load(path):
    rows = collections.defaultdict(list)
    with open(path) as fh:
        for line in fh:
            if line.startswith("#") or line.startswith("name\t"):
                continue
            p = line.rstrip("\n").split("\t")
            if len(p) != 7:
                continue
            rows[(p[0], int(p[1]))].append((int(p[2]), int(p[3]), int(p[4]), int(p[5]), p[6]))
    return rows


def expand(segs):
    out = {}
    for vfrom, vto, r, s, d in segs:
        for v in range(vfrom, vto + 1, 10):
            out[v] = (r, s, d)
    return out


def split(desc):
    if desc == "-":
        return None, None
    obj, _, sym = desc.partition(":")
    return obj, sym


def load_exports(apis):
    names = set()
    if not apis:
        return names
    try:
        header = None
        with open(apis) as fh:
            for line in fh:
                if line.startswith("#"):
                    continue
                p = line.rstrip("\n").split("\t")
                if header is None:
                    header = p
                    continue
                row = dict(zip(header, p))
                if row.get("library", "").lower().startswith("driver") or row.get("library") == "1":
                    names.add(row.get("exported_name", ""))
    except OSError:
        pass
    return names


def ranges(vs):
    vs = sorted(vs)
    out, start, prev = [], None, None
    for v in vs:
        if start is None:
            start = prev = v
        elif v == prev + 10:
            prev = v
        else:
            out.append((start, prev))
            start = prev = v
    if start is not None:
        out.append((start, prev))
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("native")
    ap.add_argument("shim")
    ap.add_argument("--apis")
    ap.add_argument("--shim-obj", default="cushim")
    a = ap.parse_args()
    nat, shim = load(a.native), load(a.shim)
    exports = load_exports(a.apis)
    cnt = collections.Counter()
    fails = collections.defaultdict(list)   # (name, flags, kind, detail) -> versions
    warns = collections.defaultdict(list)
    for key in sorted(set(nat) | set(shim)):
        en, es = expand(nat.get(key, [])), expand(shim.get(key, []))
        for v in sorted(set(en) | set(es)):
            if v not in en or v not in es:
                fails[key + ("missing", "native" if v not in en else "shim")].append(v)
                cnt["missing"] += 1
                continue
            (rn, sn, dn), (rs, ss, ds) = en[v], es[v]
            if (rn, sn) != (rs, ss):
                fails[key + ("result", "real %d/%d shim %d/%d" % (rn, sn, rs, ss))].append(v)
                cnt["result-differs"] += 1
                continue
            on, yn = split(dn)
            os_, ys = split(ds)
            if on is None and os_ is None:
                cnt["null"] += 1
            elif on is None or os_ is None:
                fails[key + ("pointer", "real %s shim %s" % (dn, ds))].append(v)
                cnt["mismatch"] += 1
            elif yn.startswith("?"):
                if ds == dn:
                    cnt["passthrough"] += 1
                else:
                    fails[key + ("pointer", "real %s shim %s" % (dn, ds))].append(v)
                    cnt["mismatch"] += 1
            elif a.shim_obj in os_ and ys == yn:
                cnt["wrapped"] += 1
            elif ds == dn:
                if yn in exports or not exports:
                    fails[key + ("unwrapped", "real export %s returned unwrapped" % yn)].append(v)
                    cnt["unwrapped"] += 1
                else:
                    warns[key + ("unwrapped", "export %s not in apis.tsv returned unwrapped" % yn)].append(v)
                    cnt["unwrapped-unknown"] += 1
            else:
                fails[key + ("pointer", "real %s shim %s" % (dn, ds))].append(v)
                cnt["mismatch"] += 1
    for k, vs in sorted(warns.items()):
        print("WARN %s flags=%d %s: %s [%s]" % (k[0], k[1], k[2], k[3], ranges(vs)))
    for k, vs in sorted(fails.items()):
        print("FAIL %s flags=%d %s: %s [%s]" % (k[0], k[1], k[2], k[3], ranges(vs)))
    names = len({k[0] for k in set(nat) | set(shim)})
    total = sum(cnt.values())
    bad = sum(len(v) for v in fails.values())
    detail = "%d names, %d answers: %s; %d failing answers in %d groups" % (
        names, total, ", ".join("%s %d" % kv for kv in sorted(cnt.items())), bad, len(fails))
    if total == 0:
        detail += "; nothing recorded"
    ok = bad == 0 and total > 0
    print("RESULT %s %s" % ("PASS" if ok else "FAIL", detail))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
