#!/usr/bin/env python3
"""Generate the coverage and held-out sweep plans (configs/plans/coverage.yaml, heldout.yaml).

coverage: a log-spaced grid per op, what a coverage tuning run measures on the H200 so that
  dispatch can reason from evidence about shapes nobody tuned.  GEMM: 1, 8, 64, 512, 4096 and
  16384 for m, n and k (capped at m*n*k <= 2^36 so each problem times in milliseconds), for
  tf32=0 and tf32=1 (and a few tf32=2 points), plus skinny (n = 1), deep-k and small-m rows; tens of problems per other op.
held-out: shapes the coverage grid never contains (odd sizes, DeepBench-style GEMMs, the shapes
  issue 14 reported), to measure dispatch on problems it has not seen (`kiln bench --regret`).

The two sets are disjoint by construction; this script checks it, and tests/tuner/
test_sweep_plans.cpp checks it again on the committed files together with each problem's
validity for its op.  Run from the repository root:

    python3 scripts/make_sweep_plans.py          # rewrites configs/plans/{coverage,heldout}.yaml
    python3 scripts/make_sweep_plans.py --check  # exit 1 when the committed files differ
"""
import argparse
import itertools
import sys
from pathlib import Path

GRID = [1, 8, 64, 512, 4096, 16384]        # m, n, k for tf32=0: powers of 8, and 16384
GRID_TF32 = [8, 64, 512, 4096, 16384]      # tf32=1: where tensor cores can be fed


def gemm(m, n, k, tf32=0):
    return ("gemm", "f32", f"{m}x{n}x{k}x{tf32}")


def gemm16(dtype, m, n, k, tb=1, c16=1):
    """A 16-bit GEMM; ta, tb and c16 are modes (X * W^T in bf16 is tb=1, c16=1)."""
    return ("gemm", dtype, f"{m}x{n}x{k},tb={tb},c16={c16}")


# 16-bit GEMM classes the coverage plan tunes: bf16 X * W^T written in bf16 (the common LLM
# layer) on the finest grid, then f32 output, row-major W, and f16 on a coarser one.
HALF_GRID_M = [1, 16, 128, 1024, 4096, 16384]
HALF_GRID_NK = [1024, 4096, 16384]
HALF_CLASSES_COARSE = [("bf16", 1, 0), ("bf16", 0, 1), ("f16", 1, 1)]


def half_gemm_coverage():
    items = [gemm16("bf16", m, n, k) for m, n, k in itertools.product(HALF_GRID_M, HALF_GRID_NK, HALF_GRID_NK)
             if m * n * k <= 2 ** 38]
    for dtype, tb, c16 in HALF_CLASSES_COARSE:
        items += [gemm16(dtype, m, n, k, tb, c16) for m, n, k in
                  itertools.product([1, 128, 4096], [1024, 8192], [1024, 8192])]
    return items


