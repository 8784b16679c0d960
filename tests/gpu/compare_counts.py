#!/usr/bin/env python3
"""compare_counts.py - compares the shim's per-API driver call counts with CUPTI's.

USAGE:
  compare_counts.py --shim PATH --cupti PREFIX [--shim-alone PATH] [--apis apis.tsv]
                    [--require NAME ...] [--require-prefix PREFIX ...] [--label L]

--shim        the CUSHIM_COUNTS path of the run with shim + CUPTI counter ('PATH' and
              the forked children's 'PATH.<pid>' are summed); lines 'api<TAB>count'.
--cupti       the CUPTI_COUNTER_OUT prefix of the same run ('PREFIX.<pid>.bin' with
              one uint64 per callback id, 'PREFIX.<pid>.names' with 'cbid<TAB>name').
--shim-alone  the CUSHIM_COUNTS path of a run of the same program under the shim
              without CUPTI; used to recognise calls that CUPTI makes itself.
--apis        generated/cuda-X.Y/apis.tsv: which names are driver exports.

Only driver APIs are compared (library 'driver' in apis.tsv, else names 'cu' + capital).
Names are compared exactly: CUPTI names a callback id after the exported ABI variant
('cuMemAlloc_v2', 'cuMemcpyHtoD_v2_ptds'), which is what the shim counts.

A difference is explained only by one of these reasons (printed with the numbers):
  no-cbid     the API has no CUPTI callback id, so CUPTI cannot count it;
  not-export  CUPTI counted a callback id whose name is no driver export (apis.tsv),
              so no program can call it through the shim;
  procaddr    cuGetProcAddress/cuGetProcAddress_v2: the shim answers the lookup
              from its own table, so how often the real one runs differs;
  cupti-self  CUPTI's count equals the shim's count in the run without CUPTI, and
              the shim counted more: the extra calls are CUPTI's own, made through
              the shim (CUPTI does not report its own calls); or, for programs whose
              own call counts vary from run to run, the shim's excess equals exactly
              the excess proven to be CUPTI's in a deterministic program (--calib,
              written by that program's comparison with --write-calib).
  pre-attach  cuInit / cuDriverGetVersion, one call more per witnessed process (the
              CUPTI files read: two back ends of cushim-serve, two), the same count in
              the run without CUPTI: each process's first such call happens before
              CUPTI is attached (the injection library is loaded inside the first
              cuInit; cudart asks cuDriverGetVersion before that). Seen with driver 580.
  no-callback cuGetExportTable: CUPTI has a callback id for it (135) but delivers no
              callback (0 in every run of driver 580); the shim also counts CUPTI's
              own calls of it.
  teardown    cuDevicePrimaryCtxRelease / cuLibraryUnload (any _vN: a layer such as HAMi-core
              in front of the shim reaches the _v2 export), the same count in the
              run without CUPTI: calls made by the runtime's teardown at exit, after
              CUPTI has stopped delivering callbacks (its count at exit is final).
  server-own  an API named with --server-own (cushim-serve's back end: cuFuncGetParamInfo for a launch's argument
              sizes, cuMemHostRegister_v2/cuMemHostUnregister for the shared area): CUPTI counted more than the
              shim, the excess being the back end's own calls through call_real, which the shim does not count.
  plugin-own  an API named with --plugin-own (the trace plugin's cuFuncGetName/cuKernelGetName,
              which name each launched kernel once): the shim counted none (a plugin's own calls
              go through host->call_real, past every hook), also without CUPTI, and CUPTI counted
              at most as many as there were cuLaunch* calls.
Everything else is unexplained and makes the check fail (exit 1).
"""
import argparse
import glob
import os
import re
import struct
import sys

PRE_ATTACH = {"cuInit", "cuDriverGetVersion"}
NO_CALLBACK = {"cuGetExportTable"}
TEARDOWN = {"cuDevicePrimaryCtxRelease", "cuLibraryUnload"}

