// Every vendor variant on the GPU against the host reference of the family schema it serves:
// fresh random inputs through kiln::ProblemData at odd sizes, dense and pitched, plus hand-made
// inputs for what random data rarely hits (alpha/beta and NaN in C for gemm, ties and NaN for
// topk, samples at the edges of histogram_range's bins, where CUB's own rule needs help).
#include <cuda_runtime.h>

#include <kiln/half.hpp>
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "histogram_range_rule.hpp"
#include "register_elementwise.hpp"
#include "register_gemm.hpp"
#include "register_gemv.hpp"
#include "register_histogram.hpp"
#include "register_reduction.hpp"
#include "register_topk.hpp"
#include "register_transpose.hpp"
#include "register_vendor.hpp"

namespace {

using Dims = std::vector<std::int64_t>;

const kiln::Device kGpu = kiln::Device::cuda(0);

// One runtime for the whole test: the family schemas (and their variants) plus the vendor ones.
kiln::Runtime& runtime() {
  static kiln::Runtime rt = [] {
    kiln::Registry reg;
    for (kiln::Status s :
         {register_gemm(reg), register_gemv(reg), register_reduction(reg), register_transpose(reg),
          register_elementwise(reg), register_histogram(reg), register_topk(reg), register_vendor(reg)})
      s.throw_if_error("registering the plugins");
    kiln::RuntimeOptions o;
    o.load_plugins = false;
    o.use_default_db_paths = false;
    o.tune_mode = "off";
    return kiln::Runtime(std::move(reg), o);
  }();
  return rt;
}

const kiln::Variant& variant(const std::string& name) {
  const kiln::Variant* v = runtime().registry().find_variant(name);
  INFO("variant " << name);
  REQUIRE(v != nullptr);
  return *v;
}

const kiln::OpSchema& schema_of(const kiln::Variant& v) { return runtime().registry().op(v.op()); }

void synchronize() {
  const cudaError_t err = cudaDeviceSynchronize();
  INFO(cudaGetErrorString(err));
  REQUIRE(err == cudaSuccess);
}

// Runs `name` on fresh random inputs of the problem with `dims`, once with dense and once with
// pitched tensors, outputs poisoned first, and compares with the host reference.
void check_random(const std::string& name, kiln::DType dtype, const Dims& dims, std::uint64_t seed = 1) {
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = variant(name);
  const kiln::OpSchema& schema = schema_of(v);
  const kiln::Problem p = schema.problem_from_dims(dtype, dims, kGpu);
  INFO(name << " on " << p.key());
  REQUIRE(v.supports(p, kiln::device_info(kGpu), kiln::Config{}).ok);
  for (bool pitched : {false, true}) {
    INFO((pitched ? "pitched" : "dense"));
    kiln::ProblemDataOptions options;
    options.pitched = pitched;
    kiln::ProblemData data(schema, p, kGpu, seed, options);
    data.poison_outputs();
    rt.run_variant(v, kiln::Config{}, data.device_args());
    synchronize();
    const double error = data.error();
    CAPTURE(error, data.tolerance());
    CHECK(error <= data.tolerance());
  }
}

// A tensor for hand-made cases: dense host values and where they go on the device.
struct Tensor {
  kiln::Buffer host;
  kiln::Buffer device;
};

Tensor make_tensor(kiln::DType dtype, std::int64_t rows, std::int64_t cols, bool rank1, bool pitched) {
  Tensor t;
  if (rank1) {
    t.host = kiln::Buffer::alloc(kiln::Device::host(), dtype, {cols});
    t.device = kiln::Buffer::alloc(kGpu, dtype, {cols});
  } else {
    t.host = kiln::Buffer::alloc(kiln::Device::host(), dtype, {rows, cols});
    t.device =
        pitched ? kiln::Buffer::alloc_pitched(kGpu, dtype, rows, cols) : kiln::Buffer::alloc(kGpu, dtype, {rows, cols});
  }
  return t;
}

// Bytes of an output's row padding (between its columns and its pitch) that are no longer the
// 0xFF poison: a variant must not write outside the view.
std::int64_t padding_changed(const kiln::Buffer& device) {
  const kiln::TensorRef& t = device.ref();
  if (t.shape.rank != 2 || t.contiguous()) return 0;
  const std::int64_t pitch = static_cast<std::int64_t>(device.pitch_bytes());
  const std::int64_t used = t.cols() * static_cast<std::int64_t>(kiln::dtype_size(t.dtype));
  auto raw = kiln::Buffer::alloc(kiln::Device::host(), kiln::u8, {t.rows(), pitch});
  kiln::copy(raw.ref(), kiln::TensorRef::matrix(t.data, kiln::u8, t.rows(), pitch, pitch, t.device));
  std::int64_t changed = 0;
  const auto* bytes = raw.ref().as<const unsigned char>();
  for (std::int64_t r = 0; r < t.rows(); ++r)
    for (std::int64_t j = used; j < pitch; ++j)
      if (bytes[r * pitch + j] != 0xFF) ++changed;
  return changed;
}

// Runs `name` on the tensors' device copies of their host values (outputs poisoned) with
// `scalars`, computes the schema's reference in place on the host tensors, and returns the
// schema's error measure (compare, else the largest relative error of the outputs).
double run_against_reference(const std::string& name, std::vector<Tensor>& tensors,
                             const std::vector<double>& scalars) {
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = variant(name);
  const kiln::OpSchema& schema = schema_of(v);
  REQUIRE(tensors.size() == schema.tensors.size());
  kiln::Args device_args, host_args;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (schema.tensors[i].role == kiln::Role::output)
      tensors[i].device.fill_bytes(0xFF);
    else
      tensors[i].device.copy_from(tensors[i].host.ref());
    device_args.push_tensor(tensors[i].device.ref());
    host_args.push_tensor(tensors[i].host.ref());
  }
  for (double s : scalars) {
    device_args.push_scalar(s);
    host_args.push_scalar(s);
  }
  const kiln::Problem p = rt.make_problem(schema, device_args);
  INFO(name << " on " << p.key());
  rt.run_variant(v, kiln::Config{}, device_args);
  synchronize();

