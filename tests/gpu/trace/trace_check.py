#!/usr/bin/env python3
"""trace_check.py - checks of a trace file written by the trace plugin, for tests/gpu/checks/trace.sh.
Each prints 'PASS|FAIL NAME detail' lines and exits 1 if any failed.

  trace_check.py api TRACE COUNTS            loads TRACE (.json/.json.gz); per API, its complete events equal
                                             the shim's CUSHIM_COUNTS (COUNTS and COUNTS.<pid> summed over
                                             the traces TRACE and TRACE's forked children are not merged:
                                             only COUNTS itself is compared); every driver launch names its kernel
  trace_check.py own TRACE OUT              each 'calls NAME N' line of a program's output OUT: the trace holds N
                                             outermost (depth 0) NAME events on the program's main thread - its
                                             own calls, not those the libraries it calls make themselves through
                                             the shim (NCCL's own ncclGetVersion, its NVML calls)
  trace_check.py tsv TRACE OUT               writes the per-API event counts of TRACE as 'api<TAB>count' (the
                                             CUSHIM_COUNTS format compare_counts.py reads)
  trace_check.py ranks [--all] TRACE...      the files of a job's processes (traceranks): each loads, each is a
                                             different process's (otherData.pid), at least two hold kernel
                                             launches (with --all: every one does)
  trace_check.py capture TRACE KIND          a trace of capture.py under --trace-capture=KIND: one capture range;
                                             no call recorded inside the NVTX ranges of steps 0-2 and 5-7 (every
                                             step range recorded); steps 3 and 4 hold the same number of
                                             launches, more than none; no profiler API call recorded
  trace_check.py memops TRACE STATS           the GPU copies and sets of TRACE against STATS (cushim stats TRACE's
                                             output): per operation, the count of both memory tables and the
                                             total bytes (MB, 3 decimals) equal the file's events
  trace_check.py nvtxsum TRACE STATS EXIT    nvtx_sum: STATS (cushim stats --format=json TRACE) has the NVTX
                                             ranges of TRACE's events, joined here apart from the tools' code
                                             (each range's count and total time, a split range from its first
                                             slice's start to its last slice's end, b/e by id), and the table
                                             at exit in EXIT (the program's stderr) is the one cushim stats
                                             prints (STATS.txt, beside STATS)
  trace_check.py fork TRACE OUT PAUSED       trace_gpu.py fork [paused] (OUT: its output) under --trace-gpu: the
                                             forked child ended by itself and wrote TRACE.<pid>.json, valid, with
                                             its cuDeviceGetCount, no GPU work, a note that GPU tracing is off in
                                             a forked child and none of the parent's counters; the parent's
                                             launches all linked to their kernels (PAUSED 1: one detach and one
                                             attachment again)
  trace_check.py gpu TRACE WITNESS           the kernels launched inside the NVTX range 'measured' appear once
                                             each, linked (external id -> the launching call, flow start and
                                             end), and their number equals WITNESS's (the profiler's count);
                                             the NVTX ranges 'step N' are on the launching thread
"""
import gzip
import json
import sys


def load(path):
    f = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    return json.load(f)


def calls(d):
    return [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("cuda_driver", "cuda_runtime")]


def counts_of(d):
    """Calls per API, those still running when the file was finished included (the shim counts a call
    when it starts)."""
    c = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_driver", "cuda_runtime", "cuda_api_unfinished"):
            c[e["name"]] = c.get(e["name"], 0) + 1
    return c


results = []


def report(ok, name, detail):
    results.append(ok)
    print("%s %s %s" % ("PASS" if ok else "FAIL", name, detail))