DRIVER_NAME = re.compile(r"^cu[A-Z]")
PROCADDR = {"cuGetProcAddress", "cuGetProcAddress_v2"}


def read_shim_counts(path):
    counts = {}
    files = []
    if os.path.exists(path):
        files.append(path)
    files += [f for f in glob.glob(glob.escape(path) + ".*") if re.search(r"\.\d+$", f)]
    for f in files:
        with open(f) as fh:
            for line in fh:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = line.split("\t")
                if len(parts) < 2:
                    parts = line.split()
                if len(parts) < 2:
                    continue
                try:
                    n = int(parts[1])
                except ValueError:
                    continue
                counts[parts[0]] = counts.get(parts[0], 0) + n
    return counts, files


def read_cupti_counts(prefix, snapshots=None):
    """Sums the live counts of every PREFIX.<pid>.bin; 'snapshots' (a dict) gets the
    sums of the at-exit and at-unload snapshots per name, for diagnostics."""
    counts = {}
    names_all = set()
    bins = sorted(glob.glob(glob.escape(prefix) + ".*.bin"))
    for b in bins:
        names_file = b[: -len(".bin")] + ".names"
        names = {}
        if os.path.exists(names_file):
            with open(names_file) as fh:
                for line in fh:
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) == 2:
                        names[int(parts[0])] = parts[1]
        names_all.update(names.values())
        data = open(b, "rb").read()
        slots = len(data) // 24          # live, at-exit snapshot, at-unload snapshot
        vals = [v for (v,) in struct.iter_unpack("<Q", data[: slots * 24])]
        for cbid in range(slots):
            live, at_exit, at_unload = vals[cbid], vals[slots + cbid], vals[2 * slots + cbid]
            name = names.get(cbid, "cbid#%d" % cbid)
            if live:
                counts[name] = counts.get(name, 0) + live
            if snapshots is not None and (live or at_exit or at_unload):
                e, u = snapshots.get(name, (0, 0))
                snapshots[name] = (e + at_exit, u + at_unload)
    return counts, names_all, bins