  REQUIRE(schema.reference(host_args, p).ok());
  std::vector<kiln::Buffer> got;
  kiln::Args got_args;
  for (const Tensor& t : tensors) {
    got.push_back(kiln::Buffer::alloc(kiln::Device::host(), t.host.dtype(), t.host.shape()));
    got.back().copy_from(t.device.ref());
    got_args.push_tensor(got.back().ref());
  }
  for (double s : scalars) got_args.push_scalar(s);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (schema.tensors[i].role == kiln::Role::output) CHECK(padding_changed(tensors[i].device) == 0);

  double error = 0.0;
  if (schema.compare) {
    REQUIRE(schema.compare(got_args, host_args, p, error).ok());
    return error;
  }
  for (std::size_t i = 0; i < tensors.size(); ++i)
    if (schema.tensors[i].role != kiln::Role::input)
      error = std::max(error, kiln::relative_error(got[i].ref(), tensors[i].host.ref()));
  return error;
}

void fill_uniform(const kiln::Buffer& host, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* x = host.ref().as<float>();
  for (std::int64_t i = 0; i < host.ref().numel(); ++i) x[i] = dist(rng);
}

}  // namespace

TEST_CASE("gemm_cublas and gemm_cublas_tf32 match the reference", "[vendor][gpu][gemm]") {
  // {m, n, k, tf32}: ones, primes, non-multiples of any tile, skinny and a larger one.
  const std::vector<Dims> shapes = {{1, 1, 1},     {7, 13, 5},    {33, 65, 17},    {127, 129, 31},
                                    {1, 300, 257}, {300, 1, 257}, {257, 255, 263}, {513, 257, 1031}};
  for (const Dims& s : shapes) {
    check_random("gemm_cublas", kiln::f32, {s[0], s[1], s[2], 0});
    check_random("gemm_cublas", kiln::f32, {s[0], s[1], s[2], 1});
    check_random("gemm_cublas_tf32", kiln::f32, {s[0], s[1], s[2], 1});
  }
}

