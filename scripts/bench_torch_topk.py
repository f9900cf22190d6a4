#!/usr/bin/env python3
"""Times torch.topk on the GPU the way `kiln bench` times kiln (CUDA events around the call, the L2
flushed before each run, median of --runs after --warmup), so that kiln's topk figures have a
baseline measured on the same machine.

    python3 scripts/bench_torch_topk.py 1x67108864x100 64x1048576x64 16384x1024x8
    python3 scripts/bench_torch_topk.py --smallest --runs 50 1x1048576x1

Each shape is ROWSxNxK (rows of n uniform [-1, 1) values, f32 or --dtype f16/bf16, the k largest or
smallest, sorted).  Prints one line per shape: median and min in ms, and the read bandwidth
(element size * rows * n bytes).
"""
import argparse
import statistics
import sys


def parse_shape(text):
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"shape {text!r}: expected ROWSxNxK with positive integers")
    rows, n, k = (int(p) for p in parts)
    if k > n:
        raise argparse.ArgumentTypeError(f"shape {text!r}: k = {k} must be at most n = {n}")
    return rows, n, k


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes", nargs="+", type=parse_shape, metavar="ROWSxNxK")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per shape (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    ap.add_argument("--smallest", action="store_true", help="the k smallest instead of the largest")
    ap.add_argument("--no-flush", action="store_true", help="do not flush the L2 cache between runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32", help="element type (default f32)")
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0:
        ap.error("--runs must be >= 1 and --warmup >= 0")

    import torch  # imported here so that --help works without it

    if not torch.cuda.is_available():
        sys.exit("bench_torch_topk: no CUDA device visible to torch")
    dev = torch.device("cuda")
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    size = {"f32": 4, "f16": 2, "bf16": 2}[args.dtype]
    gen = torch.Generator(device=dev).manual_seed(args.seed)
    # Larger than any L2 (60 MB on an H200): writing it evicts the inputs.
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name(dev)}, {args.dtype}, largest={not args.smallest}, "
          f"median of {args.runs} runs after {args.warmup} warm-ups, L2 flushed: {not args.no_flush}")
    print(f"{'shape':>24} {'median_ms':>10} {'min_ms':>10} {'GB/s':>8}")
    for rows, n, k in args.shapes:
        x = (torch.rand((rows, n), generator=gen, device=dev, dtype=torch.float32) * 2 - 1).to(dtype)
        times = []
        for i in range(args.warmup + args.runs):
            if not args.no_flush:
                flush.zero_()
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            values, indices = torch.topk(x, k, dim=1, largest=not args.smallest, sorted=True)
            stop.record()
            stop.synchronize()
            if i >= args.warmup:
                times.append(start.elapsed_time(stop))
        # A sanity check that the call did what was asked (cheap, outside the timing).
        ref = x.max(dim=1).values if not args.smallest else x.min(dim=1).values
        if not torch.equal(values[:, 0], ref):
            sys.exit(f"bench_torch_topk: {rows}x{n}x{k}: the first value is not the row's extreme")
        med = statistics.median(times)
        gbs = float(size) * rows * n / (med * 1e-3) / 1e9
        print(f"{f'{rows}x{n}x{k}':>24} {med:>10.4f} {min(times):>10.4f} {gbs:>8.0f}")
        del x, values, indices
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
