#!/usr/bin/env python3
"""ctest-targets.py - the build targets that the tests with a ctest label need (tools/test.sh: the TSan stage
builds only what its concurrency tests run).

    python3 tools/ctest-targets.py BUILD_DIR LABEL

BUILD_DIR must have been configured with CMake's file API query for the code model (tools/test.sh creates
BUILD_DIR/.cmake/api/v1/query/codemodel-v2 before configuring). Prints, one per line: every shared library and
module (the shim, its plugins, the fakes and the tests' helper libraries: tests name them through directories and
variables as often as by path) and every executable whose file a test of that label names in its command or
environment (`cmake --build --target` builds what those depend on). Exits non-zero with a message when the file
API's reply is missing or no test has the label. A program a test reaches some other way and that is left out makes
that test fail (ctest cannot find it, or its script stops on the missing file), not pass.
"""
import glob
import json
import os
import re
import subprocess
import sys


def die(msg):
    print("ctest-targets.py: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        die("usage: ctest-targets.py BUILD_DIR LABEL")
    build, label = os.path.realpath(sys.argv[1]), sys.argv[2]
    replies = sorted(glob.glob(os.path.join(build, ".cmake/api/v1/reply/codemodel-v2-*.json")))
    if not replies:
        die("no code model in %s/.cmake/api/v1/reply (create .cmake/api/v1/query/codemodel-v2 there, then "
            "configure)" % build)
    reply_dir = os.path.dirname(replies[-1])
    with open(replies[-1]) as f:
        model = json.load(f)

    # artifact path (absolute) -> target name; and the target list by kind
    by_artifact, libraries = {}, set()
    for config in model["configurations"][:1]:
        for ref in config["targets"]:
            with open(os.path.join(reply_dir, ref["jsonFile"])) as f:
                t = json.load(f)
            if t["type"] in ("SHARED_LIBRARY", "MODULE_LIBRARY"):
                libraries.add(t["name"])
            for a in t.get("artifacts", []):
                p = a["path"] if os.path.isabs(a["path"]) else os.path.join(build, a["path"])
                by_artifact[os.path.realpath(p)] = t["name"]

    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1", "-L", label],
                         check=True, capture_output=True, text=True).stdout
    tests = json.loads(out).get("tests", [])
    if not tests:
        die("no test labelled %s in %s" % (label, build))

    # Each test's command as CMake wrote it (ctest's own listing leaves out the command of a test whose
    # program is not built yet, which here is every program)
    commands = {}
    for root, _, files in os.walk(build):
        if "CTestTestfile.cmake" in files:
            with open(os.path.join(root, "CTestTestfile.cmake")) as f:
                for line in f:
                    m = re.match(r'add_test\(\[=\[(.*?)\]=\] (.*)\)$', line.strip())
                    if m:
                        commands[m.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))

    wanted = set(libraries)
    for t in tests:
        if t["name"] not in commands:
            die("no add_test for %s in %s's CTestTestfile.cmake files" % (t["name"], build))
        words = list(commands[t["name"]])
        for p in t.get("properties", []):
            if p["name"] == "ENVIRONMENT":
                words += p["value"]
        for w in words:
            for tok in re.split(r"[=:,]", w):
                if not tok.startswith(build + "/"):
                    continue
                real = os.path.realpath(tok)
                if real in by_artifact:
                    wanted.add(by_artifact[real])
    print("\n".join(sorted(wanted)))


if __name__ == "__main__":
    main()