TEST_CASE("gemm_cublas_tf32 supports only problems that allow TF32", "[vendor][gpu][gemm]") {
  const kiln::Variant& v = variant("gemm_cublas_tf32");
  const kiln::OpSchema& schema = schema_of(v);
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Support no = v.supports(schema.problem_from_dims(kiln::f32, {64, 64, 64, 0}, kGpu), dev, kiln::Config{});
  CHECK_FALSE(no.ok);
  CHECK_FALSE(no.reason.empty());
  CHECK(v.supports(schema.problem_from_dims(kiln::f32, {64, 64, 64, 1}, kGpu), dev, kiln::Config{}).ok);
}

TEST_CASE("gemm vendor variants honour alpha and beta, and never read C when beta is 0", "[vendor][gpu][gemm]") {
  const std::int64_t m = 37, n = 53, k = 29;
  for (const std::string name : {"gemm_cublas", "gemm_cublas_tf32"}) {
    const double tf32 = name == "gemm_cublas_tf32" ? 1.0 : 0.0;
    const double tolerance = tf32 != 0.0 ? 5e-3 : 1e-4;
    for (bool pitched : {false, true}) {
      INFO(name << (pitched ? " pitched" : " dense"));
      std::vector<Tensor> t;
      t.push_back(make_tensor(kiln::f32, m, k, false, pitched));
      t.push_back(make_tensor(kiln::f32, k, n, false, pitched));
      t.push_back(make_tensor(kiln::f32, m, n, false, pitched));
      fill_uniform(t[0].host, -1.0f, 1.0f, 11);
      fill_uniform(t[1].host, -1.0f, 1.0f, 12);
      {
        INFO("alpha = 2, beta = 0.5");
        fill_uniform(t[2].host, -1.0f, 1.0f, 13);
        CHECK(run_against_reference(name, t, {2.0, 0.5, tf32}) <= tolerance);
      }
      {
        INFO("beta = 0 with NaN in C");
        t[2].host.fill_bytes(0xFF);  // NaN
        CHECK(run_against_reference(name, t, {1.0, 0.0, tf32}) <= tolerance);  // infinite if a NaN leaked
      }
    }
  }
}

TEST_CASE("gemv_cublas matches the reference", "[vendor][gpu][gemv]") {
  for (const Dims& d : std::vector<Dims>{{1, 1}, {7, 5}, {1, 1000}, {1000, 1}, {129, 257}, {4097, 333}, {333, 4099}})
    check_random("gemv_cublas", kiln::f32, d);
}

TEST_CASE("dot_cublas matches the reference", "[vendor][gpu][dot]") {
  for (std::int64_t n : {1, 7, 4096, 1000003, (1 << 24) + 5}) check_random("dot_cublas", kiln::f32, {n});
}

TEST_CASE("transpose_cublas_geam matches the reference", "[vendor][gpu][transpose]") {
  for (const Dims& d : std::vector<Dims>{{1, 1}, {1, 37}, {37, 1}, {7, 13}, {33, 65}, {1025, 257}, {2048, 2049}})
    check_random("transpose_cublas_geam", kiln::f32, d);
}

TEST_CASE("add_cublas_geam matches the reference", "[vendor][gpu][add]") {
  for (const Dims& d : std::vector<Dims>{{1, 1}, {1, 1000003}, {7, 13}, {513, 1025}, {1000, 3}}) {
    check_random("add_cublas_geam", kiln::f32, d);
    check_random("add_cublas_geam", kiln::f64, d);
  }
}

