"""Adds up test cases for tools/test.

Per configuration: reads bazel's short summary (one line per test target) and
each target's test.log, where our harnesses print "unit: N passed, N failed".
A target without that line counts as one case; a target that failed or timed
out without it counts as one failure; a build failure counts as one failure.
With --total: adds the per-configuration results and prints the closing line.
"""

import os
import re
import sys

TARGET = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|TIMEOUT|NO STATUS|FLAKY|"
                    r"FAILED TO BUILD|INCOMPLETE)\b")
UNIT = re.compile(r"^unit: (\d+) passed, (\d+) failed")


def unit_counts(testlogs, label):
    package, name = label[2:].split(":")
    path = os.path.join(testlogs, package, name, "test.log")
    found = None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = UNIT.match(line)
                if m:
                    found = (int(m.group(1)), int(m.group(2)))
    except OSError:
        pass
    return found


def per_config(cfg, log, testlogs, rc):
    passed = failed = 0
    seen = 0
    with open(log, errors="replace") as f:
        for line in f:
            m = TARGET.match(line.strip())
            if not m:
                continue
            seen += 1
            label, state = m.group(1), m.group(2)
            counts = unit_counts(testlogs, label)
            ok = state in ("PASSED", "FLAKY")
            if counts is None:
                counts = (1, 0) if ok else (0, 1)
            elif not ok and counts[1] == 0:
                counts = (counts[0], 1)  # crashed or timed out after its cases
            passed += counts[0]
            failed += counts[1]
            if not ok:
                print("FAILED [%s] %s (%s)" % (cfg, label, state), file=sys.stderr)
    if rc not in (0, 3) or seen == 0:
        failed += 1  # the build itself failed, or no test ran
        print("FAILED [%s] bazel exited %d" % (cfg, rc), file=sys.stderr)
    print("%s %d %d" % (cfg, passed, failed))


def total(files):
    passed = failed = 0
    for path in files:
        with open(path) as f:
            for line in f:
                cfg, p, fl = line.split()
                print("  %-8s %d passed, %d failed" % (cfg, int(p), int(fl)))
                passed += int(p)
                failed += int(fl)
    print("tests: %d passed, %d failed" % (passed, failed))
    return failed == 0


if __name__ == "__main__":
    if sys.argv[1] == "--total":
        sys.exit(0 if total(sys.argv[2:]) else 1)
    per_config(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