def check_api(trace, counts):
    d = load(trace)
    got = counts_of(d)
    want = {}
    for line in open(counts):
        f = line.rstrip("\n").split("\t")
        if len(f) == 2 and f[1].isdigit() and int(f[1]) > 0:
            want[f[0]] = want.get(f[0], 0) + int(f[1])
    diff = sorted(set(got) | set(want))
    bad = [(n, got.get(n, 0), want.get(n, 0)) for n in diff if got.get(n, 0) != want.get(n, 0)]
    dropped = d.get("otherData", {}).get("dropped_events", -1)
    report(not bad and dropped == 0, "counts-shim",
           "%d events, %d APIs, dropped %s; differences (api, trace, shim): %s" % (
               sum(got.values()), len(got), dropped, bad[:5]))
    launches = [e for e in calls(d) if e["name"].startswith(("cuLaunchKernel", "cuLaunchCooperativeKernel"))]
    named = [e for e in launches if e["args"].get("kernel")]
    report(len(launches) > 0 and len(named) == len(launches), "kernel-names",
           "%d of %d driver launches name their kernel, e.g. %s" % (
               len(named), len(launches), named[0]["args"]["kernel"][:60] if named else "-"))


def write_tsv(trace, out):
    with open(out, "w") as f:
        for n, c in sorted(counts_of(load(trace)).items()):
            f.write("%s\t%d\n" % (n, c))


def check_gpu(trace, witness):
    d = load(trace)
    ev = d["traceEvents"]
    api = {e["args"]["seq"]: e for e in calls(d)}
    nvtx = [e for e in ev if e.get("cat") == "nvtx"]
    begin = [e for e in nvtx if e["ph"] == "B" and e["name"] == "measured"]
    if not begin:
        report(False, "nvtx", "no NVTX range 'measured' in the trace (NVTX injection not active?)")
        return
    tid = begin[0]["tid"]
    # the matching 'E' of 'measured' on that thread: the last pop at depth 0
    depth, t0, t1 = 0, begin[0]["ts"], None
    for e in sorted((e for e in nvtx if e["tid"] == tid and e["ph"] in "BE"), key=lambda e: e["ts"]):
        if e["ts"] < t0:
            continue
        depth += 1 if e["ph"] == "B" else -1
        if depth == 0:
            t1 = e["ts"]
            break
    steps = [e for e in nvtx if e["ph"] == "B" and e["name"].startswith("step ") and e["tid"] == tid]
    report(t1 is not None and len(steps) > 0, "nvtx", "range 'measured' %s, %d 'step N' ranges on thread %s" % (
        "closed" if t1 is not None else "NOT closed", len(steps), tid))
    if t1 is None:
        return
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    linked = [k for k in kernels if k["args"].get("external id") in api]
    inside = [k for k in linked if t0 <= api[k["args"]["external id"]]["ts"] <= t1]
    flows_s = {e["id"] for e in ev if e.get("ph") == "s"}
    flows_f = [e["id"] for e in ev if e.get("ph") == "f"]
    corr = [k["args"]["correlation"] for k in kernels]
    report(len(corr) == len(set(corr)), "gpu-once", "%d kernel events, correlation ids unique" % len(kernels))
    report(len(linked) == len(kernels) and all(i in flows_s for i in flows_f), "gpu-linked",
           "%d of %d kernels linked to a call; %d flow ends, all with a start (linked through CUPTI %s)" % (
               len(linked), len(kernels), len(flows_f), d.get("otherData", {}).get("gpu_correlation", "?")))
    want = int(open(witness).read().split()[0])
    report(len(inside) == want, "gpu-witness", "%d kernels launched inside 'measured', the profiler saw %d" % (
        len(inside), want))


def check_own(trace, out):
    d = load(trace)
    own = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("tid") == e.get("pid") and e.get("args", {}).get("depth") == 0:
            own[e["name"]] = own.get(e["name"], 0) + 1
    want = {}
    for line in open(out):
        f = line.split()
        if len(f) == 3 and f[0] == "calls" and f[2].isdigit():
            want[f[1]] = want.get(f[1], 0) + int(f[2])
    bad = [(n, own.get(n, 0), w) for n, w in sorted(want.items()) if own.get(n, 0) != w]
    report(bool(want) and not bad, "own-calls", "%d functions the program says it called; differences (api, "
           "outermost main-thread events, called): %s" % (len(want), bad[:5]))


