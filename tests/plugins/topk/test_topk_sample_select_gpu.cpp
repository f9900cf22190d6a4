// topk_sample_select against the host reference: random rows through ProblemData (outputs
// poisoned) at sizes that are multiples of no tile, on both sides of kSampleMax (sampled
// threshold, or the whole row as the sample), k from 1 to 4096, largest 1 and 0, dense and
// pitched; then hand-built rows that defeat the sample and must take the fallback (every value
// equal, a tie class straddling the k-th place, the best values sitting exactly on the sampled
// runs) or stress the key order (NaN of both signs, infinities, -0.0 against +0.0); rows whose
// candidates crowd into a few filter blocks (ascending), and rows at every 16-byte offset (the
// filter's float4 body, its head and tail).  After each launch of the hand-built rows the filter's
// count and best rank per row (the workspace's SampleRowCounts) are checked against the host, and
// the paths taken are printed ("topk_sample_select filter paths: ...").  Last, the launch
// sequence (programmatic dependent launches on sm_90) captured in a CUDA graph and replayed on
// fresh random rows and on rows that all take the fallback.
#include <cuda_runtime.h>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "register_topk.hpp"
#include "test_util.hpp"
#include "topk_key.hpp"
#include "topk_params.hpp"
#include "topk_sample_select_params.hpp"

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  REQUIRE(register_topk(reg).ok());
  return reg;
}

class Workspace {
 public:
  void* get(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    if (bytes > size_) {
      buffer_ = kiln::Buffer::alloc(kiln::Device::cuda(0), kiln::u8, {std::int64_t(bytes)});
      size_ = bytes;
    }
    return buffer_.data();
  }
  // The first `rows` SampleRowCounts of the workspace (where topk_sample_select keeps them).
  std::vector<kiln::topk::SampleRowCounts> row_counts(std::int64_t rows) const {
    const std::vector<std::uint8_t> bytes = buffer_.to_host<std::uint8_t>();
    std::vector<kiln::topk::SampleRowCounts> out(static_cast<std::size_t>(rows));
    REQUIRE(bytes.size() >= out.size() * sizeof(kiln::topk::SampleRowCounts));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(kiln::topk::SampleRowCounts));
    return out;
  }

 private:
  kiln::Buffer buffer_;
  std::size_t size_ = 0;
};

const kiln::Stream kStream;

struct Shape {
  std::int64_t rows, n, k;
};

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

// The variant's configs: every one for small rows, the default and the first of each filter
// tile otherwise (`blocks` only changes the grid).
std::vector<kiln::Config> configs_for(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                      bool all) {
  std::vector<kiln::Config> out;
  for (const kiln::Config& c : v.space().enumerate(dev, p))
    if (all || c.get("blocks") == 2048) out.push_back(c);
  return out;
}

// What the filter did, over the launches of a test case (printed at its end).
struct FilterPaths {
  int rows = 0;            // rows checked
  int answered = 0;        // candidates >= k and within the buffer: the select kernel answered
  int too_few = 0;         // fewer than k candidates: the fallback
  int overflowed = 0;      // more candidates than the buffer holds: the fallback
  int stage_spilled = 0;   // answered rows where some filter block had more candidates than its
                           // shared-memory stage (so some went to the buffer directly)
  int heads[4] = {0, 0, 0, 0};  // rows by elements before their first 16-byte boundary
  void print(const char* test) const {
    std::printf("topk_sample_select filter paths (%s): rows %d, answered %d, stage spilled %d, fallback %d "
                "(fewer than k %d, buffer overflowed %d), rows with head 0/1/2/3: %d/%d/%d/%d\n",
                test, rows, answered, stage_spilled, too_few + overflowed, too_few, overflowed, heads[0], heads[1],
                heads[2], heads[3]);
  }
};