def coverage():
    items = []
    # GEMM, tf32=0: the log-spaced cube under the work cap (each problem times in milliseconds).
    cube = [(m, n, k) for m, n, k in itertools.product(GRID, GRID, GRID) if m * n * k <= 2 ** 36]
    items += [gemm(m, n, k, 0) for m, n, k in cube]
    # tf32=1: a coarser cube with at least two dims >= 64 (TF32 is a mode: it needs evidence of
    # its own, but only matters where tensor cores can be fed).
    cube1 = [(m, n, k) for m, n, k in itertools.product(GRID_TF32, GRID_TF32, GRID_TF32)
             if m * n * k <= 2 ** 36 and sum(d >= 64 for d in (m, n, k)) >= 2]
    items += [gemm(m, n, k, 1) for m, n, k in cube1]
    # Skinny and small-m rows (m = 32, 128 between the powers of 4), deep k.
    extra = []
    for tf32 in (0, 1):
        for m in (32, 128, 2048, 8192):
            for k in (256, 4096, 16384):
                extra.append(gemm(m, 1, k, tf32))
                extra.append(gemm(1, m, k, tf32))
        for mn in (32, 128, 512):
            for k in (65536,):
                extra.append(gemm(mn, mn, k, tf32))
        for m in (32, 128):
            for n in (2048, 8192):
                extra.append(gemm(m, n, 4096, tf32))
    items += extra
    # tf32=2 (3xTF32): a few points of its own, so that dispatch for an untuned allow_tf32=2
    # problem has a neighbour in its mode class and does not borrow the 8192^3 anchor's winner.
    items += [gemm(m, n, k, 2) for m, n, k in itertools.product((64, 512, 4096), repeat=3)
              if sum(d >= 512 for d in (m, n, k)) >= 2]
    items += half_gemm_coverage()

    # gemv (m x n): powers of 4 from 1 to 2^20, m*n <= 2^28.  A factor 4, not 16: the first held-out
    # run lost most where the fastest variant or config changes between grid points (50000 x 50,
    # 300000 x 9 ran the config of a point a factor 16 away).  Memory-bound ops tune in ~0.3 s.
    g = [4 ** i for i in range(11)]
    items += [("gemv", "f32", f"{m}x{n}") for m, n in itertools.product(g, g) if m * n <= 2 ** 28]
    # dot, reduce_sum (f32, i32), histogram: n = 4^i.
    items += [("dot", "f32", str(4 ** i)) for i in range(15)]
    items += [("reduce_sum", t, str(4 ** i)) for t in ("f32", "i32") for i in range(15)]
    items += [("histogram", "u8", str(4 ** i)) for i in range(16)]
    # add and transpose (m x n): rows from 1 to 2^20 in powers of 4 (like gemv), m*n <= 2^28; add
    # also i32 and f64 on a coarser grid (dtype is a mode: each needs its own evidence).
    g2 = [4 ** i for i in range(11)]
    for m, n in itertools.product(g2, g2):
        if m * n <= 2 ** 28:
            items.append(("add", "f32", f"{m}x{n}"))
            items.append(("transpose", "f32", f"{m}x{n}"))
    # i32 and f64 on the same grid: points a factor 256 apart left their small problems running
    # the config of a problem 256 times larger (held-out add i32 1000 x 1000: 1.45x).
    for t in ("i32", "f64"):
        items += [("add", t, f"{m}x{n}") for m, n in itertools.product(g2, g2) if m * n <= 2 ** 28]
    # Skinny add/transpose/gemv, where the fastest variant changes with the short side (transpose
    # 100 x 10^6: skinny wins at 16 rows, tiled at 64): the short side also at the odd powers of 2.
    for short in (2, 8, 32, 128, 512):
        for e in (14, 16, 18, 20):
            for m, n in ((short, 2 ** e), (2 ** e, short)):
                items.append(("add", "f32", f"{m}x{n}"))
                items.append(("transpose", "f32", f"{m}x{n}"))
                items.append(("gemv", "f32", f"{m}x{n}"))
    # histogram_range: n x bins.
    items += [("histogram_range", "f32", f"n={4 ** i},bins={b}")
              for i in range(2, 15, 2) for b in (16, 256, 4096, 65536)]
    # topk: rows x n x k, largest (mode) 1 and 0.
    for rows, n, k in itertools.product([1, 64, 4096], [1024, 32768, 1048576, 67108864], [1, 32, 256, 2048]):
        if k <= n and rows * n <= 2 ** 28:
            items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=1"))
            if k in (1, 32):
                items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=0"))
    items += half_memory_bound_coverage()
    # The extremes below may repeat a grid point (4 x 2^20 is both); each problem is listed once.
    seen = set()
    unique = []
    for op, dt, shape in items + extremes():
        key = (op, dt, canonical(op, shape))
        if key not in seen:
            seen.add(key)
            unique.append((op, dt, shape))
    return unique


