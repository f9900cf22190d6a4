// Every CUDA `transpose` variant and every valid config against the host reference
// (kiln::ProblemData: fresh random inputs, poisoned outputs), dense and pitched, in f32, i32, f16
// and bf16; strided views with guard columns; transposed (column-major) and offset views of both
// element sizes; the vector configs' refusal of misaligned views; op("transpose") on device
// buffers end to end.
#include <kiln/kiln.hpp>
#include <kiln/tuner/problem_data.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "quick.hpp"
#include "test_util.hpp"
#include "register_transpose.hpp"
#include "transpose_params.hpp"

using kiln_test::contains;

namespace {

kiln::Registry make_registry() {
  kiln::Registry reg;
  const kiln::Status s = register_transpose(reg);
  REQUIRE(s.ok());
  return reg;
}

std::vector<const kiln::Variant*> cuda_variants(const kiln::Registry& reg) {
  std::vector<const kiln::Variant*> out;
  for (const kiln::Variant* v : reg.variants("transpose"))
    if (v->device_kind() == kiln::DeviceKind::cuda) out.push_back(v);
  return out;
}

// Every valid config of `v` for `p`, or a fixed random sample of `max_configs` of them; the
// default config always among them.
std::vector<kiln::Config> configs_to_test(const kiln::Variant& v, const kiln::DeviceInfo& dev, const kiln::Problem& p,
                                          std::size_t max_configs = 128) {
  std::vector<kiln::Config> all = v.space().enumerate(dev, p);
  if (all.size() > max_configs) {
    std::mt19937_64 rng(12345);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(max_configs);
  }
  const kiln::Config d = v.default_config(dev);
  if (std::find(all.begin(), all.end(), d) == all.end()) all.push_back(d);
  return all;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

bool is_vector_config(const kiln::Variant& v, const kiln::Config& c) {
  return v.name() == "transpose_tiled_multirow" && c.get_or("vector_width", 1) > 1;
}

// Elements of out (n x m, row stride ld_out) that are not bitwise in^T (m x n, row stride ld_in).
std::int64_t count_wrong(const float* in, std::int64_t ld_in, const float* out, std::int64_t ld_out, std::int64_t m,
                         std::int64_t n) {
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) wrong += std::memcmp(&in[i * ld_in + j], &out[j * ld_out + i], sizeof(float)) != 0;
  return wrong;
}

// m x n: 1, primes, non-multiples of every tile and of 4, large; the last two dense with m and n
// multiples of 4 so that float4 accesses also run on unpadded rows (96 x 132: partial 64-tiles).
// Skinny ones (a side <= 256, transpose_skinny's domain) with odd long sides: 3 x 5003, 100 x
// 100003 and their transposes, 257 x 300 (just past it).
const std::int64_t kShapes[][2] = {{1, 1},       {1, 17},      {17, 1},   {31, 33},  {129, 257},
                                   {1000, 999},  {1025, 2047}, {96, 132}, {256, 4096}, {3, 5003},
                                   {5003, 3},    {100, 100003}, {100003, 100}, {257, 300}};

}  // namespace

