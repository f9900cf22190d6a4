#!/usr/bin/env python3
"""Summarise `kiln bench --regret --json`: geomean and max regret per op and per evidence kind, the
problems above a threshold, and op() against the fastest vendor-library candidate where one was timed
(for the issue-10 LLM table on 16-bit gemm).

    python3 scripts/regret_summary.py regret.json [more.json ...] [--over 1.10] [--vendor-table]

Several files (e.g. one run per part of a plan) are summarised as one.
"""
import argparse
import collections
import json
import math
import sys


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def vendor_us(p):
    """The fastest vendor-library candidate timed for this problem (kiln marks them), or None."""
    return (p["vendor"], p["vendor_us"]) if "vendor" in p else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--over", type=float, default=1.10)
    ap.add_argument("--vendor-table", action="store_true", help="op() against the vendor, per 16-bit gemm")
    a = ap.parse_args()
    problems = [p for f in a.json for p in json.load(open(f))["problems"]]
    rows = [p for p in problems if "regret" in p]
    errors = [p for p in problems if "error" in p]
    regrets = [p["regret"] for p in rows]
    print(f"measured {len(rows)} (errors {len(errors)}): geomean {geo(regrets) if rows else 0:.3f}, "
          f"max {max(regrets, default=0):.2f}")
    for key in ("op", "evidence"):
        groups = collections.defaultdict(list)
        for p in rows:
            groups[p[key].split(" (")[0] if key == "evidence" else p[key]].append(p["regret"])
        for k, v in sorted(groups.items()):
            print(f"  {k:42s} {len(v):4d}  geomean {geo(v):.3f}  max {max(v):.2f}  > {a.over}: {sum(x > a.over for x in v)}")
    for p in sorted((p for p in rows if p["regret"] > a.over), key=lambda p: -p["regret"]):
        print(f"  {p['regret']:.2f}x {p['op']} {p['problem']}: {p['chosen']} ({p['evidence']}); best {p['best']}")
    for p in errors:
        print(f"  error {p['op']} {p['problem']}: {p['error']}")
    if a.vendor_table:
        ratios = []
        print("\n| problem | op() runs | op() us | fastest vendor candidate | vendor us | vendor / op() |")
        print("| --- | --- | --- | --- | --- | --- |")
        for p in rows:
            if p["op"] != "gemm" or p["problem"].startswith("f32"):
                continue
            v = vendor_us(p)
            if not v:
                continue
            ratios.append(v[1] / p["op_us"])
            print(f"| {p['problem']} | {p['chosen']} | {p['op_us']:.1f} | {v[0]} | {v[1]:.1f} | {v[1] / p['op_us']:.2f}x |")
        if ratios:
            print(f"\n16-bit gemm, op() against the vendor: geomean {geo(ratios):.3f}x, min {min(ratios):.2f}x over {len(ratios)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head` closed the pipe: what it wanted was printed
        sys.stderr.close()
        sys.exit(0)