def check_ranks(paths):
    every = paths[:1] == ["--all"]
    paths = paths[1:] if every else paths
    pids, launching, detail = [], 0, []
    for p in paths:
        try:
            d = load(p)
        except Exception as e:   # noqa: BLE001 - any failure to load is the finding
            report(False, "ranks-load", "%s: %s" % (p, e))
            continue
        pid = d.get("otherData", {}).get("pid")
        n = sum(1 for e in calls(d) if "LaunchKernel" in e["name"])
        pids.append(pid)
        launching += n > 0
        if every and n == 0:
            report(False, "ranks-launches", "%s (pid %s) holds no launch" % (p, pid))
        detail.append("%s pid %s: %d calls, %d launches" % (p.rsplit("/", 1)[-1], pid, len(calls(d)), n))
    report(len(set(pids)) == len(pids) == len(paths), "ranks-pids", "one process per file: %s" % pids)
    report(launching >= 2, "ranks", "; ".join(detail))


def check_capture(trace, kind):
    d = load(trace)
    ev = d["traceEvents"]
    od = d.get("otherData", {})
    report(od.get("capture") == kind and od.get("capture_ranges") == 1, "capture-ranges",
           "otherData capture %r, %r ranges" % (od.get("capture"), od.get("capture_ranges")))
    # the step ranges: B/E pairs of category nvtx on the main thread, in order
    steps, open_ = {}, []
    for e in sorted((e for e in ev if e.get("cat") == "nvtx" and e.get("ph") in ("B", "E")), key=lambda e: e["ts"]):
        if e["ph"] == "B":
            open_.append(e)
        elif open_:
            b = open_.pop()
            if b["name"].startswith("step "):
                steps[int(b["name"].split()[1])] = (b["ts"], e["ts"])
    report(sorted(steps) == list(range(8)), "capture-steps", "NVTX step ranges recorded: %s" % sorted(steps))
    if sorted(steps) != list(range(8)):
        return
    cs = calls(d)
    per = {}
    for i, (t0, t1) in steps.items():
        inside = [e for e in cs if t0 <= e["ts"] <= t1]
        per[i] = (len(inside), sum(1 for e in inside if "LaunchKernel" in e["name"]))
    outside = [i for i in per if i not in (3, 4) and per[i][0] != 0]
    report(not outside, "capture-outside", "calls recorded in steps %s (none expected outside 3, 4): %s" %
           (outside, [per[i] for i in sorted(per)]))
    report(per[3][1] > 0 and per[3][1] == per[4][1], "capture-inside",
           "steps 3, 4: %s and %s (calls, launches); %d calls in all" % (per[3], per[4], len(cs)))
    prof = [e["name"] for e in cs if "Profiler" in e["name"]]
    report(not prof, "capture-profiler-calls", "profiler API calls recorded: %s" % prof[:4])


def flat_spans(ev, names):
    """{name: [start ts, end ts or None, tid]} of the NVTX push/pop ranges named in NAMES, for a script whose
    ranges never nest"""
    spans = {}
    for e in ev:
        if e.get("cat") == "nvtx" and e.get("ph") in ("B", "E"):
            nm = e["name"] if e["ph"] == "B" else None
            if nm in names:
                spans[nm] = [e["ts"], None, e["tid"]]
            elif e["ph"] == "E":
                for v in spans.values():
                    if v[1] is None and v[2] == e["tid"]:
                        v[1] = e["ts"]
    return spans


def kernels_linked(ev, api):
    """the kernel events, and {seq of a traced call: its kernels} for those linked to one of api's calls"""
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    linked = {}
    for k in kernels:
        c = api.get(k["args"].get("external id"))
        if c is not None:
            linked.setdefault(c["args"]["seq"], []).append(k)
    return kernels, linked


def launches_linked(api, linked, span):
    """(how many of the driver launches inside span [t0, t1, ...] have exactly one kernel, those launches)"""
    t0, t1 = span[0], span[1]
    launches = [c for c in api.values() if c["name"].startswith("cuLaunchKernel") and t0 <= c["ts"] <= t1]
    return sum(1 for c in launches if len(linked.get(c["args"]["seq"], [])) == 1), launches


