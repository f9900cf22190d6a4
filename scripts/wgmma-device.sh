#!/usr/bin/env bash
# gemm_wgmma on an H200 in one command: build the gemm and vendor plugins, the CLI and
# test_gemm_wgmma_gpu; run the test; compute-sanitizer memcheck and racecheck on the quick sizes;
# then `kiln tune` timings of gemm_wgmma against cuBLAS / cuBLASLt (--no-store), summarised.
#
#   scripts/wgmma-device.sh OUT [stage...]     stages: build test sanitize f32 bf16 ncu llm ncusmall llmbench rows
#                                              (default: build test sanitize f32 bf16 ncu)
#   llmbench: `kiln bench ... --vs vendor --csv` (default configs, interleaved) over BENCH_SHAPES
#   (design set) and HELDOUT_SHAPES, summarised per set with the geomean of cuBLASLt / gemm_wgmma.
#   rows: `kiln tune --csv` of every gemm_wgmma row and cuBLASLt's algos over ROW_SHAPES (small m),
#   to fit default_config_for's time model; the summary lists the best row of each kind.
#   TEST_FILTER (Catch2 tags, e.g. "[swap],[splitk]") narrows the test stage; SAN_TESTS the sanitizer's.
#
# Every stage has its own time limit so that one slow stage cannot eat the lease.
set -uo pipefail
out=${1:?usage: scripts/wgmma-device.sh OUT [stage...]}
shift
stages=${*:-build test sanitize f32 bf16 ncu}
mkdir -p "$out"
cd "$(dirname "$0")/.."
B=$(realpath -m "${KILN_BUILD_DIR:-build-dev}")
S="$out/summary.txt"
note() { echo "$*" | tee -a "$S"; }
export KILN_CACHE_DIR=$B/cache KILN_PLUGIN_PATH=$B/lib/kiln/plugins KILN_CONFIG_PATH=
K=$B/bin/kiln
T=$B/bin/test_gemm_wgmma_gpu
# kiln tune ... --csv for one shape, appended to $out/tune.csv (header once).
tune() {  # dtype shape variants [extra...]
  local dt=$1 shape=$2 vars=$3
  shift 3
  local tmp=$out/.tune.tmp
  timeout "${TUNE_TIMEOUT:-90}" "$K" tune gemm --dtype "$dt" --shape "$shape" --variants "$vars" --no-store --csv "$@" >"$tmp" 2>>"$out/tune.err"
  local rc=$?
  [ -s "$out/tune.csv" ] || head -1 "$tmp" >"$out/tune.csv"
  tail -n +2 "$tmp" | sed "s/^gemm,/gemm,${TAG:-}/" >>"$out/tune.csv"
  [ $rc -eq 0 ] || note "tune $dt $shape: rc=$rc"
}
# kiln tune ... --json for one shape (finalists re-timed interleaved, so the order of timing and the
# card's heating fall on every finalist alike), appended to $out/tune.jsonl, one line per problem.
tunej() {  # dtype shape variants [extra...]
  local dt=$1 shape=$2 vars=$3
  shift 3
  timeout "${TUNE_TIMEOUT:-90}" "$K" tune gemm --dtype "$dt" --shape "$shape" --variants "$vars" --no-store --json \
    --finalists 8 "$@" >"$out/.tune.json" 2>>"$out/tune.err" || note "tune $dt $shape: rc=$?"
  python3 -c 'import json,sys; t=open(sys.argv[1]).read(); print(json.dumps(json.loads(t[t.index("{"):])))' \
    "$out/.tune.json" >>"$out/tune.jsonl" 2>>"$out/tune.err"
}
for stage in $stages; do
  t0=$SECONDS
  case $stage in
    build)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$S"
      cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
        cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
        cmake --build "$B" -j16 --target kiln_cli kiln_gemm kiln_vendor test_gemm_wgmma_gpu >>"$out/build.log" 2>&1
      rc=$?
      note "build: rc=$rc ($((SECONDS - t0)) s)"
      if [ $rc -ne 0 ]; then grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; fi
      rm -f "$out/build.log"  # at most 8 files come back from the device tool
      ;;
    test)
      timeout "${TEST_TIMEOUT:-200}" "$T" ${TEST_FILTER:+"$TEST_FILTER"} >"$out/test.log" 2>&1
      note "test_gemm_wgmma_gpu: rc=$? ($((SECONDS - t0)) s)"
      grep -E "3xTF32: largest|test cases|assertions|FAILED|failed" "$out/test.log" | head -20 | tee -a "$S"
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        t1=$SECONDS
        KILN_TEST_QUICK=1 timeout "${SAN_TIMEOUT:-120}" compute-sanitizer --tool $tool --error-exitcode 3 "$T" \
          "${SAN_TESTS:-[3xtf32]}" >"$out/san-$tool.log" 2>&1
        note "compute-sanitizer $tool ${SAN_TESTS:-[3xtf32]}: rc=$? ($((SECONDS - t1)) s)"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|assertions" "$out/san-$tool.log" | tail -3 | tee -a "$S"
      done
      ;;
    f32)  # 3xTF32 against cuBLAS SGEMM (true fp32); error column vs the vendor oracle (8192^3) or f64 (2048^3)
      TUNE_TIMEOUT=150 tunej f32 8192x8192x8192,tb=1,tf32=2 gemm_wgmma,gemm_cublas,gemm_cublaslt --runs 10
      TUNE_TIMEOUT=90 tunej f32 8192x8192x8192,tb=1,tf32=1 gemm_wgmma,gemm_cublaslt --runs 10
      TUNE_TIMEOUT=60 tune f32 2048x2048x2048,tb=1,tf32=2 gemm_wgmma,gemm_cublas,gemm_cublaslt --no-oracle --reference-first --runs 10
      TUNE_TIMEOUT=60 tune f32 2048x2048x2048,tf32=2 gemm_wgmma,gemm_cublas,gemm_3xtf32_mma --no-oracle --reference-first --runs 10
      note "f32 stage: $((SECONDS - t0)) s"
      ;;
    bf16)
      for shape in 4096x4096x4096 8192x8192x8192; do
        for c16 in 0 1; do tunej bf16 "$shape,tb=1,c16=$c16" gemm_wgmma,gemm_cublaslt; done
      done
      note "bf16 stage: $((SECONDS - t0)) s"
      ;;
    ncu)  # launch statistics of the cluster row and of the same tile without a cluster
      for c in 1 2; do
        timeout 120 ncu --clock-control none --kernel-name-base mangled -k "regex:Li128ELi256ELi4ELi2ELb0ELi${c}ELb0EE" -c 1 \
          --section LaunchStats --section Occupancy --section SpeedOfLight "$K" tune gemm --dtype bf16 \
          --shape 4096x4096x4096,tb=1 --variants gemm_wgmma --no-store --runs 2 --warmup 0 --finalists 1 \
          >"$out/ncu-cluster$c.txt" 2>&1
        grep -E "Grid Size|Cluster Size|Max Active Clusters|Duration|Compute \(SM\) Throughput|L2 Cache Throughput|Waves Per SM|Achieved Occupancy" \
          "$out/ncu-cluster$c.txt" | sed "s/^/cluster=$c /" | tee -a "$S"
      done
      ;;
    llm)  # bf16 LLM-style shapes (m x n x k; n, k from the usual layer widths), C bf16, both B layouts
      LLM_SHAPES=${LLM_SHAPES:-"1x4096x4096,tb=1 16x4096x4096,tb=1 128x11008x4096,tb=1 512x4096x11008,tb=1
        2048x14336x4096,tb=1 2048x4096x14336,tb=1 8192x4096x4096,tb=1 8192x28672x8192,tb=1 16384x8192x8192,tb=1
        16384x5120x5120,tb=1 1x28672x8192,tb=1 16x8192x28672,tb=1 128x5120x5120,tb=1 512x14336x4096,tb=1
        2048x8192x8192,tb=1 8192x8192x28672,tb=1 1x11008x4096,tb=0 16x14336x4096,tb=0 128x4096x4096,tb=0
        512x8192x8192,tb=0 2048x4096x11008,tb=0 8192x11008x4096,tb=0 16384x4096x4096,tb=0 2048x28672x8192,tb=0"}
      for s in $LLM_SHAPES; do tunej bf16 "$s,c16=1" gemm_wgmma,gemm_cublaslt --runs 10; done
      note "llm stage: $((SECONDS - t0)) s"
      ;;
    ncusmall)  # Nsight Compute durations of gemm_wgmma's kernels (default config) and cuBLASLt's on NCU_SHAPE
      sh=${NCU_SHAPE:-1x4096x4096,tb=1,c16=1}
      for v in gemm_wgmma gemm_cublaslt; do
        timeout 60 ncu --clock-control none -c "${NCU_COUNT:-6}" --section SpeedOfLight --section LaunchStats "$K" bench gemm \
          --dtype bf16 --shape "$sh" --variants $v --runs 2 --warmup 0 >"$out/ncu-$v.txt" 2>&1
        grep -E "^  [A-Za-z_].*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Grid Size|Registers Per" "$out/ncu-$v.txt" |
          sed -E "s/^ +//; s/(.{150}).*/\1/" | sed "s/^/$v /" | head -60 | tee -a "$S"
      done
      ;;
    llmbench)  # default configs against cuBLASLt algo 0, one `kiln bench` per shape, C bf16
      BENCH_SHAPES=${BENCH_SHAPES:-"1x4096x4096,tb=1 16x4096x4096,tb=1 128x11008x4096,tb=1 512x4096x11008,tb=1
        1x28672x8192,tb=1 16x8192x28672,tb=1 128x5120x5120,tb=1 512x14336x4096,tb=1 1x11008x4096,tb=0
        16x14336x4096,tb=0 128x4096x4096,tb=0 512x8192x8192,tb=0 2048x14336x4096,tb=1 8192x4096x4096,tb=1
        2048x4096x11008,tb=0 16384x5120x5120,tb=1"}
      HELDOUT_SHAPES=${HELDOUT_SHAPES:-"1x4096x11008,tb=1 7x14336x4096,tb=1 32x5120x14336,tb=1 96x11008x4096,tb=1
        333x4096x5120,tb=1 1000x5120x5120,tb=1 64x8192x28672,tb=1 1x4096x11008,tb=0 96x11008x4096,tb=0
        2048x14336x5120,tb=0 1x28672x5120,tb=1 512x28672x4096,tb=1 4096x5120x14336,tb=1"}
      for set in design heldout; do
        [ $set = design ] && list=$BENCH_SHAPES || list=$HELDOUT_SHAPES
        for sh in $list; do
          [ $((SECONDS - t0)) -gt "${BENCH_BUDGET:-240}" ] && { note "llmbench: budget spent before $set $sh"; continue; }
          timeout 45 "$K" bench gemm --dtype bf16 --shape "$sh,c16=1" --variants gemm_wgmma,gemm_cublaslt --vs vendor \
            --csv --runs "${BENCH_RUNS:-20}" 2>>"$out/bench.err" | tail -n +2 | sed "s/^/$set,/" >>"$out/bench.csv" ||
            note "bench $sh: rc=$?"
        done
      done
      note "llmbench stage: $((SECONDS - t0)) s"
      python3 - "$out/bench.csv" <<'PYEOF' | tee -a "$S"
import csv, math, sys
rows = {}
order = []
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 15 or not r[9]:
        continue
    key = (r[0], r[2])
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key][r[4]] = (float(r[9]), r[5])
sets = {}
for key in order:
    v = rows[key]
    w, c = v.get("gemm_wgmma"), v.get("gemm_cublaslt")
    if not w or not c:
        print(f"{key[0]} {key[1]}: missing {'gemm_wgmma' if not w else 'gemm_cublaslt'}")
        continue
    ratio = c[0] / w[0]
    sets.setdefault(key[0], []).append(ratio)
    cfg = w[1].replace("BK=64 ", "").replace("cluster=1 ", "").replace("group=8 ", "")
    print(f"{key[0]} {key[1]}: wgmma {w[0]:.1f} us [{cfg}] cublaslt {c[0]:.1f} us ratio {ratio:.3f}")
for name, rs in sets.items():
    g = math.exp(sum(math.log(x) for x in rs) / len(rs))
    print(f"{name}: {len(rs)} shapes, geomean {g:.3f}, min {min(rs):.3f}, below 0.85: {sum(x < 0.85 for x in rs)}")
allr = [x for rs in sets.values() for x in rs]
if allr:
    print(f"all: {len(allr)} shapes, geomean {math.exp(sum(math.log(x) for x in allr) / len(allr)):.3f}")
PYEOF
      ;;
    rows)  # every gemm_wgmma row and cuBLASLt's algos, per small-m shape (fits the time model)
      ROW_SHAPES=${ROW_SHAPES:-"1x4096x4096,tb=1 16x4096x4096,tb=1 1x11008x4096,tb=0 32x5120x14336,tb=1 64x8192x28672,tb=1
        128x5120x5120,tb=1"}
      for sh in $ROW_SHAPES; do
        [ $((SECONDS - t0)) -gt "${ROWS_BUDGET:-120}" ] && { note "rows: budget spent before $sh"; continue; }
        TUNE_TIMEOUT=60 tune bf16 "$sh,c16=1" gemm_wgmma,gemm_cublaslt --runs 10 --no-oracle
      done
      note "rows stage: $((SECONDS - t0)) s"
      python3 - "$out/tune.csv" <<'PYEOF' | tee -a "$S"
import csv, sys
best = {}
for r in csv.DictReader(open(sys.argv[1])):
    if not r["median_us"] or not r["problem"]:
        continue
    cfg = r["config"]
    kind = r["variant"]
    if kind == "gemm_wgmma":
        kind = "swap" if "swap=1" in cfg else "plain"
    key = (r["problem"], kind)
    t = float(r["median_us"])
    if key not in best or t < best[key][0]:
        best[key] = (t, cfg)
    # every gemm_wgmma row, compactly, for the fit
    if r["variant"] == "gemm_wgmma":
        short = " ".join(x for x in cfg.split() if x.split("=")[0] in ("BM", "BN", "stages", "consumers", "pingpong", "splits", "swap"))
        print(f"row {r['problem']} {t:.1f} [{short}]")
for (prob, kind), (t, cfg) in sorted(best.items()):
    print(f"best {prob} {kind}: {t:.1f} us [{cfg}]")
PYEOF
      ;;
  esac
done
rm -f "$out/.tune.tmp" "$out/.tune.json"
# Per problem, from the interleaved re-timing of the finalists: the fastest finalist of each variant.
if [ -s "$out/tune.jsonl" ]; then
  python3 - "$out/tune.jsonl" <<'EOF' | tee -a "$S"
import json, sys
problems = []
for line in open(sys.argv[1]):
    doc = json.loads(line)
    problems += doc.get("problems", [doc])
for j in problems:
    cfg = lambda c: " ".join(f"{k}={v}" for k, v in c["config"].items()) if isinstance(c.get("config"), dict) else str(c.get("config"))
    best = {}
    for c in j.get("finalists", []):
        if "median_us" in c and (c["variant"] not in best or c["median_us"] < best[c["variant"]]["median_us"]):
            best[c["variant"]] = c
    first = {}
    for c in j.get("results", []):
        if "median_us" in c and (c["variant"] not in first or c["median_us"] < first[c["variant"]]["median_us"]):
            first[c["variant"]] = c
    out = [j["problem"]]
    for v, c in sorted(best.items(), key=lambda kv: kv[1]["median_us"]):
        out.append(f"{v} {c['median_us']:.1f}us {c.get('throughput', 0):.0f}T [{cfg(c)}]")
    w, o = best.get("gemm_wgmma"), best.get("gemm_cublaslt")
    out.append(f"interleaved ratio={o['median_us'] / w['median_us']:.3f}" if w and o else "not both among the finalists")
    fw, fo = first.get("gemm_wgmma"), first.get("gemm_cublaslt")
    if fw and fo:
        out.append(f"first: wgmma {fw['median_us']:.1f} [{cfg(fw)}] cublaslt {fo['median_us']:.1f} ratio={fo['median_us'] / fw['median_us']:.3f}")
    if "winner" in j:
        out.append(f"winner {j['winner']['variant']} [{cfg(j['winner'])}]")
    print(" | ".join(out))
EOF
fi
# Per problem: the fastest config of each variant, its time and error.
if [ -s "$out/tune.csv" ]; then
  python3 - "$out/tune.csv" <<'EOF' | tee -a "$S"
import csv, sys
best = {}
order = []
for r in csv.DictReader(open(sys.argv[1])):
    if not r["median_us"]:
        continue
    key = r["problem"]
    if key not in best:
        best[key] = {}
        order.append(key)
    v = r["variant"]
    t = float(r["median_us"])
    if v not in best[key] or t < best[key][v][0]:
        best[key][v] = (t, r["throughput"], r["error"], r["config"])
for key in order:
    b = best[key]
    line = [key]
    for v, (t, tp, err, cfg) in sorted(b.items(), key=lambda kv: kv[1][0]):
        line.append(f"{v} {t:.1f}us {float(tp) if tp else 0:.0f}T err={err} [{cfg}]")
    w = b.get("gemm_wgmma")
    others = [x for k, x in b.items() if k != "gemm_wgmma"]
    if w and others:
        line.append(f"ratio(best other / wgmma)={min(o[0] for o in others) / w[0]:.3f}")
    print(" | ".join(line))
EOF
fi