TEST_CASE("every CUDA transpose variant and config matches the host reference", "[transpose][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::OpSchema& schema = tr.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;  // the legacy stream: ordered after ProblemData's copies and memsets

  const std::vector<const kiln::Variant*> variants = cuda_variants(rt.registry());
  REQUIRE(variants.size() == 6);

  // Sanitizer runs take one dtype of each size; the kernels are the same for f32 / i32 and f16 / bf16.
  const std::vector<kiln::DType> dtypes = kiln_test::quick_mode() ? std::vector<kiln::DType>{kiln::f32, kiln::bf16}
                                                                   : std::vector<kiln::DType>{kiln::f32, kiln::i32,
                                                                                              kiln::f16, kiln::bf16};
  std::int64_t vector_runs = 0, half_vector_runs = 0;
  std::uint64_t seed = 1;
  for (const kiln::DType dtype : dtypes)
  for (const auto& shape : kShapes) {
    // Sanitizer runs skip the two 10^7-element skinny shapes (the others ran there before them).
    if (kiln_test::skip_when_quick(double(shape[0]) * double(shape[1]), 3e6)) continue;
    for (bool pitched : {false, true}) {
      const kiln::Problem wanted = schema.problem_from_dims(dtype, {shape[0], shape[1]}, gpu);
      kiln::ProblemData data(schema, wanted, gpu, seed++, {pitched, true});
      // The problem as op() derives it from these tensors, alignment included.
      const kiln::Problem p = tr.problem(data.device_args());
      REQUIRE(p.same_key(wanted));
      for (const kiln::Variant* v : variants) {
        for (const kiln::Config& config : configs_to_test(*v, dev, p)) {
          INFO(v->name() << " " << config.to_string() << " on " << p.key() << (pitched ? " pitched" : " dense")
                         << " align " << p.align_bytes);
          REQUIRE(!v->space().violated(config, dev, p));
          const kiln::Support s = v->supports(p, dev, config);
          if (!s.ok && v->name() == "transpose_skinny") {
            CHECK(std::min(p.dims[0], p.dims[1]) > kiln::transpose::kSkinnyMaxShort);  // only squat shapes
            CHECK(contains(s.reason, "at most 256"));
            continue;
          }
          if (!s.ok) {
            // Otherwise only the vector configs refuse anything, and only for alignment.
            CHECK(is_vector_config(*v, config));
            CHECK(p.align_bytes < config.get_or("vector_width", 1) * static_cast<int>(kiln::dtype_size(dtype)));
            CHECK(contains(s.reason, "-byte aligned"));
            continue;
          }
          data.poison_outputs();
          const kiln::Status st = v->launch(data.device_args(), p, config, nullptr, stream);
          INFO(st.message());
          REQUIRE(st.ok());
          stream.synchronize();
          CHECK(data.error() == 0.0);
          if (is_vector_config(*v, config)) ++(kiln::dtype_size(dtype) == 4 ? vector_runs : half_vector_runs);
        }
      }
    }
  }
  // Pitched rows (cudaMallocPitch) are 16-byte aligned: the 36 float4 configs ran at least on
  // every pitched f32 shape, the 40 vector configs of 2-byte types on every pitched bf16 one.
  const std::int64_t shapes = static_cast<std::int64_t>(std::size(kShapes)) - (kiln_test::quick_mode() ? 2 : 0);
  CHECK(vector_runs >= 36 * shapes);
  CHECK(half_vector_runs >= 40 * shapes);
}

namespace {

// A device view over storage of its own: `rows x cols` of `dtype`, row-major (row stride cols +
// pad) or column-major (column stride rows + pad), starting `offset` elements in.  The storage
// is kept on the host as bytes too, so the expected result is the host reference run on a copy.
struct StoredView {
  kiln::Buffer store;
  std::vector<std::uint8_t> host;
  kiln::TensorRef view, host_view;
};

StoredView stored_view(kiln::DType dtype, std::int64_t rows, std::int64_t cols, bool col_major, std::int64_t pad,
                       std::int64_t offset, std::uint64_t seed) {
  const kiln::Device gpu = kiln::Device::cuda(0);
  const std::int64_t size = static_cast<std::int64_t>(kiln::dtype_size(dtype));
  const std::int64_t ld = (col_major ? rows : cols) + pad;
  const std::int64_t elems = offset + ld * (col_major ? cols : rows);
  StoredView v{kiln::Buffer::alloc(gpu, kiln::u8, {elems * size}), {}, {}, {}};
  v.host.resize(static_cast<std::size_t>(elems * size));
  std::mt19937_64 rng(seed);
  for (std::uint8_t& b : v.host) b = static_cast<std::uint8_t>(rng());
  v.store.copy_from_host(v.host.data(), v.host.size());
  auto make = [&](void* base, kiln::Device d) {
    void* p = static_cast<std::uint8_t*>(base) + offset * size;
    return col_major ? kiln::TensorRef::col_major(p, dtype, rows, cols, ld, d)
                     : kiln::TensorRef::matrix(p, dtype, rows, cols, ld, d);
  };
  v.view = make(v.store.data(), gpu);
  v.host_view = make(v.host.data(), kiln::Device::host());
  return v;
}

}  // namespace