// Checks the filter's count and best rank of every row (read back from the workspace) against the
// host: count = elements with rank >= threshold, best = the largest such rank (0 if none); and
// records which paths the rows took.
void check_filter(const Workspace& ws, const std::vector<float>& rows, const Shape& s, int largest,
                  const kiln::Config& c, const float* device_x, std::int64_t x_stride, FilterPaths& paths) {
  const std::vector<kiln::topk::SampleRowCounts> got = ws.row_counts(s.rows);
  const kiln::topk::SamplePlan plan = kiln::topk::sample_plan(s.n, s.k);
  const kiln::topk::Chunking chunks =
      kiln::topk::chunking(s.rows, s.n, std::int64_t(c.get("block")) * c.get("items_per_thread"), c.get("blocks"));
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const std::uint32_t threshold = got[std::size_t(r)].threshold;
    std::uint32_t count = 0, best = 0, chunk_count = 0, chunk_most = 0;
    for (std::int64_t j = 0; j < s.n; ++j) {
      if (j % chunks.chunk_len == 0) chunk_count = 0;
      const std::uint32_t rank = kiln::topk::rank_key(bits_of(rows[std::size_t(r * s.n + j)]), largest != 0);
      if (rank >= threshold) {
        ++count;
        best = std::max(best, rank);
        chunk_most = std::max(chunk_most, ++chunk_count);
      }
    }
    INFO("row " << r << " threshold " << threshold);
    CHECK(got[std::size_t(r)].count == count);
    CHECK(got[std::size_t(r)].best == best);
    ++paths.rows;
    ++paths.heads[((16 - reinterpret_cast<std::uintptr_t>(device_x + r * x_stride) % 16) % 16) / 4];
    if (count < std::uint32_t(s.k)) {
      ++paths.too_few;
    } else if (std::int64_t(count) > plan.cand_cap) {
      ++paths.overflowed;
    } else {
      ++paths.answered;
      // A block's vectors are shifted from its chunk by the row's head (<= 3 elements), and the
      // first block also takes the head and tail (<= 6): a margin of 6.
      if (chunk_most > std::uint32_t(kiln::topk::kSampleFilterStage) + 6) ++paths.stage_spilled;
    }
  }
}