def half_memory_bound_coverage():
    """bf16 (and some f16) for the memory-bound ops: dtype and the out16/y16 output modes are
    matched exactly, so each class needs evidence of its own; a coarse grid (factors of 64) is
    enough for ops whose best config changes slowly with size."""
    items = []
    for i in (2, 5, 8, 11, 14):
        for out16 in (0, 1):
            items.append(("dot", "bf16", f"{4 ** i},out16={out16}"))
            items.append(("reduce_sum", "bf16", f"{4 ** i},out16={out16}"))
    g = [16, 1024, 65536, 1048576]
    for m, n in itertools.product(g, g):
        if m * n <= 2 ** 28:
            items.append(("gemv", "bf16", f"{m}x{n}"))
            items.append(("add", "bf16", f"{m}x{n}"))
            items.append(("transpose", "bf16", f"{m}x{n}"))
    for m, n in ((1024, 1024), (65536, 1024), (1024, 65536)):
        items.append(("gemv", "bf16", f"{m}x{n},y16=1"))
        items.append(("add", "f16", f"{m}x{n}"))
        items.append(("transpose", "f16", f"{m}x{n}"))
    for rows, n, k in itertools.product([1, 64, 4096], [1024, 1048576], [8, 256]):
        if rows * n <= 2 ** 28:
            items.append(("topk", "bf16", f"rows={rows},n={n},k={k},largest=1"))
    items += thin_class_coverage()
    return items


def thin_class_coverage():
    """Mode classes that had no entry, or a handful (sixth session): with no evidence in its class a
    problem runs the vendor fallback, which for topk is a full CUB sort (10x and more behind) and
    for add on one long row cuBLAS geam (15x).  f16 mirrors the bf16 grids above (same bytes, its
    own class); largest=0 top-k in 16 bits and i32 transpose get a coarse grid."""
    items = []
    for i in (2, 8, 14):
        for out16 in (0, 1):
            items.append(("dot", "f16", f"{4 ** i},out16={out16}"))
            items.append(("reduce_sum", "f16", f"{4 ** i},out16={out16}"))
    g = [16, 1024, 65536, 1048576]
    for m, n in itertools.product(g, g):
        if m * n <= 2 ** 28:
            items.append(("gemv", "f16", f"{m}x{n}"))
            items.append(("add", "f16", f"{m}x{n}"))
            items.append(("transpose", "f16", f"{m}x{n}"))
            items.append(("transpose", "i32", f"{m}x{n}"))
    for m, n in ((1024, 1024), (65536, 1024), (1024, 65536)):
        items.append(("gemv", "f16", f"{m}x{n},y16=1"))
    for rows, n, k in itertools.product([1, 64, 4096], [1024, 1048576], [8, 256]):
        if rows * n <= 2 ** 28:
            items.append(("topk", "f16", f"rows={rows},n={n},k={k},largest=1"))
    for dt in ("bf16", "f16"):
        for rows, n in ((1, 1048576), (64, 32768), (4096, 1024)):
            items.append(("topk", dt, f"rows={rows},n={n},k=8,largest=0"))
    items += long_half_rows()
    return items


def long_half_rows():
    """Single 16-bit top-k rows past 2^20 (twentieth session): topk_grid_select holds rows to
    about 6.5 M elements in shared memory and streams longer ones, topk_sample_select takes them
    all, and which wins moves with n and k (H200: the grid 1.5x ahead at 5-8 M, even or behind at
    2^24).  Without these a 16-bit row of millions was dispatched from 2^20 rows and f32 ones."""
    items = []
    for dt in ("bf16", "f16"):
        for n, k in itertools.product((4194304, 16777216), (8, 256, 2048)):
            items.append(("topk", dt, f"rows=1,n={n},k={k},largest=1"))
    return items