TEST_CASE("transpose: transposed, padded and offset views of 2- and 4-byte types", "[transpose][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::OpSchema& schema = tr.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;
  std::uint64_t seed = 100;
  std::int64_t runs = 0;
  for (const kiln::DType dtype : {kiln::f32, kiln::bf16, kiln::f16, kiln::i32})
    for (const auto& shape : {std::array<std::int64_t, 2>{67, 131}, std::array<std::int64_t, 2>{200, 37},
                              std::array<std::int64_t, 2>{1, 9}})
      for (int layout = 0; layout < 4; ++layout)
        for (const std::int64_t offset : {0, 1}) {
          const bool in_cm = layout & 1, out_cm = layout & 2;
          const std::int64_t m = shape[0], n = shape[1];
          StoredView in = stored_view(dtype, m, n, in_cm, 3, offset, seed++);
          StoredView out = stored_view(dtype, n, m, out_cm, 5, offset, seed++);
          // Expected: the host reference over a copy of out's (random) storage, so every byte it
          // must not touch is compared too.
          std::vector<std::uint8_t> want = out.host;
          kiln::TensorRef want_view = out.host_view;
          want_view.data = want.data() + (static_cast<std::uint8_t*>(out.host_view.data) - out.host.data());
          REQUIRE(schema.reference(kiln::Args{in.host_view, want_view}, tr.problem({in.host_view, want_view})).ok());
          const kiln::Args args{in.view, out.view};
          const kiln::Problem p = tr.problem(args);
          for (const kiln::Variant* v : cuda_variants(rt.registry()))
            for (const kiln::Config& config : configs_to_test(*v, dev, p, 6)) {
              INFO(v->name() << " " << config.to_string() << " " << p.key() << " in " << (in_cm ? "col" : "row")
                             << "-major, out " << (out_cm ? "col" : "row") << "-major, offset " << offset);
              if (!v->supports(p, dev, config).ok) continue;  // alignment or skinny: checked above
              out.store.copy_from_host(out.host.data(), out.host.size());
              const kiln::Status st = v->launch(args, p, config, nullptr, stream);
              INFO(st.message());
              REQUIRE(st.ok());
              stream.synchronize();
              std::vector<std::uint8_t> got(out.host.size());
              out.store.copy_to_host(got.data(), got.size());
              CHECK(got == want);
              ++runs;
            }
        }
  CHECK(runs > 4 * 3 * 4 * 2 * 6);  // every variant ran on every layout
}