// Runs the variant (every config given) on x [rows, n] and compares with the host reference bit
// for bit (any NaN equals any NaN).  With offset > 0 the rows are packed (stride n) and start
// `offset` floats into their allocation; otherwise dense or pitched.  With `paths`, the filter's
// counts are checked as well (check_filter).
void check_rows(kiln::Runtime& rt, const kiln::Variant& v, const std::vector<float>& rows, const Shape& s, int largest,
                bool pitched, const std::vector<kiln::Config>& configs, Workspace& ws, const char* what,
                FilterPaths* paths = nullptr, int offset = 0) {
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  kiln::Buffer hx = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.n});
  hx.copy_from_host(rows.data(), rows.size() * sizeof(float));
  kiln::Buffer hv = kiln::Buffer::alloc(kiln::Device::host(), kiln::f32, {s.rows, s.k});
  kiln::Buffer hi = kiln::Buffer::alloc(kiln::Device::host(), kiln::i32, {s.rows, s.k});
  const kiln::Args host_args({hx, hv, hi}, {double(largest)});
  REQUIRE(schema.reference(host_args, rt.make_problem(schema, host_args)).ok());
  const std::vector<float> ev = hv.to_host<float>();
  const std::vector<std::int32_t> ei = hi.to_host<std::int32_t>();

  auto alloc = [&](kiln::DType t, std::int64_t r, std::int64_t c) {
    return pitched ? kiln::Buffer::alloc_pitched(gpu, t, r, c) : kiln::Buffer::alloc(gpu, t, {r, c});
  };
  kiln::Buffer dx = offset > 0 ? kiln::Buffer::alloc(gpu, kiln::f32, {s.rows * s.n + offset}) : alloc(kiln::f32, s.rows, s.n);
  kiln::Buffer dv = alloc(kiln::f32, s.rows, s.k);
  kiln::Buffer di = alloc(kiln::i32, s.rows, s.k);
  kiln::TensorRef xref = dx.ref();
  if (offset > 0) {
    std::vector<float> shifted(std::size_t(offset), 7.0f);  // not part of the view
    shifted.insert(shifted.end(), rows.begin(), rows.end());
    dx.copy_from_host(shifted.data(), shifted.size() * sizeof(float));
    xref = kiln::TensorRef::matrix(static_cast<float*>(dx.data()) + offset, kiln::f32, s.rows, s.n, s.n, gpu);
  } else {
    dx.copy_from(hx.ref());
  }
  const kiln::Args args({xref, dv, di}, {double(largest)});
  const kiln::Problem p = rt.make_problem(schema, args);
  for (const kiln::Config& c : configs) {
    INFO(what << " " << c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense") << " offset "
              << offset);
    REQUIRE(v.supports(p, kiln::device_info(gpu), c).ok);
    dv.fill_bytes(0xFF);
    di.fill_bytes(0xFF);
    REQUIRE(v.launch(args, p, c, ws.get(v.workspace_bytes(p, c)), kStream).ok());
    kStream.synchronize();
    if (paths != nullptr)
      check_filter(ws, rows, s, largest, c, static_cast<const float*>(xref.data), xref.row_stride, *paths);
    const std::vector<float> gv = dv.to_host<float>();
    const std::vector<std::int32_t> gi = di.to_host<std::int32_t>();
    std::int64_t bad = 0;
    for (std::size_t j = 0; j < ev.size(); ++j) {
      bad += !(bits_of(gv[j]) == bits_of(ev[j]) || (std::isnan(gv[j]) && std::isnan(ev[j])));
      bad += gi[j] != ei[j];
    }
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("topk_sample_select matches the host reference on random rows", "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  // Small rows (the whole row is the sample), rows just above kSampleMax, long rows; k = 1 to 4096.
  const Shape shapes[] = {{3, 5, 5},         {2, 8191, 4096},    {5, 3001, 1},       {4, 8193, 1},
                          {3, 20011, 1000},  {7, 100003, 64},    {1, 1000003, 1},    {1, 1000003, 100},
                          {1, 1000003, 4096}, {2, 3145733, 2048}, {64, 65539, 64}};
  std::uint64_t seed = 1200;
  for (const Shape& s : shapes) {
    if (kiln_test::skip_when_quick(double(s.rows) * double(s.n), 70000.0)) continue;
    for (int largest : {1, 0}) {
      for (bool pitched : {false, true}) {
        const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {s.rows, s.n, s.k, largest}, gpu);
        kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
        const kiln::Problem& p = data.problem();
        // Quick (sanitizer) runs: one config per filter kernel.
        const bool all = s.rows * s.n < 200000 && !kiln_test::quick_mode();
        for (const kiln::Config& c : configs_for(*v, dev, p, all)) {
          INFO(c.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense"));
          REQUIRE(v->supports(p, dev, c).ok);
          data.poison_outputs();
          REQUIRE(v->launch(data.device_args(), p, c, ws.get(v->workspace_bytes(p, c)), kStream).ok());
          kStream.synchronize();
          CHECK(data.error() == 0.0);
        }
      }
    }
  }
}

TEST_CASE("topk_sample_select is exact on rows that defeat the sample (the fallback) and on NaN and -0.0",
          "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  const std::int64_t n = quick ? 9001 : 300007;
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  FilterPaths paths;

  for (std::int64_t k : {std::int64_t(1), std::int64_t(100), std::int64_t(4096)}) {
    const Shape s{2, n, k};
    const std::size_t total = std::size_t(s.rows * s.n);
    const kiln::Problem shape_only = rt.registry().op("topk").problem_from_dims(kiln::f32, {s.rows, s.n, s.k, 1}, gpu);
    auto configs = configs_for(*v, dev, shape_only, false);
    if (quick) configs.resize(1);  // sanitizer runs: the kernels are the same for every config
    std::vector<float> x(total);
    for (int largest : {1, 0}) {
      const bool pitched = (k + largest) % 2 == 0;
      // Every value equal (0.5 in one row, -0.0 and +0.0 mixed in the other): the candidates are
      // the whole row; indices decide.
      for (std::size_t i = 0; i < total; ++i) x[i] = i < std::size_t(n) ? 0.5f : ((rng() & 1) ? -0.0f : 0.0f);
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "all equal", &paths);
      // A tie class of 3/4 of the row straddling the k-th place, one better and a few worse values.
      for (std::size_t i = 0; i < total; ++i) x[i] = (rng() % 4) ? 0.25f : u(rng);
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "tie at the k-th", &paths);
      // The best values sit exactly on the sampled runs (g * n / runs, kSampleRun long), all
      // distinct and better than the rest: the threshold is so high that fewer than k pass.
      for (std::size_t i = 0; i < total; ++i) x[i] = u(rng) * 0.5f;
      const kiln::topk::SamplePlan plan = kiln::topk::sample_plan(n, k);
      if (n > kiln::topk::kSampleMax) {
        const std::int64_t runs = plan.samples / kiln::topk::kSampleRun;
        for (std::int64_t r = 0; r < s.rows; ++r)
          for (std::int64_t g = 0; g < runs; ++g)
            for (int i = 0; i < kiln::topk::kSampleRun; ++i) {
              const std::int64_t j = g * n / runs + i;
              const float big = 2.0f + float(g * kiln::topk::kSampleRun + i) / 1024.0f;
              x[std::size_t(r * n + j)] = largest ? big : -big;
            }
      }
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "sample above the rest", &paths);
      // NaN of both signs, infinities, zeros of both signs among uniform values.
      for (std::size_t i = 0; i < total; ++i) {
        const unsigned r = unsigned(rng() % 64);
        x[i] = r == 0 ? nan : r == 1 ? -nan : r == 2 ? inf : r == 3 ? -inf : r == 4 ? -0.0f : r == 5 ? 0.0f : u(rng);
      }
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "nan inf zeros", &paths);
      // Ascending rows: the candidates are the last (largest = 1) or first (largest = 0) few
      // thousand elements of the row, in one to three filter blocks, whose stages overflow for
      // k = 4096 while the row's buffer holds them all.
      for (std::size_t i = 0; i < total; ++i) x[i] = float(i % std::size_t(n)) * 0.25f - 1000.0f;
      check_rows(rt, *v, x, s, largest, pitched, configs, ws, "ascending", &paths);
    }
  }
  paths.print("rows that defeat the sample");
  CHECK(paths.answered > 0);
  CHECK(paths.stage_spilled > 0);  // ascending, k = 4096
  CHECK(paths.too_few > 0);        // the sample above the rest, k = 100 and 4096
  CHECK(paths.overflowed > 0);     // all equal, k = 1 and 100
}