def check_detach(trace, exit_err, detach):
    """trace_gpu.py detach traced with --trace-gpu --trace-unhook --trace-capture=cudaProfilerApi: in both capture
    ranges every driver launch has its kernel linked to it; kernels of the pause's first part are seen (CUPTI still
    attached); in its late part none when detach is 1 (CUPTI detached), some when 0; the file and the summary count
    the detach and the attachment again."""
    d = load(trace)
    ev = d["traceEvents"]
    od = d.get("otherData", {})
    api = {e["args"]["seq"]: e for e in calls(d)}
    spans = flat_spans(ev, ("range1", "range2", "pause-early", "pause-late"))
    missing = [k for k in ("range1", "range2", "pause-early", "pause-late") if spans.get(k, [0, None])[1] is None]
    if missing:
        report(False, "ranges", "NVTX ranges missing or unclosed: %s" % missing)
        return
    kernels, linked = kernels_linked(ev, api)
    parts = []
    ok = True
    for r in ("range1", "range2"):
        nlinked, launches = launches_linked(api, linked, spans[r])
        ok = ok and len(launches) > 0 and nlinked == len(launches)
        parts.append("%s %d of %d launches with their kernel" % (r, nlinked, len(launches)))
    report(ok, "linked", "; ".join(parts) + " (CUPTI attached again for range2)")

    def gpu_in(name):
        t0, t1 = spans[name][0], spans[name][1]
        return sum(1 for k in kernels if t0 <= k["ts"] <= t1)

    early, late = gpu_in("pause-early"), gpu_in("pause-late")
    text = open(exit_err).read()
    if detach:
        said = "; CUPTI detached 1 time while paused and attached again 1 (0 refused)" in text
        report(early > 0 and late == 0 and od.get("gpu_detached") == 1 and od.get("gpu_attached_again") == 1 and
               said, "detached",
               "kernels seen in the pause's first part %d, in its late part %d (want >0, 0); file: detached %s, "
               "attached again %s; summary %s" % (early, late, od.get("gpu_detached"), od.get("gpu_attached_again"),
                                                  "says so" if said else "does NOT say so"))
    else:
        report(early > 0 and late > 0 and "gpu_detached" not in od and "CUPTI detached" not in text, "attached",
               "gpu_detach=0: kernels seen in the pause's first part %d, in its late part %d (want >0, >0); no "
               "detach in the file or the summary: %s" % (early, late, "gpu_detached" not in od))


def check_fork(trace, out, paused):
    """trace_gpu.py fork traced with --trace-gpu: the child ended by itself (status 0) and wrote its own file, valid,
    with its calls and a note that GPU tracing is off in a forked child, no GPU work and no counters of the
    parent's; the parent's file has every driver launch linked to its kernel."""
    text = open(out).read()
    child = None
    status = None
    for line in text.splitlines():
        w = line.split()
        if len(w) == 2 and w[0] == "child" and w[1].isdigit():
            child = int(w[1])
        elif len(w) == 2 and w[0] == "child_status":
            status = int(w[1])
    cfile = trace[:-len(".json")] + ".%d.json" % child if child is not None else None
    try:
        c = load(cfile) if cfile else None
    except (OSError, ValueError) as e:
        c = None
        why = str(e)
    else:
        why = "no child pid" if c is None else ""
    if c is None:
        report(False, "child", "child %s status %s: no valid file %s (%s)" % (child, status, cfile, why))
    else:
        cc = counts_of(c)
        od = c.get("otherData", {})
        kern = sum(1 for e in c["traceEvents"] if e.get("cat") == "kernel")
        ok = (status == 0 and "child hung" not in text and cc.get("cuDeviceGetCount", 0) == 1 and kern == 0 and
              "forked child" in od.get("note", "") and "gpu_detached" not in od and od.get("pid") == child)
        report(ok, "child", "status %s; its file: %d calls %s, %d kernels, note %r%s" %
               (status, sum(cc.values()), sorted(cc.items()), kern, od.get("note", "")[:60],
                "" if "gpu_detached" not in od else ", the parent's detach counted"))
    d = load(trace)
    ev = d["traceEvents"]
    api = {e["args"]["seq"]: e for e in calls(d)}
    launches = [e for e in api.values() if e["name"].startswith("cuLaunchKernel")]
    linked = set(k["args"].get("external id") for k in ev if k.get("ph") == "X" and k.get("cat") == "kernel")
    n = sum(1 for e in launches if e["args"]["seq"] in linked)
    od = d.get("otherData", {})
    extra = ""
    ok = len(launches) > 0 and n == len(launches) and "parent done" in text
    if paused:
        ok = ok and od.get("gpu_detached") == 1 and od.get("gpu_attached_again") == 1
        extra = "; detached %s, attached again %s" % (od.get("gpu_detached"), od.get("gpu_attached_again"))
    report(ok, "parent", "%d of %d launches with their kernel after the fork%s" % (n, len(launches), extra))