TEST_CASE("transpose_skinny moves 2-byte pairs where alignment allows, elements elsewhere", "[transpose][gpu]") {
  namespace tr = kiln::transpose;
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("transpose");
  const kiln::OpSchema& schema = op.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* skinny = rt.registry().find_variant("transpose_skinny");
  REQUIRE(skinny != nullptr);
  const kiln::Stream stream;
  std::uint64_t seed = 300;
  std::int64_t both = 0, only_one = 0, neither = 0, runs = 0;
  // Sanitizer runs take bf16 only (f16 runs the same kernels) and the smaller tiles (more of them).
  const bool quick = kiln_test::quick_mode();
  const std::vector<kiln::DType> dtypes = quick ? std::vector<kiln::DType>{kiln::bf16} : std::vector<kiln::DType>{kiln::bf16, kiln::f16};
  const std::vector<int> tile_sizes = quick ? std::vector<int>{2048} : std::vector<int>{2048, 16384};  // bytes
  for (const kiln::DType dtype : dtypes)
    // Wide and tall, odd and even extents; 2 KiB tiles (1024 elements) cut the long side into several
    // tiles whose last one is partial (37 x 1001: spans of 26, the last 13 wide), 1 x 9 and
    // 9 x 1 have a single row or column.
    for (const auto& shape : {std::array<std::int64_t, 2>{37, 1001}, std::array<std::int64_t, 2>{1001, 37},
                              std::array<std::int64_t, 2>{64, 515}, std::array<std::int64_t, 2>{515, 64},
                              std::array<std::int64_t, 2>{1, 9}, std::array<std::int64_t, 2>{9, 1},
                              std::array<std::int64_t, 2>{2, 3}})
      // Pads and offsets (elements) making each side's row starts even or odd, pointers 4-byte
      // aligned or not.
      for (const std::int64_t pad_in : {0, 1, 2})
        for (const std::int64_t pad_out : {0, 1})
          for (const std::int64_t offset : {0, 1}) {
            const std::int64_t m = shape[0], n = shape[1];
            StoredView in = stored_view(dtype, m, n, false, pad_in, offset, seed++);
            StoredView out = stored_view(dtype, n, m, false, pad_out, pad_in == 2 ? 1 - offset : offset, seed++);
            std::vector<std::uint8_t> want = out.host;
            kiln::TensorRef want_view = out.host_view;
            want_view.data = want.data() + (static_cast<std::uint8_t*>(out.host_view.data) - out.host.data());
            REQUIRE(schema.reference(kiln::Args{in.host_view, want_view}, op.problem({in.host_view, want_view})).ok());
            const kiln::Args args{in.view, out.view};
            const kiln::Problem p = op.problem(args);
            for (const int access_bytes : {2, 4})
              for (const int tile_bytes : tile_sizes) {
                const kiln::Config config{{"block", 256}, {"tile_bytes", tile_bytes}, {"access_bytes", access_bytes}};
                const tr::SkinnyTile tile = tr::skinny_tile(m, n, tile_bytes / 2, access_bytes == 4 ? 2 : 1);
                const tr::SkinnyPairs pairs = tr::skinny_pairs(reinterpret_cast<std::uintptr_t>(in.view.data),
                                                               reinterpret_cast<std::uintptr_t>(out.view.data),
                                                               m > 1 ? n + pad_in : n, n > 1 ? m + pad_out : m, m, n, tile);
                INFO(kiln::dtype_name(dtype) << " " << m << " x " << n << " pads " << pad_in << ", " << pad_out
                                             << " offset " << offset << " " << config.to_string() << " pairs in "
                                             << pairs.in << " out " << pairs.out);
                REQUIRE(skinny->supports(p, dev, config).ok);
                if (access_bytes == 4) ++(pairs.in && pairs.out ? both : pairs.in || pairs.out ? only_one : neither);
                out.store.copy_from_host(out.host.data(), out.host.size());
                const kiln::Status st = skinny->launch(args, p, config, nullptr, stream);
                INFO(st.message());
                REQUIRE(st.ok());
                stream.synchronize();
                std::vector<std::uint8_t> got(out.host.size());
                out.store.copy_to_host(got.data(), got.size());
                CHECK(got == want);  // out's padding and the bytes before it untouched too
                ++runs;
              }
          }
  // Each path ran: pairs on both sides, on one side only, on neither.
  CHECK(both >= 5);
  CHECK(only_one >= 5);
  CHECK(neither >= 5);
  CHECK(runs == static_cast<std::int64_t>(dtypes.size() * tile_sizes.size()) * 7 * 3 * 2 * 2 * 2);
  // 4-byte types take only 4-byte accesses.
  const kiln::Problem f32p = schema.problem_from_dims(kiln::f32, {100, 1000}, gpu);
  CHECK(skinny->space().violated(kiln::Config{{"block", 256}, {"tile_bytes", 32768}, {"access_bytes", 2}}, dev, f32p));
}