def extremes():
    """Coverage of the corners the first held-out measurement exposed (docs/performance.md,
    2026-11-24): 1 x N and N x 1 far past the square grid, a few rows of huge N, odd extents (which
    rule out vectorised configs, so aligned entries are no evidence for them), small n per row for
    gemv, the whole k range for largest=0 top-k, tiny and mid-size top-k rows, and bin counts
    between the histogram grid's factors of 16.  Every shape is off the held-out list (checked)."""
    items = []
    # add, transpose: one row or one column of 2^22 .. 2^27 elements; 2 and 4 rows of huge n.
    for e in (22, 24, 26, 27):
        for m, n in ((1, 2 ** e), (2 ** e, 1)):
            items.append(("add", "f32", f"{m}x{n}"))
            if e <= 26:
                items.append(("transpose", "f32", f"{m}x{n}"))
    for m in (2, 4):
        for e in (20, 24, 26):
            items.append(("add", "f32", f"{m}x{2 ** e}"))
            items.append(("transpose", "f32", f"{m}x{2 ** e}"))
    # Odd extents (no 16-byte alignment of rows): add, transpose and gemv.
    odd = [(255, 255), (4095, 4095), (1, 1048575), (1048575, 1), (65535, 3), (3, 65535), (255, 65535),
           (65535, 255), (16383, 1023), (1023, 16383), (5, 5)]
    for m, n in odd:
        items.append(("add", "f32", f"{m}x{n}"))
        items.append(("transpose", "f32", f"{m}x{n}"))
        items.append(("gemv", "f32", f"{m}x{n}"))
    # gemv: a few columns per row (n = 2, 4, 8) over many rows, and a few rows of long n.
    for m in (4096, 65536, 1048576, 16777216):
        for n in (2, 4, 8):
            items.append(("gemv", "f32", f"{m}x{n}"))
    for m in (2, 4, 8):
        for n in (65536, 1048576, 16777216):
            items.append(("gemv", "f32", f"{m}x{n}"))
    # topk: largest=0 over the k range largest=1 has; short rows (n = 8, 128) and mid-size batches.
    for rows, n, k in itertools.product([1, 64, 4096], [1024, 32768, 1048576, 67108864], [256, 2048]):
        if k <= n and rows * n <= 2 ** 28:
            items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=0"))
    for rows, n, k in itertools.product([1, 64, 4096, 65536], [8, 128], [1, 8]):
        if k <= n:
            for largest in (1, 0):
                items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest={largest}"))
    for rows, n, k in itertools.product([512], [4096, 131072], [1, 16, 128]):
        items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=1"))
    # topk between the grid's octaves (n a factor 32 apart, rows 64): where row select, sample
    # select and radix select trade places (leave-one-out regret 1.22 on the coarse grid alone).
    for rows, n, k in itertools.product([1, 8, 64, 512, 4096], [8192, 262144, 8388608], [4, 64, 512]):
        if k <= n and rows * n <= 2 ** 28:
            items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=1"))
    # histogram_range: bin counts 1, 64, 1024 and 16384 between the grid's 16, 256, 4096, 65536.
    items += [("histogram_range", "f32", f"n={4 ** i},bins={b}")
              for i in range(2, 15, 2) for b in (1, 64, 1024, 16384)]
    items += between_octaves()
    return items


