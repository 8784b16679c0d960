#!/usr/bin/env python3
"""paired.py - launch-rate ratio of the shim to native, paired per round.

USAGE: python3 bench/gpu/paired.py bench-raw.txt [more bench-raw.txt ...]

bench/gpu/run.sh writes one line per process; each round runs every configuration once, one after
the other. Comparing each round's shim run with the same round's native run cancels the slow drift
of a shared GPU machine; the median of those ratios (with its interquartile range) is printed per
configuration, for each file and for all files pooled.
"""
import statistics
import sys


def rounds_of(path):
    rows = [dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            for line in open(path) if line.startswith("label=") and "FAILED" not in line]
    labels = []
    for r in rows:
        if r["label"] in labels:
            break
        labels.append(r["label"])
    n = len(labels)
    return [rows[i:i + n] for i in range(0, len(rows) - n + 1, n)]


def report(name, rounds):
    configs = [r["label"] for r in rounds[0] if r["label"] != "native"]
    for c in configs:
        ratios = []
        for r in rounds:
            d = {x["label"]: float(x["launches_per_s"]) for x in r}
            if "native" in d and c in d and d["native"] > 0:
                ratios.append(d[c] / d["native"])
        ratios.sort()
        q = len(ratios) // 4
        print("%-28s %-11s rounds %3d  launch rate vs native, median of paired ratios %.4f (IQR %.4f-%.4f)"
              % (name, c, len(ratios), statistics.median(ratios), ratios[q], ratios[len(ratios) - 1 - q]))


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    pooled = []
    for path in sys.argv[1:]:
        r = rounds_of(path)
        pooled += r
        report(path, r)
    if len(sys.argv) > 2:
        report("pooled", pooled)
    return 0


if __name__ == "__main__":
    sys.exit(main())
