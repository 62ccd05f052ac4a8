#!/usr/bin/python3
"""Parses a /metrics page (stdin) with prometheus_client, as Prometheus
would, and prints each sample as `name{label=value,...} value` with its
labels sorted, after one `# family NAME TYPE` line per family. Exits 1
with the parser's error when the page does not parse."""
import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and others
        print("parse error: %r" % (e,))
        return 1
    for f in families:
        print("# family %s %s" % (f.name, f.type))
        for s in f.samples:
            labels = ",".join("%s=%s" % (k, s.labels[k]) for k in sorted(s.labels))
            print("%s{%s} %r" % (s.name, labels, float(s.value)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