def between_octaves():
    """Points at 3 * 2^j, between the grids' powers of 2, 4 and 8, where the fastest variant changes
    over less than the grid's step: skinny f32 GEMMs (split k against cuBLAS as n goes from 8 to
    64), gemv with a few dozen columns (or rows), and many short top-k rows (row select, block
    merge and sample select trade places between rows of 1024 and 8192).  The fifth session's
    held-out misses were in these regions (7680 x 24 x 2560 at 1.18x, 50000 x 50 at 1.12x, 1000
    rows of 3000 at 1.71x); these points are off the held-out list (checked) and off its shapes.
    The skinny GEMMs also at 3072 for the long side and k (eleventh session): along the diagonal
    split k overtakes cuBLAS between 1536 and 6144 (cuBLAS 1.24x faster at 1536 x 16 x 1536, split
    k 1.07x at 6144 x 16 x 6144), and interpolating across that factor of 4 sent the held-out
    2560 x 16 x 2560 and 7680 x 24 x 2560 to cuBLAS at 1.25x and 1.81x the split-k time."""
    items = []
    for big, small, k in itertools.product((1536, 3072, 6144), (2, 16, 32, 128), (1536, 3072, 6144)):
        items.append(gemm(big, small, k, 0))
        items.append(gemm(small, big, k, 0))
    for big, small in itertools.product((8192, 65536, 524288), (12, 24, 48, 96)):
        items.append(("gemv", "f32", f"{big}x{small}"))
        items.append(("gemv", "f32", f"{small}x{big}"))
    for rows, n, k in itertools.product((256, 2048, 16384), (1536, 3072, 6144), (2, 8, 32)):
        items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=1"))
    # topk_warp_select (one warp per row) wins only with rows enough to fill the GPU, so in this
    # region the fastest variant changes with rows as well as n and k: with it, leave-one-out over
    # the points above scored 1.057 with 21 of 163 top-k entries above 1.10.  Rows between.
    for rows, n, k in itertools.product((512, 1024, 4096, 8192), (1024, 2048, 4096), (2, 8, 32, 128)):
        items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=1"))
    # The same region for largest=0 (fifteenth session): with no smallest-k entry near, the blind
    # draw of seed 20261133 sent f32 4159 rows of 4613, k = 5, largest = 0 to a far neighbour's
    # topk_sample_select at 1.49x topk_warp_select's time.
    for rows, n, k in itertools.product((1024, 4096, 16384), (2048, 8192), (4, 32)):
        items.append(("topk", "f32", f"rows={rows},n={n},k={k},largest=0"))
    return items


# DeepBench-style GEMM sizes (M N K of its training/inference lists) and the shapes issue 14
# measured; none lies on the coverage grid.
DEEPBENCH = [
    (1760, 16, 1760), (1760, 32, 1760), (1760, 64, 1760), (1760, 128, 1760), (1760, 7000, 1760),
    (2048, 16, 2048), (2048, 7000, 2048), (2560, 16, 2560), (2560, 64, 2560), (2560, 7000, 2560),
    (4096, 7000, 4096), (5124, 9124, 2560), (35, 8457, 2560), (35, 8457, 4096), (7680, 24, 2560),
    (3072, 128, 1024), (512, 24000, 2816), (7680, 5481, 2560), (1024, 700, 512), (6144, 24, 2560),
]
ISSUE14 = [(511, 1023, 257), (64, 4096, 65536), (35, 700, 2048), (4097, 1, 4095), (1000, 1000, 1000)]
ODD = [(2, 2, 2), (3, 5, 7), (17, 33, 65), (127, 129, 131), (100, 1, 100), (1, 3000, 3000), (33, 4097, 33),
       (999, 999, 9999), (20000, 3, 300), (257, 257, 70000), (6000, 6000, 600), (12, 12, 12)]


# LLM-style 16-bit GEMMs (issue 10): m from 1 to 16384, n and k from the layer widths of common
# models, both B layouts; none lies on the coverage grid (5120, 11008, 14336, 28672 never do).
LLM = [(1, 4096, 11008), (1, 28672, 5120), (7, 14336, 4096), (32, 5120, 14336), (96, 11008, 4096),
       (333, 4096, 5120), (512, 28672, 4096), (1000, 5120, 5120), (2048, 14336, 5120), (2048, 4096, 28672),
       (3000, 11008, 8192), (4096, 5120, 14336), (5000, 8192, 5120), (8192, 11008, 4096), (8192, 4096, 14336),
       (16384, 5120, 4096), (16384, 8192, 11008), (12000, 14336, 8192), (64, 8192, 28672), (4096, 28672, 8192)]