TEST_CASE("topk_sample_select reads rows at every 16-byte offset (the filter's float4 body, head and tail)",
          "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const bool quick = kiln_test::quick_mode();
  std::mt19937_64 rng(78);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  FilterPaths paths;
  // Rows shorter than their head (n <= 3), rows of one vector and a tail, rows on both sides of
  // kSampleMax; packed rows of odd n start at every offset within 16 bytes.
  const Shape shapes[] = {{5, 1, 1},       {5, 2, 2},        {5, 3, 1},          {4, 7, 3},       {3, 13, 13},
                          {4, 4099, 64},   {3, 8197, 4096},  {3, 70001, 100},    {2, 300007, 4096}};
  for (const Shape& s : shapes) {
    if (quick && s.n > 10000) continue;
    const kiln::Problem shape_only = rt.registry().op("topk").problem_from_dims(kiln::f32, {s.rows, s.n, s.k, 1}, gpu);
    auto configs = configs_for(*v, dev, shape_only, false);
    if (quick) configs.resize(1);
    std::vector<float> x(std::size_t(s.rows * s.n));
    for (int offset : {1, 2, 3}) {
      if (quick && offset != 1) continue;  // sanitizer runs: offset 1 with n = 1 alone gives every head
      for (int largest : {1, 0}) {
        for (float& e : x) e = u(rng);
        check_rows(rt, *v, x, s, largest, false, configs, ws, "offset", &paths, offset);
      }
    }
  }
  paths.print("rows at every offset");
  for (int h = 0; h < 4; ++h) CHECK(paths.heads[h] > 0);
  CHECK(paths.answered == paths.rows);  // random rows: the sample holds
}

