#!/usr/bin/env python3
"""Writes a subset of a tuning plan: the problems of the named ops (and dtypes), in the order asked.

The session's last device minutes go furthest on the entries that matter most: after a plugin
change, re-tune its problems first (current entries are skipped when tuning starts from the
shipped database), e.g. the bf16 / f16 gemm points before the f32 ones:

    python3 scripts/filter_plan.py configs/plans/coverage.yaml --ops gemm,topk --dtypes bf16,f16,f32 \\
        > build-retune/coverage-subset.yaml
    kiln tune --plan build-retune/coverage-subset.yaml --runs 10 --finalists 3

Problems are kept in the plan's order within each (op, dtype) group; groups come in the order of
--ops, then of --dtypes (all dtypes, in plan order, when --dtypes is not given).  The plan's
header (name, strategy, budgets, comments) is copied as it is.  Reads the shipped plans' one
problem per line form: `  - {op: gemm, dtype: bf16, shape: "..."}`.
"""
import argparse
import re
import sys

PROBLEM = re.compile(r"^\s+-\s*\{\s*op:\s*([\w-]+)\s*,\s*dtype:\s*([\w-]+)\s*,")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plan", help="a plan file (configs/plans/*.yaml)")
    ap.add_argument("--ops", required=True, help="comma-separated op names, in the order to tune them")
    ap.add_argument("--dtypes", default="", help="comma-separated dtypes, in order (default: all)")
    args = ap.parse_args()
    ops = [o for o in args.ops.split(",") if o]
    dtypes = [d for d in args.dtypes.split(",") if d]
    if not ops:
        sys.exit("filter_plan.py: --ops names no op (expected e.g. --ops gemm,topk)")
    try:
        lines = open(args.plan, encoding="utf-8").read().split("\n")
    except OSError as e:
        sys.exit(f"filter_plan.py: cannot read the plan {args.plan!r}: {e.strerror}")
    header, groups, seen_problems, in_problems = [], {}, 0, False
    for line in lines:
        if not in_problems:
            header.append(line)
            in_problems = line.startswith("problems:")
            continue
        m = PROBLEM.match(line)
        if m:
            seen_problems += 1
            groups.setdefault((m.group(1), m.group(2)), []).append(line)
        elif line.strip() and not line.strip().startswith("#"):
            sys.exit(f"filter_plan.py: {args.plan}: a line in problems: that is not one problem per line: {line[:80]!r}")
    if not in_problems or seen_problems == 0:
        sys.exit(f"filter_plan.py: {args.plan} has no 'problems:' list of one-line problems")
    out = []
    for op in ops:
        order = dtypes or [d for (o, d) in groups if o == op]
        for d in dict.fromkeys(order):
            out += groups.get((op, d), [])
    if not out:
        sys.exit(f"filter_plan.py: no problem of ops {ops} and dtypes {dtypes or 'any'} in {args.plan}")
    sys.stdout.write("\n".join(header) + "\n" + "\n".join(out) + "\n")
    print(f"filter_plan.py: {len(out)} of {seen_problems} problems", file=sys.stderr)


if __name__ == "__main__":
    main()