def nvtx_nesting(ev, show=None):
    """Per thread, the nvtx B/E events in file order: (B events, unmatched Es, open at the end); with 'show' a
    list, the ranges left open are appended to it (tid, name, args, ts)."""
    stack, nb, bad = {}, 0, 0
    for e in ev:
        if e.get("cat") != "nvtx" or e.get("ph") not in ("B", "E"):
            continue
        k = (e.get("pid"), e.get("tid"))
        if e["ph"] == "B":
            nb += 1
            stack.setdefault(k, []).append(e)
        elif not stack.get(k):
            bad += 1
        else:
            stack[k].pop()
    if show is not None:
        for k, st in stack.items():
            show.extend((k[1], e["name"], e.get("args"), e["ts"]) for e in st)
    return nb, bad, sum(len(v) for v in stack.values())


def check_nccl(trace, capture=None):
    """NCCL's ranges carry args.domain NCCL, nest with the default domain's on the file's B/E stack; with
    'capture' (a capture=nvtx:NAME@NCCL run) one capture range per collective and calls recorded."""
    d = load(trace)
    ev = d["traceEvents"]
    nccl = [e for e in ev if e.get("cat") == "nvtx" and e.get("ph") == "B" and
            (e.get("args") or {}).get("domain") == "NCCL"]
    names = {}
    for e in nccl:
        names[e["name"]] = names.get(e["name"], 0) + 1
    doms = sorted({(e.get("args") or {}).get("domain", "") for e in ev if e.get("cat") == "nvtx"})
    open_ = []
    nb, bad, left = nvtx_nesting(ev, open_)
    if capture is None:
        if open_:
            names_of = {e.get("tid"): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
            for tid, name, args, ts in open_:
                print("OPEN tid %s (%s) %r %r at %.3f us" % (tid, names_of.get(tid), name, args, ts))
                for e in [e for e in ev if e.get("cat") == "nvtx" and e.get("tid") == tid][-12:]:
                    print("   ", e.get("ph"), repr(e.get("name")), e.get("args"), e.get("ts"))
        ar = max(names.values(), default=0)
        report(ar >= 5, "nccl-domain", "NCCL-domain ranges %s (domains seen %s)" % (sorted(names.items()), doms))
        report(bad == 0 and left == 0, "nccl-nesting",
               "%d B events, %d E without a B, %d left open; outer present: %s" %
               (nb, bad, left, any(e.get("name") == "outer" for e in ev if e.get("cat") == "nvtx")))
        best = max(names, key=lambda k: names[k], default="")
        print("NAME %s" % best)
        return
    od = d.get("otherData", {})
    n = len(calls(d))
    report(od.get("capture_ranges", 0) >= 5 and n > 0, "nccl-capture",
           "capture %r: %r ranges, %d calls recorded (%s)" %
           (od.get("capture"), od.get("capture_ranges"), n, sorted({e["name"] for e in calls(d)})[:6]))


def nvtx_ranges(ev):
    """(style, range) -> [count, total ns] of the ranges the events hold, as nsys's nvtx_sum counts them."""
    out, thr, ids = {}, {}, {}

    def add(key, t0, t1):
        r = out.setdefault(key, [0, 0])
        r[0] += 1
        r[1] += max(t1 - t0, 0)

    for e in ev:
        if e.get("cat") != "nvtx" or e.get("ph") not in ("B", "E", "b", "e"):
            continue
        ts = round(e["ts"] * 1000)
        args = e.get("args") or {}
        if e["ph"] in "be":
            k = (e.get("pid"), e.get("id"))
            if k in ids:
                o = ids.pop(k)
                if o[0] == "e" and e["ph"] == "b":
                    add(("StartEnd", args.get("domain", "") + ":" + e["name"]), ts, o[1])
                elif o[0] == "b" and e["ph"] == "e":
                    add(o[2], o[1], ts)
            else:
                ids[k] = (e["ph"], ts, ("StartEnd", args.get("domain", "") + ":" + e.get("name", "")))
            continue
        st = thr.setdefault((e.get("pid"), e.get("tid")), {"open": [], "ended": []})
        if e["ph"] == "E":
            if st["open"]:
                key, t0 = st["open"].pop()
                st["ended"].append((key, t0, ts))
            continue
        key = ("PushPop", args.get("domain", "") + ":" + e["name"])
        if args.get("continued"):
            # a slice of a range split by another domain's pop: the last ended slice of that name, 1 ns before
            hit = [i for i, x in enumerate(st["ended"]) if x[0] == key and x[2] + 1 == ts]
            if hit:
                x = st["ended"].pop(hit[-1])
                st["open"].append((key, x[1]))
                continue
        for key2, t0, t1 in st["ended"]:
            add(key2, t0, t1)
        st["ended"] = []
        st["open"].append((key, ts))
    for st in thr.values():
        for key, t0, t1 in st["ended"]:
            add(key, t0, t1)
    return out


def table_block(path, title):
    """The lines of the table under 'title' in a text (those starting with a blank, up to the next title)."""
    lines, on = [], False
    for line in open(path, errors="replace"):
        if line.startswith(title):
            on = True
        elif on and line.strip() and not line.startswith(" "):
            break
        elif on and line.startswith(" "):
            lines.append(line.rstrip("\n"))
    return lines


def check_nvtxsum(trace, stats, exit_err):
    ev = load(trace)["traceEvents"]
    want = nvtx_ranges(ev)
    threads = len({(e.get("pid"), e.get("tid")) for e in ev if e.get("cat") == "nvtx"})
    split = sum(1 for e in ev if e.get("cat") == "nvtx" and (e.get("args") or {}).get("continued"))
    got = {(r["style"], r["name"]): [r["count"], r["total_ns"]] for r in load(stats)["nvtx_sum"]}
    diff = [(k, want.get(k), got.get(k)) for k in sorted(set(want) | set(got)) if want.get(k) != got.get(k)]
    report(bool(want) and not diff, "nvtxsum-file",
           "%d ranges of %d names on %d threads (%d slices reopened) in the file, cushim stats' nvtx_sum the "
           "same%s; e.g. %s" %
           (sum(v[0] for v in want.values()), len(want), threads, split, "" if not diff else " - NOT: %s" % diff[:3],
            sorted(want.items(), key=lambda kv: -kv[1][0])[:3]))
    a, b = table_block(exit_err, "NVTX Range Summary"), table_block(stats[:-len(".json")] + ".txt", "NVTX Range Summary")
    report(bool(a) and a == b, "nvtxsum-exit", "the table at exit (%d lines) %s cushim stats'" %
           (len(a), "equals" if a == b else "DIFFERS from"))


MEMOPS = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device", "HtoH": "Host-to-Host",
          "PtoP": "Peer-to-Peer", "HtoA": "Host-to-Array", "AtoH": "Array-to-Host", "AtoA": "Array-to-Array",
          "AtoD": "Array-to-Device", "DtoA": "Device-to-Array"}