def heldout():
    items = [gemm(m, n, k, 0) for m, n, k in DEEPBENCH + ISSUE14 + ODD]
    items += [gemm16("bf16", m, n, k, 1, 1) for m, n, k in LLM]
    items += [gemm16("bf16", m, n, k, 0, 1) for m, n, k in LLM[::4]]
    items += [gemm(m, n, k, 1) for m, n, k in DEEPBENCH[:12] + [(511, 1023, 257), (1000, 1000, 1000)]]
    items += [("gemv", "f32", s) for s in ["4097x33", "33x100003", "1x100003", "100003x1", "777x5000", "12345x678",
                                             "3x3", "50000x50", "1000x1000", "2047x2049", "9x300000", "300000x9"]]
    odd_n = ["3", "1000", "77777", "1000003", "5000001", "33554431", "100000007", "268435455", "12345", "999999"]
    items += [("dot", "f32", n) for n in odd_n]
    items += [("reduce_sum", "f32", n) for n in odd_n] + [("reduce_sum", "i32", n) for n in odd_n[:6]]
    items += [("histogram", "u8", n) for n in odd_n + ["1000000007"]]
    items += [("add", "f32", s) for s in ["1x268435456", "3x100000007", "1023x1025", "4097x4099", "100x1000000",
                                            "1000000x3", "7x7", "12345x6789", "1x1000003", "60000x2000"]]
    items += [("add", "i32", "1000x1000"), ("add", "f64", "3x100003")]
    items += [("transpose", "f32", s) for s in ["4097x4099", "100x1000000", "1000000x100", "1025x1023", "1x65537",
                                                  "65537x1", "3x5", "12345x6789", "33x100003", "2000x3000"]]
    items += [("histogram_range", "f32", f"n={n},bins={b}") for n, b in
              [(100003, 7), (16777215, 1000), (268435455, 256), (1000, 100003), (5000000, 33), (77777, 1),
               (33554431, 4095), (1000003, 65537), (12345, 12), (100000007, 100)]]
    items += [("topk", "f32", f"rows={r},n={n},k={k},largest={l}") for r, n, k, l in
              [(3, 1025, 1, 0), (1, 67108863, 100, 1), (1, 67108864, 100, 1), (7, 100003, 50, 1), (1000, 3000, 10, 1),
               (1, 999999, 2000, 0), (5000, 5000, 5, 1), (64, 1000000, 64, 1), (4096, 32767, 33, 0),
               (2, 3, 3, 1), (128, 20000, 500, 1)]]
    # bf16 for the memory-bound ops (odd sizes, off the coverage grid).
    items += [("dot", "bf16", f"{n},out16={o}") for n, o in (("77777", 0), ("33554431", 1), ("1000003", 0))]
    items += [("reduce_sum", "bf16", f"{n},out16={o}") for n, o in (("77777", 1), ("33554431", 0), ("5000001", 1))]
    items += [("gemv", "bf16", s) for s in ("4097x33", "777x5000", "12345x678")]
    items += [("add", "bf16", s) for s in ("4097x4099", "1x1000003", "12345x6789")]
    items += [("transpose", "bf16", s) for s in ("4097x4099", "1025x1023", "12345x6789")]
    items += [("topk", "bf16", s) for s in ("rows=7,n=100003,k=50,largest=1", "rows=1000,n=3000,k=10,largest=1")]
    # f16 and i32 classes that had no coverage before the sixth session.
    items += [("topk", "f16", s) for s in ("rows=7,n=100003,k=50,largest=1", "rows=3000,n=1500,k=4,largest=1",
                                           "rows=33,n=70000,k=16,largest=0")]
    items += [("gemv", "f16", s) for s in ("4097x33", "777x5000")]
    items += [("add", "f16", s) for s in ("1x1000003", "12345x6789")]
    items += [("transpose", "f16", "4097x4099"), ("transpose", "i32", "3000x5000")]
    items += [("reduce_sum", "f16", "33554431,out16=0"), ("dot", "f16", "77777,out16=1")]
    return items


