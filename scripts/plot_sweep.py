#!/usr/bin/env python3
"""Plot a tuning sweep from `kiln tune ... --json`: time per config, the winner marked.

    kiln tune gemm --shape 1000x1000x1000 --json > sweep.json
    python3 scripts/plot_sweep.py sweep.json -o sweep.png      # one panel per problem
    python3 scripts/plot_sweep.py sweep.json --table           # the same data as text

Reads a single document (`kiln tune <op> --json`) or JSON Lines (`kiln tune --plan P --json`,
one line per problem).  Every evaluated candidate with a time is a bar (median, MAD as the error
bar), sorted by time; the winner is drawn in another colour and labelled; candidates that failed
validation are listed under the panel.  --table needs no matplotlib.
"""
import argparse
import json
import sys


def load_documents(text):
    """A single JSON document, or JSON Lines."""
    text = text.strip()
    if not text:
        return []
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def find_sweeps(node):
    """Every tune report in the document: an object with a "results" list."""
    if isinstance(node, dict):
        if isinstance(node.get("results"), list) and "op" in node:
            yield node
            return
        for value in node.values():
            yield from find_sweeps(value)
    elif isinstance(node, list):
        for value in node:
            yield from find_sweeps(value)


def config_text(config):
    if isinstance(config, dict):
        return " ".join(f"{k}={v}" for k, v in config.items()) or "(none)"
    return str(config)


def candidate_label(c):
    return f"{c.get('variant', '?')} [{config_text(c.get('config'))}]"


def sweep_rows(sweep):
    """(label, median_us, mad_us, is_winner) for timed candidates, fastest first; failures."""
    winner = sweep.get("winner") or {}
    winner_label = candidate_label(winner) if winner else None
    timed, failed = {}, []
    for c in sweep["results"]:
        label = candidate_label(c)
        if "median_us" in c:
            timed[label] = (label, float(c["median_us"]), float(c.get("mad_us", 0.0)), label == winner_label)
        elif c.get("outcome") not in (None, "ok"):
            failed.append(f"{label}: {c.get('outcome')} {c.get('reason', '')}".strip())
    return sorted(timed.values(), key=lambda r: r[1]), failed


def title_of(sweep):
    return f"{sweep.get('op', '?')} {sweep.get('problem', '')} on {sweep.get('device', '?')}"


def print_table(sweeps, out):
    for sweep in sweeps:
        rows, failed = sweep_rows(sweep)
        out.write(title_of(sweep) + "\n")
        for label, median, mad, is_winner in rows:
            out.write(f"  {'*' if is_winner else ' '} {median:12.3f} us  +- {mad:9.3f}  {label}\n")
        for f in failed:
            out.write(f"    failed: {f}\n")
        out.write("\n")


def plot(sweeps, output):
    import matplotlib  # only the plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(sweeps), 1, figsize=(10, 0.6 + 0.28 * max(len(sweep_rows(s)[0]) for s in sweeps) * len(sweeps)),
                             squeeze=False)
    for ax, sweep in zip(axes[:, 0], sweeps):
        rows, failed = sweep_rows(sweep)
        labels = [r[0] for r in rows]
        ax.barh(range(len(rows)), [r[1] for r in rows], xerr=[r[2] for r in rows],
                color=["tab:orange" if r[3] else "tab:blue" for r in rows])
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("median time (us); orange: the winner")
        ax.set_title(title_of(sweep) + (f"  ({len(failed)} failed)" if failed else ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(output, dpi=120)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="kiln tune --json output ('-' for stdin)")
    parser.add_argument("-o", "--output", default="sweep.png", help="image file (default sweep.png)")
    parser.add_argument("--table", action="store_true", help="print the sweep as text instead of plotting")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    sweeps = [s for doc in load_documents(text) for s in find_sweeps(doc)]
    if not sweeps:
        sys.stderr.write(f"plot_sweep.py: no tuning sweep (an object with \"results\") in {args.input}\n")
        return 1
    if args.table:
        print_table(sweeps, sys.stdout)
    else:
        plot(sweeps, args.output)
        sys.stderr.write(f"plot_sweep.py: wrote {args.output} ({len(sweeps)} problem(s))\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