def check_memops(trace, stats):
    d = load(trace)
    want = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("memcpy", "memset"):
            if e["cat"] == "memset":
                op = "[CUDA memset]"
            else:
                op = "[CUDA memcpy %s]" % MEMOPS.get(e["name"].split(" ", 1)[-1], "Unknown")
            n, b = want.get(op, (0, 0))
            want[op] = (n + 1, b + e["args"]["bytes"])
    tables, cur = {}, None
    for line in open(stats):
        if line.startswith("CUDA GPU MemOps Summary by Time"):
            cur = "time"
        elif line.startswith("CUDA GPU MemOps Summary by Size"):
            cur = "size"
        elif line.startswith("CUDA "):
            cur = None
        elif cur and "[CUDA mem" in line:
            f = line.split("[", 1)
            cols = f[0].split()
            op = "[" + f[1].rstrip("\n").rstrip()
            tables.setdefault(cur, {})[op] = cols
    got_t = {op: int(c[2].replace(",", "")) for op, c in tables.get("time", {}).items()}
    got_s = {op: (int(c[1].replace(",", "")), c[0]) for op, c in tables.get("size", {}).items()}
    exp_s = {op: (n, "{:,.3f}".format(b / 1e6)) for op, (n, b) in want.items()}
    report(bool(want) and got_t == {op: n for op, (n, b) in want.items()} and got_s == exp_s, "memops",
           "copies and sets per operation in the file (count, bytes): %s; tables: time %s, size %s" %
           (sorted(want.items()), sorted(got_t.items()), sorted(got_s.items())))