TEST_CASE("transpose_tiled_multirow in row groups, whole tile columns and its per-problem defaults", "[transpose][gpu][staged]") {
  // The tile orders added for issue 12: group_rows 8, 32 and 1024 (whole tile columns; the last
  // group partial: 65601 rows are 1026 tile rows of 64, 2051 of 32), and short matrices (at most
  // kMultirowWholeColumns tile rows) taken whole tile column by column whatever the config says;
  // and the per-problem defaults (32 x 32 tiles on short sides, whole tile columns otherwise).  Partial tiles on both sides; padded and one-element-offset views
  // on both sides; every byte of out's storage compared.
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op op = rt.op("transpose");
  const kiln::OpSchema& schema = op.schema();
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* multirow = rt.registry().find_variant("transpose_tiled_multirow");
  REQUIRE(multirow != nullptr);
  const kiln::Stream stream;
  const bool quick = kiln_test::quick_mode();
  std::uint64_t seed = 700;
  std::int64_t grouped_runs = 0, column_runs = 0, default_runs = 0, shifted_pair_runs = 0, out_shifted_pair_runs = 0;
  struct Case {
    std::int64_t m, n;
  };
  // Short (<= 8 tile rows of 32 or 64, partial last tile rows: whole columns) and squat (more tile
  // rows than one group of 8, fewer than 32); 24 and 100 rows: the short-side defaults.
  const std::vector<Case> shapes = quick ? std::vector<Case>{{100, 1003}, {24, 517}, {300, 521}, {67, 1000}}
                                         : std::vector<Case>{{100, 1003}, {24, 517}, {300, 521}, {67, 1000}, {200, 3001},
                                                             {33, 4099}, {1025, 2047}, {4097, 259}, {130, 100003},
                                                             {65601, 37}};
  for (const kiln::DType dtype : {kiln::f32, kiln::bf16})
    for (const Case& shape : shapes)
      for (const std::int64_t pad : {0, 3})
        for (const std::int64_t offset : {0, 1}) {
          if (quick && pad != 3 * offset) continue;  // sanitizer runs: dense and aligned, padded and offset
          const std::int64_t m = shape.m, n = shape.n;
          StoredView in = stored_view(dtype, m, n, false, pad, offset, seed++);
          StoredView out = stored_view(dtype, n, m, false, pad + 2, offset, seed++);
          std::vector<std::uint8_t> want = out.host;
          kiln::TensorRef want_view = out.host_view;
          want_view.data = want.data() + (static_cast<std::uint8_t*>(out.host_view.data) - out.host.data());
          REQUIRE(schema.reference(kiln::Args{in.host_view, want_view}, op.problem({in.host_view, want_view})).ok());
          const kiln::Args args{in.view, out.view};
          const kiln::Problem p = op.problem(args);
          const kiln::Config for_problem = multirow->default_config_for(dev, p);
          REQUIRE(!multirow->space().violated(for_problem, dev, p));
          const std::int64_t tile_rows_64 = (m + 63) / 64;
          for (const kiln::Config& config : multirow->space().enumerate(dev, p)) {
            const bool grouped = config.get("group_rows") > 1;
            const bool columns = tile_rows_64 <= kiln::transpose::kMultirowWholeColumns && config.get("tiles_per_block") == 1 &&
                                 !grouped;
            const bool is_default = config == for_problem;
            if (!grouped && !columns && !is_default) continue;
            // Sanitizer runs: the default and the scalar 64 x 64, 8-row kernels (every hint).
            if (quick && !is_default &&
                !(config.get("tile") == 64 && config.get("block_rows") == 8 && config.get("vector_width") == 1 &&
                  config.get("tiles_per_block") == 1))
              continue;
            INFO(config.to_string() << " " << p.key() << " pad " << pad << " offset " << offset << " align " << p.align_bytes);
            if (!multirow->supports(p, dev, config).ok) {
              CHECK(config.get("vector_width") > 1);  // only alignment refuses
              CHECK(!is_default);                     // the default for the problem always fits
              continue;
            }
            out.store.copy_from_host(out.host.data(), out.host.size());
            const kiln::Status st = multirow->launch(args, p, config, nullptr, stream);
            INFO(st.message());
            REQUIRE(st.ok());
            stream.synchronize();
            std::vector<std::uint8_t> got(out.host.size());
            out.store.copy_to_host(got.data(), got.size());
            CHECK(got == want);
            grouped_runs += grouped;
            column_runs += columns;
            default_runs += is_default;
            // 2-byte pairs on a view with rows off a 4-byte boundary (odd pitch or offset).
            const bool pairs = kiln::dtype_size(dtype) == 2 && config.get("vector_width") == 2;
            shifted_pair_runs += pairs && p.align_bytes == 2;
            // `in` 4-byte aligned (even pitch, no offset), `out` not (odd pitch): the pair kernel
            // that shifts out's pairs; the others run the scalar twin.
            out_shifted_pair_runs += pairs && offset == 0 && (n + pad) % 2 == 0 && (m + pad + 2) % 2 == 1;
          }
        }
  const std::int64_t cases = static_cast<std::int64_t>(shapes.size()) * 2 * (quick ? 2 : 4);
  CHECK(default_runs == cases);
  CHECK(grouped_runs >= cases * 4);  // at least 2 scalar grouped kernels of each size, in groups of 8 and 32
  CHECK(column_runs >= cases / 2 * 3);
  // The per-problem default of a 2-byte type moves pairs whatever the alignment: every bf16 case
  // with an odd pitch or an offset ran them at least once (the quick run keeps one such view).
  CHECK(shifted_pair_runs >= static_cast<std::int64_t>(shapes.size()) * (quick ? 1 : 3));
  CHECK(out_shifted_pair_runs >= (quick ? 1 : 5));  // 67 x 1000 dense; 100 x 1003, 300 x 521 ... padded
}