TEST_CASE("topk_sample_select captures in a CUDA graph (programmatic dependent launches) and replays on fresh inputs",
          "[topk][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  const kiln::OpSchema& schema = rt.registry().op("topk");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* v = rt.registry().find_variant("topk_sample_select");
  REQUIRE(v != nullptr);
  Workspace ws;
  const Shape s{3, kiln_test::quick_mode() ? 9001 : 100003, 100};  // both sampled (n > kSampleMax)
  const kiln::Problem wanted = schema.problem_from_dims(kiln::f32, {s.rows, s.n, s.k, 1}, gpu);
  kiln::ProblemData bound(schema, wanted, gpu, /*seed=*/21);  // the buffers the graph is captured on
  kiln::ProblemData fresh(schema, wanted, gpu, /*seed=*/22);  // new inputs and their reference
  const kiln::Problem& p = bound.problem();
  const kiln::Config c = v->default_config(dev);
  void* w = ws.get(v->workspace_bytes(p, c));  // reserved outside the capture
  kiln::OwnedStream stream(gpu);
  const auto cs = static_cast<cudaStream_t>(stream.get().handle());
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal) == cudaSuccess);
  const kiln::Status st = v->launch(bound.device_args(), p, c, w, stream.get());
  const cudaError_t end = cudaStreamEndCapture(cs, &graph);
  INFO("launch during capture: " << st.message() << "; end capture: " << cudaGetErrorString(end));
  REQUIRE(st.ok());
  REQUIRE(end == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  const kiln::Args& b = bound.device_args();
  const kiln::Args& f = fresh.device_args();
  auto copy = [&](const kiln::TensorRef& to, const kiln::TensorRef& from) {
    REQUIRE(to.span_bytes() == from.span_bytes());
    REQUIRE(cudaMemcpyAsync(to.data, from.data, std::size_t(from.span_bytes()), cudaMemcpyDeviceToDevice, cs) ==
            cudaSuccess);
  };
  // Random rows (the sampled path), twice.
  for (int replay = 0; replay < 2; ++replay) {
    fresh.poison_outputs();
    for (int i = 0; i < 3; ++i) copy(b.tensor(i), f.tensor(i));
    REQUIRE(cudaGraphLaunch(exec, cs) == cudaSuccess);
    for (int i = 1; i < 3; ++i) copy(f.tensor(i), b.tensor(i));
    REQUIRE(cudaStreamSynchronize(cs) == cudaSuccess);
    INFO("random rows, replay " << replay);
    CHECK(fresh.error() == 0.0);
  }
  // Rows all equal to 0.5 (every row overflows its candidates and takes the fallback kernels):
  // the answer is 0.5 at indices 0..k-1 (ties go to the smaller index).
  REQUIRE(b.tensor(0).contiguous());
  const std::vector<float> same(std::size_t(s.rows * s.n), 0.5f);
  REQUIRE(cudaMemcpyAsync(b.tensor(0).data, same.data(), same.size() * sizeof(float), cudaMemcpyHostToDevice, cs) ==
          cudaSuccess);
  for (int i = 1; i < 3; ++i)
    REQUIRE(cudaMemsetAsync(b.tensor(i).data, 0xFF, std::size_t(b.tensor(i).span_bytes()), cs) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, cs) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(cs) == cudaSuccess);
  REQUIRE(b.tensor(1).contiguous());
  REQUIRE(b.tensor(2).contiguous());
  std::vector<float> values(std::size_t(s.rows * s.k));
  std::vector<std::int32_t> indices(values.size());
  REQUIRE(cudaMemcpy(values.data(), b.tensor(1).data, values.size() * sizeof(float), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  REQUIRE(cudaMemcpy(indices.data(), b.tensor(2).data, indices.size() * sizeof(std::int32_t),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < values.size(); ++i)
    bad += values[i] != 0.5f || indices[i] != std::int32_t(i % std::size_t(s.k));
  CHECK(bad == 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}
