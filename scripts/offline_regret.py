#!/usr/bin/env python3
"""Scores dispatch on the build host against times measured on a GPU.

    KILN_CONFIG_PATH=DATABASES python3 scripts/offline_regret.py REGRET.json "DEVICE KEY"

REGRET.json is a `kiln bench --regret --json` run (each problem's candidates timed on that GPU).
For each problem, `kiln explain --device-key KEY --json` names the variant op() would run with the
databases in KILN_CONFIG_PATH, and that variant's measured time (at the config the run timed) over
the fastest candidate's is charged.  Entries are trusted as `kiln db loo` trusts them (a stale
entry counts as current), and a variant the run did not time is left out, so the score compares
databases or rules with each other; `kiln bench --regret` on the GPU is the measurement.
KILN (default build-host/bin/kiln) names the kiln program.
"""
import json
import math
import os
import subprocess
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
path, key = sys.argv[1], sys.argv[2]
kiln = os.environ.get("KILN", os.path.join(os.path.dirname(__file__), "..", "build-host", "bin", "kiln"))
logs, above, by_op, unscored = [], [], {}, []
for r in json.load(open(path))["problems"]:
    if not r.get("candidate_us") or not r.get("best_us"):
        continue
    dtype, _, dims = r["problem"].partition("|")
    out = subprocess.run([kiln, "explain", r["op"], "--shape", dims.replace("|", ","), "--dtype", dtype,
                          "--device-key", key, "--json"], capture_output=True, text=True)
    try:
        variant = json.loads(out.stdout)["variant"]
    except (ValueError, KeyError):
        unscored.append(f"{r['op']} {r['problem']}: kiln explain failed: {out.stderr.strip()[:200]}")
        continue
    times = [t for c, t in r["candidate_us"].items() if c.split(" ")[0] == variant]
    if not times:
        unscored.append(f"{r['op']} {r['problem']}: {variant} was not timed in the run")
        continue
    regret = min(times) / r["best_us"]
    logs.append(math.log(regret))
    by_op.setdefault(r["op"], []).append(math.log(regret))
    if regret > 1.10:
        above.append((regret, r["op"], r["problem"], variant))
if not logs:
    sys.exit("no problem could be scored")
print(f"scored {len(logs)}: geomean {math.exp(sum(logs) / len(logs)):.4f}, above 1.10: {len(above)}")
for op, l in sorted(by_op.items()):
    print(f"  {op:16s} {len(l):3d}  geomean {math.exp(sum(l) / len(l)):.4f}  max {math.exp(max(l)):.3f}")
for regret, op, problem, variant in sorted(above, reverse=True):
    print(f"  {regret:.2f}x {op} {problem}: {variant}")
for u in unscored:
    print(f"  not scored: {u}")