TEST_CASE("transpose honours both row strides and leaves the padding alone", "[transpose][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Stream stream;

  // in: 129 x 257 inside rows of 260; out: 257 x 129 inside rows of 132 (16-byte pitches), whose
  // last 3 columns are guards.
  const std::int64_t m = 129, n = 257, ld_in = 260, ld_out = 132;
  const std::vector<float> hin = random_floats(static_cast<std::size_t>(m * ld_in), 41);
  kiln::Buffer in_store = kiln::Buffer::alloc(gpu, kiln::f32, {m, ld_in});
  kiln::Buffer out_store = kiln::Buffer::alloc(gpu, kiln::f32, {n, ld_out});
  in_store.copy_from_host(hin.data(), hin.size() * sizeof(float));
  const auto in = kiln::TensorRef::matrix(in_store.data(), kiln::f32, m, n, ld_in, gpu);
  const auto out = kiln::TensorRef::matrix(out_store.data(), kiln::f32, n, m, ld_out, gpu);
  const kiln::Args args{in, out};
  const kiln::Problem p = tr.problem(args);
  CHECK(p.align_bytes == 16);

  for (const kiln::Variant* v : cuda_variants(rt.registry())) {
    for (const kiln::Config& config : configs_to_test(*v, dev, p)) {
      INFO(v->name() << " " << config.to_string());
      REQUIRE(v->supports(p, dev, config).ok);
      out_store.fill_bytes(0xFF);
      REQUIRE(v->launch(args, p, config, nullptr, stream).ok());
      stream.synchronize();
      const std::vector<float> got = out_store.to_host<float>();
      CHECK(count_wrong(hin.data(), ld_in, got.data(), ld_out, m, n) == 0);
      std::int64_t guards_written = 0;
      for (std::int64_t r = 0; r < n; ++r)
        for (std::int64_t c = m; c < ld_out; ++c) guards_written += !std::isnan(got[static_cast<std::size_t>(r * ld_out + c)]);
      CHECK(guards_written == 0);
    }
  }
}

TEST_CASE("transpose float4 configs refuse views that are not 16-byte aligned", "[transpose][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::Device gpu = kiln::Device::cuda(0);
  const kiln::DeviceInfo& dev = kiln::device_info(gpu);
  const kiln::Variant* multirow = rt.registry().find_variant("transpose_tiled_multirow");
  REQUIRE(multirow != nullptr);
  const kiln::Stream stream;

  // in starts one element into its storage; both row strides are multiples of 4, so only that
  // pointer is misaligned.
  const std::int64_t m = 37, n = 129, ld_in = 132, ld_out = 40;
  const std::vector<float> hin = random_floats(static_cast<std::size_t>(m * ld_in), 51);
  kiln::Buffer in_store = kiln::Buffer::alloc(gpu, kiln::f32, {m * ld_in});
  kiln::Buffer out_store = kiln::Buffer::alloc(gpu, kiln::f32, {n * ld_out});
  in_store.copy_from_host(hin.data(), hin.size() * sizeof(float));
  const auto in_off = kiln::TensorRef::matrix(static_cast<float*>(in_store.data()) + 1, kiln::f32, m, n, ld_in, gpu);
  const auto out = kiln::TensorRef::matrix(out_store.data(), kiln::f32, n, m, ld_out, gpu);

  SECTION("in one element in: float4 refused with a reason, everything else exact") {
    const kiln::Args args{in_off, out};
    const kiln::Problem p = tr.problem(args);
    CHECK(p.align_bytes == 4);
    std::int64_t refused = 0;
    for (const kiln::Variant* v : cuda_variants(rt.registry())) {
      for (const kiln::Config& config : configs_to_test(*v, dev, p)) {
        INFO(v->name() << " " << config.to_string());
        const kiln::Support s = v->supports(p, dev, config);
        if (is_vector_config(*v, config)) {
          CHECK(!s.ok);
          CHECK(contains(s.reason, "16-byte"));
          // launch() itself checks the pointers too and fails cleanly rather than faulting.
          CHECK(v->launch(args, p, config, nullptr, stream).kind() == kiln::ErrorKind::unsupported);
          ++refused;
          continue;
        }
        REQUIRE(s.ok);
        out_store.fill_bytes(0xFF);
        REQUIRE(v->launch(args, p, config, nullptr, stream).ok());
        stream.synchronize();
        const std::vector<float> got = out_store.to_host<float>();
        CHECK(count_wrong(hin.data() + 1, ld_in, got.data(), ld_out, m, n) == 0);
      }
    }
    CHECK(refused == 36 + 3 * 3);  // 9 float4 kernels x 4 tiles_per_block, 3 of them in groups of 8, 32 and 1024

    // op() skips the refused default and is still exact (37 rows: transpose_skinny, which takes
    // any 4-byte alignment).
    const kiln::Decision d = rt.explain(p);
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "transpose_skinny");
    out_store.fill_bytes(0xFF);
    tr(args);
    kiln::Stream().synchronize();
    const std::vector<float> got = out_store.to_host<float>();
    CHECK(count_wrong(hin.data() + 1, ld_in, got.data(), ld_out, m, n) == 0);
  }
  SECTION("out one element in") {
    const auto in = kiln::TensorRef::matrix(in_store.data(), kiln::f32, m, n, ld_in, gpu);
    const auto out_off = kiln::TensorRef::matrix(static_cast<float*>(out_store.data()) + 1, kiln::f32, n, m, ld_out, gpu);
    const kiln::Problem p = tr.problem({in, out_off});
    CHECK(p.align_bytes == 4);
    const kiln::Config float4_config{
        {"tile", 32}, {"block_rows", 8}, {"vector_width", 4}, {"load_hint", 0}, {"store_hint", 0}, {"tiles_per_block", 1},
        {"group_rows", 1}};
    CHECK(!multirow->supports(p, dev, float4_config).ok);
    CHECK(multirow->supports(p, dev, multirow->default_config(dev)).ok);  // the scalar default
  }
  SECTION("aligned views are accepted and chosen") {
    const auto in = kiln::TensorRef::matrix(in_store.data(), kiln::f32, m, n, ld_in, gpu);
    const kiln::Problem p = tr.problem({in, out});
    CHECK(p.align_bytes == 16);
    CHECK(multirow->supports(p, dev, multirow->default_config(dev)).ok);
    const kiln::Decision d = rt.explain(p);
    REQUIRE(d.variant != nullptr);
    CHECK(d.variant->name() == "transpose_skinny");  // 37 rows: a short side
  }
}