TEST_CASE("the cublasLtMatrixTransform variants match the reference in f16 and bf16", "[vendor][gpu][add][transpose]") {
  for (const kiln::DType t : {kiln::f16, kiln::bf16}) {
    for (const Dims& d : std::vector<Dims>{{1, 1}, {1, 100003}, {7, 13}, {513, 1025}, {1000, 3}})
      check_random("add_cublaslt_transform", t, d);
    for (const Dims& d : std::vector<Dims>{{1, 1}, {1, 37}, {37, 1}, {7, 13}, {33, 65}, {1025, 257}, {2048, 2049}})
      check_random("transpose_cublaslt_transform", t, d);
  }
  const kiln::DeviceInfo& dev = kiln::device_info(kGpu);
  const kiln::Problem f32 = schema_of(variant("add_cublaslt_transform")).problem_from_dims(kiln::f32, {4, 4}, kGpu);
  CHECK_FALSE(variant("add_cublaslt_transform").supports(f32, dev, kiln::Config{}).ok);
}

// The transpose baselines on transposed and padded views (each side row- or column-major): the
// result and every byte of out's storage it must not touch, against the host reference.
TEST_CASE("transpose vendor variants on transposed and padded views", "[vendor][gpu][transpose]") {
  kiln::Runtime& rt = runtime();
  kiln::Op tr = rt.op("transpose");
  const kiln::OpSchema& schema = tr.schema();
  std::uint64_t seed = 500;
  for (const auto& [name, dtype] : std::vector<std::pair<std::string, kiln::DType>>{
           {"transpose_cublas_geam", kiln::f32}, {"transpose_cublaslt_transform", kiln::bf16},
           {"transpose_cublaslt_transform", kiln::f16}})
    for (int layout = 0; layout < 4; ++layout) {
      const bool in_cm = layout & 1, out_cm = layout & 2;
      const std::int64_t m = 67, n = 131, size = static_cast<std::int64_t>(kiln::dtype_size(dtype));
      // Storage: in is m x n (row-major, ld n + 3) or its transpose's (ld m + 3); out likewise.
      const std::int64_t ld_in = (in_cm ? m : n) + 3, ld_out = (out_cm ? n : m) + 5;
      const std::int64_t in_elems = ld_in * (in_cm ? n : m), out_elems = ld_out * (out_cm ? m : n);
      std::vector<std::uint8_t> hin(static_cast<std::size_t>(in_elems * size)), hout(static_cast<std::size_t>(out_elems * size));
      std::mt19937_64 rng(seed++);
      // Values in [-1, 1) (no NaN or subnormal for a library to touch), as bit patterns.
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      for (std::int64_t i = 0; i < in_elems; ++i) {
        const float x = u(rng);
        const std::uint16_t h = dtype == kiln::f16 ? kiln::float_to_f16(x) : kiln::float_to_bf16(x);
        if (size == 4)
          std::memcpy(&hin[static_cast<std::size_t>(i * 4)], &x, 4);
        else
          std::memcpy(&hin[static_cast<std::size_t>(i * 2)], &h, 2);
      }
      for (std::uint8_t& b : hout) b = static_cast<std::uint8_t>(rng());
      kiln::Buffer din = kiln::Buffer::alloc(kGpu, kiln::u8, {in_elems * size});
      kiln::Buffer dout = kiln::Buffer::alloc(kGpu, kiln::u8, {out_elems * size});
      din.copy_from_host(hin.data(), hin.size());
      dout.copy_from_host(hout.data(), hout.size());
      auto view = [&](void* p, std::int64_t rows, std::int64_t cols, bool cm, std::int64_t ld, kiln::Device d) {
        return cm ? kiln::TensorRef::col_major(p, dtype, rows, cols, ld, d)
                  : kiln::TensorRef::matrix(p, dtype, rows, cols, ld, d);
      };
      std::vector<std::uint8_t> want = hout;
      const kiln::Args host_args{view(hin.data(), m, n, in_cm, ld_in, kiln::Device::host()),
                                 view(want.data(), n, m, out_cm, ld_out, kiln::Device::host())};
      REQUIRE(schema.reference(host_args, tr.problem(host_args)).ok());
      const kiln::Args args{view(din.data(), m, n, in_cm, ld_in, kGpu), view(dout.data(), n, m, out_cm, ld_out, kGpu)};
      INFO(name << " " << kiln::dtype_name(dtype) << " in " << (in_cm ? "col" : "row") << "-major, out "
                << (out_cm ? "col" : "row") << "-major");
      rt.run_variant(variant(name), kiln::Config{}, args);
      synchronize();
      std::vector<std::uint8_t> got(hout.size());
      dout.copy_to_host(got.data(), got.size());
      CHECK(got == want);
    }
}

