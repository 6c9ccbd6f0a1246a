#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Parses a Prometheus text exposition with prometheus_client's own parser.

usage: prom_parse.py METRICS.txt OUT.json

Writes {"types": {family: type}, "samples": [{"name", "labels", "value"}]};
exits 1 (with the parser's message) when the text does not parse, 77 when
prometheus_client is not installed (Debian python3-prometheus-client).
"""
import json
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("python3-prometheus-client not installed", file=sys.stderr)
    sys.exit(77)


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    types, samples = {}, []
    try:
        for fam in text_string_to_metric_families(text):
            types[fam.name] = fam.type
            for s in fam.samples:
                v = s.value
                samples.append({"family": fam.name, "name": s.name, "labels": s.labels,
                                "value": None if math.isnan(v) else v})
    except Exception as e:  # the parser raises ValueError and others on bad input
        print(f"does not parse: {e}", file=sys.stderr)
        return 1
    with open(sys.argv[2], "w") as f:
        json.dump({"types": types, "samples": samples}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