TEST_CASE("op(\"transpose\") on device buffers end to end", "[transpose][gpu]") {
  kiln::Runtime rt(make_registry(), kiln_test::offline_options());
  kiln::Op tr = rt.op("transpose");
  const kiln::Device gpu = kiln::Device::cuda(0);
  kiln::OwnedStream stream(gpu);

  // Pitched (aligned: the float4 default) and dense with odd extents (misaligned: a fallback).
  for (const bool pitched : {true, false}) {
    const std::int64_t m = pitched ? 1024 : 333, n = pitched ? 1024 : 1001;
    INFO(m << "x" << n << (pitched ? " pitched" : " dense"));
    const std::vector<float> hin = random_floats(static_cast<std::size_t>(m * n), 61);
    kiln::Buffer in = pitched ? kiln::Buffer::alloc_pitched(gpu, kiln::f32, m, n) : kiln::Buffer::alloc(gpu, kiln::f32, {m, n});
    kiln::Buffer out = pitched ? kiln::Buffer::alloc_pitched(gpu, kiln::f32, n, m) : kiln::Buffer::alloc(gpu, kiln::f32, {n, m});
    in.copy_from_host(hin.data(), hin.size() * sizeof(float));
    out.fill_bytes(0xFF);
    kiln::Stream().synchronize();  // the copies ran on the legacy stream; ours does not wait for it
    tr({in, out}, stream);
    stream.synchronize();
    const std::vector<float> got = out.to_host<float>();  // rows packed: n x m dense
    CHECK(count_wrong(hin.data(), n, got.data(), m, m, n) == 0);
    const kiln::Decision d = rt.explain(tr.problem({in, out}));
    REQUIRE(d.variant != nullptr);
    // tiled_multirow: a small aligned matrix (at most 2^22 elements) takes float4, a misaligned
    // one (dense 333 x 1001) the scalar-access default.
    CHECK(d.variant->name() == "transpose_tiled_multirow");
    CHECK(d.config.get_or("vector_width", 0) == (pitched ? 4 : 1));
  }
}