def check_profiler(trace, out, exit_err, how, native_out):
    """trace_gpu.py profiler (torch.profiler over the middle range 'profiled': a second CUPTI client) traced with
    --trace-gpu (how 'gpu'; 'inject': with a CUPTI injection library too; 'first': trace_gpu.py profilerfirst, the
    profiler entered before the program's first CUDA work, no range 'before') or --trace alone ('nogpu'). With
    --trace-gpu the trace holds CUPTI's one callback subscriber (CUPTI before 13.3): every driver launch of
    'before', 'profiled' and 'after' still has its kernel linked to it, and what the other clients saw and said
    is reported, not judged. With --trace alone the trace leaves CUPTI to the program: the profiler sees as many
    kernels as in the untraced run (native_out), and the launches of the three ranges are in the file with no GPU
    work."""
    d = load(trace)
    ev = d["traceEvents"]
    od = d.get("otherData", {})
    api = {e["args"]["seq"]: e for e in calls(d)}
    spans = flat_spans(ev, ("before", "profiled", "after"))
    names = ("profiled", "after") if how == "first" else ("before", "profiled", "after")
    missing = [r for r in names if spans.get(r, [0, None])[1] is None]
    if missing:
        report(False, how, "NVTX ranges missing or unclosed: %s" % missing)
        return

    def seen(path):
        v = [int(l.split()[1]) for l in open(path).read().splitlines() if l.startswith("profiler_kernels ")]
        return v[0] if v else None

    gpu = how != "nogpu"
    kernels, linked = kernels_linked(ev, api)
    ok = "profiler done" in open(out).read()
    parts = []
    for r in names:
        n, launches = launches_linked(api, linked, spans[r])
        ok = ok and len(launches) > 0 and n == (len(launches) if gpu else 0)
        parts.append("%s %d/%d" % (r, n, len(launches)))
    prof, native = seen(out), seen(native_out)
    err = open(exit_err).read()
    said = ", 'CUPTI initialization failed'" if "CUPTI initialization failed" in err else ""
    if how == "inject":   # (the detail stays within the 220 characters the suite's table keeps)
        said += "; injection: %s" % (" ".join(
            l.replace("cupti_activity: ", "").replace("CUPTI_ERROR_", "").strip() for l in err.splitlines()
            if l.startswith("cupti_activity:"))[:80] or "said nothing")
    if gpu:
        report(ok, how, "launches linked: %s; torch.profiler %s kernels (untraced %s)%s" %
               (", ".join(parts), prof, native, said))
    else:
        ok = ok and prof is not None and prof == native and prof > 0 and not kernels and "gpu_correlation" not in od
        report(ok, how, "torch.profiler saw %s kernels, untraced %s; launches in the file (no GPU work: %d "
               "kernels): %s" % (prof, native, len(kernels), ", ".join(p.split("/")[1] for p in parts)))


def main():
    mode = sys.argv[1]
    if mode == "ranks":
        check_ranks(sys.argv[2:])
        return 0 if results and all(results) else 1
    if mode == "api":
        check_api(sys.argv[2], sys.argv[3])
    elif mode == "own":
        check_own(sys.argv[2], sys.argv[3])
    elif mode == "tsv":
        write_tsv(sys.argv[2], sys.argv[3])
        return 0
    elif mode == "gpu":
        check_gpu(sys.argv[2], sys.argv[3])
    elif mode == "memops":
        check_memops(sys.argv[2], sys.argv[3])
    elif mode == "capture":
        check_capture(sys.argv[2], sys.argv[3])
    elif mode == "nvtxsum":
        check_nvtxsum(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "detach":
        check_detach(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif mode == "fork":
        check_fork(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
    elif mode == "profiler":
        check_profiler(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
    elif mode == "nccl":
        check_nccl(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0 if results and all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
