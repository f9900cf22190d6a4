#!/usr/bin/env python3
"""Lists, or drops, the entries of a tuning database whose alternatives cannot be checked as current.

An entry's alternatives carry the build id of their plugin (docs/tuning.md, "alternatives") since
the fifth session; older ones carry none, and dispatch takes them as current.  Where such an
alternative belongs to another plugin than the entry's winner, a rebuild of that plugin (a changed
kernel) leaves its time in the database unnoticed: the winner's build is still current, so neither
dispatch nor a resumed re-tune looks again (ninth session: histogram u8 2^24, whose cub winner kept a
thread_private config timed before the histogram kernels were rewritten).  Dropping those entries
from the database a re-tune starts from makes it time them again with the loaded builds.

  scripts/unverified_alternatives.py DB [--ops gemm,histogram] [--dtypes bf16,f16]
                                     [--tuned-before ISO-TIME] [--write OUT]

--tuned-before takes the time the op's plugin last changed (git log -1 --format=%cI -- plugins/DIR):
entries tuned after it timed the same build.
"""
import argparse
import collections
import datetime
import sys

import yaml

# The vendor plugin's variants (plugins/vendor_libs): an alternative names only its variant.
VENDOR_PREFIXES = ("gemm_cublas", "gemv_cublas", "add_cublas", "transpose_cublas", "dot_cublas", "reduce_sum_cub",
                   "histogram_cub", "histogram_range_cub", "topk_cub")


class _Loader(yaml.SafeLoader):
    """Keeps tuned_at as written (PyYAML would turn it into a datetime and write it back another way)."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def is_vendor(variant):
    return variant.startswith(VENDOR_PREFIXES)


def unverified(entry):
    """A vendor winner with an alternative of kiln's own plugin that records no build.  (The other
    way round, a kiln winner with a vendor alternative, the vendor plugin's build is the one of the
    day the entry was tuned unless the vendor plugin changed since; it has not since these entries
    were written, 2026-11-24.)"""
    winner_plugin = (entry.get("plugin") or {}).get("name")
    if not (winner_plugin == "vendor" or (winner_plugin is None and is_vendor(entry["variant"]))):
        return False
    return any(len(alt.split()) == 3 and not is_vendor(alt.split()[0]) for alt in entry.get("alternatives") or [])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--ops", help="comma-separated ops to consider (default: all)")
    ap.add_argument("--dtypes", help="comma-separated dtypes (the key's first field) to consider (default: all)")
    ap.add_argument("--tuned-before", help="only entries whose tuned_at is earlier (ISO 8601, UTC)")
    ap.add_argument("--write", metavar="OUT", help="write the database without those entries to OUT")
    a = ap.parse_args()
    ops = set(a.ops.split(",")) if a.ops else None
    dtypes = set(a.dtypes.split(",")) if a.dtypes else None
    with open(a.db) as f:
        db = yaml.load(f, Loader=_Loader)
    before = None
    if a.tuned_before:
        before = datetime.datetime.fromisoformat(a.tuned_before.replace("Z", "+00:00"))

    def tuned_before(entry):
        if before is None:
            return True
        at = entry.get("tuned_at")
        if at is None:
            return True
        return datetime.datetime.fromisoformat(str(at).replace("Z", "+00:00")) < before

    dropped = collections.Counter()
    for dev, by_op in db["devices"].items():
        for op, entries in by_op.items():
            if ops and op not in ops:
                continue
            for key in [k for k, e in entries.items() if unverified(e) and tuned_before(e) and (not dtypes or k.split("|")[0] in dtypes)]:
                del entries[key]
                dropped[(dev, op)] += 1
    for (dev, op), n in sorted(dropped.items()):
        print(f"{dev}  {op}: {n} entries won by a vendor variant whose kiln alternatives record no build")
    if a.write:
        db["entries"] = sum(len(e) for by_op in db["devices"].values() for e in by_op.values())
        with open(a.write, "w") as f:
            yaml.safe_dump(db, f, sort_keys=False, width=1000)
        print(f"wrote {a.write}: {db['entries']} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