def read_driver_exports(apis):
    if not apis or not os.path.exists(apis):
        return None
    header = None
    names = set()
    with open(apis) as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if header is None:
                header = parts
                continue
            row = dict(zip(header, parts))
            lib = row.get("library", "")
            if lib.lower().startswith("driver") or lib == "1":
                names.add(row.get("exported_name", parts[1] if len(parts) > 1 else ""))
    return names or None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", required=True)
    ap.add_argument("--cupti", required=True)
    ap.add_argument("--shim-alone")
    ap.add_argument("--apis")
    ap.add_argument("--require", action="append", default=[])
    ap.add_argument("--require-prefix", action="append", default=[])
    ap.add_argument("--label", default="")
    ap.add_argument("--calib", help="name<TAB>excess lines: CUPTI's own calls measured elsewhere")
    ap.add_argument("--server-own", action="append", default=[],
                    help="an API the remoting's back end also calls itself through the real function (server-own)")
    ap.add_argument("--plugin-own", action="append", default=[],
                    help="an API a loaded plugin calls itself through the real function (see plugin-own)")
    ap.add_argument("--write-calib", help="write this run's proven cupti-self excesses here")
    a = ap.parse_args()

    exports = read_driver_exports(a.apis)
    is_driver = (lambda n: n in exports) if exports else (lambda n: bool(DRIVER_NAME.match(n)))

    shim_all, shim_files = read_shim_counts(a.shim)
    snaps = {}
    cupti, cbid_names, bins = read_cupti_counts(a.cupti, snaps)
    alone = read_shim_counts(a.shim_alone)[0] if a.shim_alone else None
    shim = {k: v for k, v in shim_all.items() if is_driver(k)}
    runtime_seen = sum(1 for k in shim_all if k.startswith("cuda"))

    label = a.label or os.path.basename(a.shim)
    print("# %s: shim files %s; CUPTI files %s" % (label, shim_files, bins))
    print("# shim: %d driver APIs, %d calls (%d runtime APIs seen); CUPTI: %d APIs, %d calls"
          % (len(shim), sum(shim.values()), runtime_seen, len(cupti), sum(cupti.values())))
    problems = []
    if not shim_files or not shim:
        problems.append("shim wrote no driver counts (CUSHIM_COUNTS not honoured, or shim not loaded)")
    if not bins or not cupti:
        problems.append("CUPTI counter recorded nothing (injection not loaded? see the run's stderr)")
    for name in a.require:
        if shim.get(name, 0) == 0 or cupti.get(name, 0) == 0:
            problems.append("required API %s: shim %d, CUPTI %d" % (name, shim.get(name, 0), cupti.get(name, 0)))
    for pre in a.require_prefix:
        s = sum(v for k, v in shim.items() if k.startswith(pre))
        c = sum(v for k, v in cupti.items() if k.startswith(pre))
        if s == 0 or c == 0:
            problems.append("required APIs %s*: shim %d, CUPTI %d" % (pre, s, c))

    calib = {}
    if a.calib and os.path.exists(a.calib):
        for line in open(a.calib):
            p = line.split()
            if len(p) == 2:
                calib[p[0]] = int(p[1])
    proven = {}
    launches = sum(v for k, v in cupti.items() if k.startswith("cuLaunch"))
    explained, unexplained = [], []
    equal = 0
    for name in sorted(set(shim) | set(cupti)):
        s, c = shim.get(name, 0), cupti.get(name, 0)
        if s == c:
            equal += 1
            continue
        a0 = alone.get(name, 0) if alone is not None else None
        e, u = snaps.get(name, (0, 0))
        row = "%-44s shim %8d  cupti %8d  diff %+8d%s  (cupti at exit %d, at unload %d)" % (
            name, s, c, s - c, "" if a0 is None else "  shim-alone %8d" % a0, e, u)
        if s and name not in cbid_names and cbid_names:
            explained.append(("no-cbid", row))
        elif c and not s and exports is not None and name not in exports:
            explained.append(("not-export", row))
        elif name in PROCADDR:
            explained.append(("procaddr", row))
        elif name in PRE_ATTACH and 1 <= s - c <= max(1, len(bins)) and a0 == s:
            explained.append(("pre-attach", row))
        elif name in NO_CALLBACK and c == 0:
            explained.append(("no-callback", row))
        elif re.sub(r"_v[0-9]+$", "", name) in TEARDOWN and s > c and a0 == s and e == c:
            explained.append(("teardown", row))
        elif name in a.plugin_own and s == 0 and (a0 is None or a0 == 0) and 0 < c <= launches:
            explained.append(("plugin-own", row))
        elif name in a.server_own and c > s:
            explained.append(("server-own", row))
        elif a0 is not None and s > c and c == a0:
            explained.append(("cupti-self", row))
            proven[name] = s - c
        elif s > c and calib.get(name) == s - c:
            explained.append(("cupti-self", row + "  (excess as calibrated)"))
        else:
            unexplained.append(row)

    print("# %d APIs equal, %d differences explained, %d unexplained" % (equal, len(explained), len(unexplained)))
    for why, row in explained:
        print("explained  %-10s %s" % (why, row))
    for row in unexplained:
        print("UNEXPLAINED           %s" % row)
    for p in problems:
        print("PROBLEM    %s" % p)
    if a.write_calib:
        with open(a.write_calib, "w") as fh:
            for name in sorted(proven):
                fh.write("%s\t%d\n" % (name, proven[name]))
    ok = not unexplained and not problems
    summary = "%d equal, %d explained, %d unexplained; shim %d calls, CUPTI %d calls" % (
        equal, len(explained), len(unexplained), sum(shim.values()), sum(cupti.values()))
    if problems:
        summary += "; " + "; ".join(problems)
    print("RESULT %s %s" % ("PASS" if ok else "FAIL", summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