HEADERS = {
    "coverage": """# Coverage sweep (generated by scripts/make_sweep_plans.py; do not edit by hand).
# A log-spaced grid per op: GEMM m, n, k in {1, 8, 64, 512, 4096, 16384} (m*n*k <= 2^36) for
# tf32=0 and a coarser cube for tf32=1, a few tf32=2 points, plus skinny (n = 1, m = 1), deep-k and small-m rows; bf16/f16 GEMMs
# (X * W^T written in bf16 on a finer grid, other 16-bit modes coarser); tens of problems per other op,
# gemv, add and transpose on powers of 4; with the extremes (1 x N and N x 1 huge, odd extents, few
# columns, short top-k rows, bin counts between the grid's).  The
# evidence dispatch reasons from for shapes nobody tuned.  Cheap by design: anneal with a budget
# of 12 evaluations and 4 s of search per problem.  See docs/tuning.md ("Sweep sets").
#
#   kiln tune --plan coverage --runs 10 --finalists 3
""",
    "heldout": """# Held-out sweep (generated by scripts/make_sweep_plans.py; do not edit by hand).
# Shapes the coverage grid never contains: DeepBench-style GEMMs, the shapes issue 14 measured,
# odd, tiny, skinny, deep-k, LLM-style bf16 GEMMs, 1xN and many-small-rows problems.  For measuring dispatch on
# unseen problems (`kiln bench --regret`), not for tuning into the shipped database.  As a plan
# it runs with the same cheap budget as coverage.yaml.
#
#   kiln tune --plan heldout --no-store ...      # e.g. the best candidate per problem
""",
}


def render(name, items):
    lines = [HEADERS[name], f"name: {name}", "strategy: anneal", "budget_evals: 12", "budget_seconds: 4", "problems:"]
    current = None
    for op, dtype, shape in items:
        if op != current:
            lines.append(f"  # {op}")
            current = op
        lines.append(f'  - {{op: {op}, dtype: {dtype}, shape: "{shape}"}}')
    return "\n".join(lines) + "\n"


def canonical(op, shape):
    """The problem as dims in schema order, with defaults filled (for the disjointness check)."""
    parts = shape.split(",")
    if "=" in parts[0]:
        return tuple(int(kv.split("=")[1]) for kv in parts)
    dims = tuple(int(x) for x in parts[0].split("x"))
    if op == "gemm" and len(dims) == 3:
        dims += (0,)
    return dims + tuple(sorted((kv.split("=")[0], int(kv.split("=")[1])) for kv in parts[1:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    args = ap.parse_args()
    cov, held = coverage(), heldout()
    for name, items in (("coverage", cov), ("heldout", held)):
        keys = [(op, dt, canonical(op, s)) for op, dt, s in items]
        dup = len(keys) - len(set(keys))
        if dup:
            sys.exit(f"{name}: {dup} duplicate problems")
    overlap = {(op, dt, canonical(op, s)) for op, dt, s in cov} & {(op, dt, canonical(op, s)) for op, dt, s in held}
    if overlap:
        sys.exit(f"coverage and heldout overlap: {sorted(overlap)[:5]}")
    root = Path(__file__).resolve().parent.parent / "configs" / "plans"
    status = 0
    for name, items in (("coverage", cov), ("heldout", held)):
        text = render(name, items)
        path = root / f"{name}.yaml"
        counts = {}
        for op, _, _ in items:
            counts[op] = counts.get(op, 0) + 1
        summary = ", ".join(f"{op} {n}" for op, n in counts.items())
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path} is out of date: run scripts/make_sweep_plans.py")
                status = 1
        else:
            path.write_text(text)
        print(f"{name}: {len(items)} problems ({summary})")
    return status


if __name__ == "__main__":
    sys.exit(main())