TEST_CASE("add_cublas_geam on rank-1 tensors", "[vendor][gpu][add]") {
  const std::int64_t n = 100003;
  std::vector<Tensor> t;
  for (int i = 0; i < 3; ++i) t.push_back(make_tensor(kiln::f32, 1, n, true, false));
  fill_uniform(t[0].host, -1.0f, 1.0f, 21);
  fill_uniform(t[1].host, -1.0f, 1.0f, 22);
  CHECK(run_against_reference("add_cublas_geam", t, {}) <= 1e-7);
}

TEST_CASE("reduce_sum_cub matches the reference (f32 and i32)", "[vendor][gpu][reduce_sum]") {
  for (std::int64_t n : {1, 2, 1000, 1000003, (1 << 24) + 3}) {
    check_random("reduce_sum_cub", kiln::f32, {n});
    check_random("reduce_sum_cub", kiln::i32, {n});
  }
}

TEST_CASE("histogram_cub matches the reference", "[vendor][gpu][histogram]") {
  for (std::int64_t n : {1, 255, 1000003, (1 << 24) + 1}) check_random("histogram_cub", kiln::u8, {n});
}

TEST_CASE("histogram_range_cub matches the reference on random data", "[vendor][gpu][histogram_range]") {
  // Default range [0, 1): CUB's own rule is the contract's there (cub_rule_matches).
  for (const Dims& d : std::vector<Dims>{{1, 1}, {1000, 7}, {4096, 3}, {1000003, 256}, {100000, 1000}, {1 << 20, 4099}})
    check_random("histogram_range_cub", kiln::f32, d);
}

TEST_CASE("histogram_range_cub at bin edges, with and without CUB's rule", "[vendor][gpu][histogram_range]") {
  struct Range {
    float lo, hi;
    int bins;
    bool cub_rule;  // whether CUB's own rule is the contract's here (else the contract path runs)
  };
  // With lo = -0.1, hi = 2 or lo = -1, hi = 1 CUB would put the largest float below hi one past
  // the last bin.
  const std::vector<Range> ranges = {
      {-0.1f, 2.0f, 7, false}, {-0.1f, 2.0f, 1000, false}, {-1.0f, 1.0f, 256, false},
      {0.0f, 1.0f, 256, true},  {-3.5f, 12.25f, 63, true}};
  for (const Range& r : ranges) {
    INFO("lo " << r.lo << " hi " << r.hi << " bins " << r.bins);
    CHECK(kiln::vendor::cub_rule_matches(r.lo, r.hi, r.bins) == r.cub_rule);
    const std::int64_t n = 200003;
    std::vector<Tensor> t;
    t.push_back(make_tensor(kiln::f32, 1, n, true, false));
    t.push_back(make_tensor(kiln::u32, 1, r.bins, true, false));
    const float width = r.hi - r.lo;
    fill_uniform(t[0].host, r.lo - 0.1f * width, r.hi + 0.1f * width, 31);
    // Every bin edge and its float neighbours, the range's own ends, NaN and infinities.
    float* x = t[0].host.ref().as<float>();
    std::int64_t i = 0;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (float v : {r.lo, r.hi, std::nextafter(r.hi, r.lo), std::nextafter(r.lo, r.hi), std::nextafter(r.lo, -inf),
                    nan, -nan, inf, -inf})
      for (int rep = 0; rep < 5; ++rep) x[i++] = v;
    for (int b = 0; b <= r.bins && i + 3 < n; ++b) {
      const float edge = r.lo + width * static_cast<float>(b) / static_cast<float>(r.bins);
      x[i++] = edge;
      x[i++] = std::nextafter(edge, -inf);
      x[i++] = std::nextafter(edge, inf);
    }
    CHECK(run_against_reference("histogram_range_cub", t, {r.lo, r.hi}) == 0.0);
  }
}

TEST_CASE("topk_cub_sort matches the reference on random data", "[vendor][gpu][topk]") {
  // {rows, n, k, largest}: one row (DeviceRadixSort) small and large, several rows (segmented).
  const std::vector<Dims> cases = {{1, 1, 1, 1},       {1, 1000, 10, 1},     {1, 1000, 1000, 0},
                                   {7, 333, 17, 1},    {64, 4097, 64, 0},    {300, 129, 1, 1},
                                   {4096, 100, 32, 1}, {1, 1 << 20, 100, 1}, {3, 1 << 18, 2048, 0}};
  for (const Dims& d : cases) check_random("topk_cub_sort", kiln::f32, d);
}

TEST_CASE("topk_cub_sort: ties, signed zeros and NaN as the contract orders them", "[vendor][gpu][topk]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::uint32_t payload_bits = 0xffc01234u;  // a negative NaN with a payload
  float payload_nan;
  std::memcpy(&payload_nan, &payload_bits, sizeof payload_nan);
  const float pool[] = {nan, payload_nan, inf, -inf, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 0.5f, 0.25f};
  struct Case {
    std::int64_t rows, n, k;
    bool rank1;
  };
  for (const Case& c : std::vector<Case>{{1, 1000, 1000, true},
                                         {1, 5000, 37, false},
                                         {5, 1000, 10, false},
                                         {33, 257, 257, false},
                                         {2, 3, 1, false}}) {
    for (double largest : {1.0, 0.0}) {
      for (bool pitched : {false, true}) {
        INFO("rows " << c.rows << " n " << c.n << " k " << c.k << " largest " << largest
                     << (c.rank1   ? " rank 1"
                         : pitched ? " pitched"
                                   : " dense"));
        std::vector<Tensor> t;
        t.push_back(make_tensor(kiln::f32, c.rows, c.n, c.rank1, pitched));
        t.push_back(make_tensor(kiln::f32, c.rows, c.k, c.rank1, pitched));
        t.push_back(make_tensor(kiln::i32, c.rows, c.k, c.rank1, pitched));
        std::mt19937_64 rng(41);
        float* x = t[0].host.ref().as<float>();
        for (std::int64_t i = 0; i < c.rows * c.n; ++i) x[i] = pool[rng() % std::size(pool)];
        CHECK(run_against_reference("topk_cub_sort", t, {largest}) == 0.0);
      }
    }
  }
}

TEST_CASE("cuBLAS variants from several host threads, each on its own stream", "[vendor][gpu][threads]") {
  // The device's one cuBLAS handle is shared: each launch locks it to set its stream and
  // workspace.  Catch2 assertions are not thread-safe, so the threads only record errors.
  kiln::Runtime& rt = runtime();
  const kiln::Variant& v = variant("gemm_cublas");
  const kiln::OpSchema& schema = schema_of(v);
  const kiln::Problem p = schema.problem_from_dims(kiln::f32, {129, 65, 257, 0}, kGpu);
  constexpr int kThreads = 4, kRounds = 10;
  std::vector<std::unique_ptr<kiln::ProblemData>> data;
  for (int i = 0; i < kThreads; ++i) {
    data.push_back(std::make_unique<kiln::ProblemData>(schema, p, kGpu, 100 + i));
    data.back()->poison_outputs();
  }
  synchronize();  // inputs and poison written before work starts on non-blocking streams
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        kiln::OwnedStream stream(kGpu);
        for (int round = 0; round < kRounds; ++round) rt.run_variant(v, kiln::Config{}, data[i]->device_args(), stream);
        stream.synchronize();
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  synchronize();
  for (int i = 0; i < kThreads; ++i) {
    INFO("thread " << i);
    CHECK(failures[i].empty());
    CHECK(data[i]->error() <= data[i]->tolerance());
  }
}
