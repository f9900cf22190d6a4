#include "histogram_variants.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include <cuda_runtime.h>

#include <kiln/cuda_status.hpp>

#include "histogram_kernels.cuh"
#include "histogram_params.hpp"
#include "histogram_reference.hpp"
#include "histogram_spill.cuh"
#include "histogram_thread_private.cuh"

namespace kiln::histogram {
namespace {

constexpr std::size_t kDefaultSmem = 48 * 1024;  // dynamic shared memory without opting in

// Blocks for `items` units of work: enough to fill blocks_per_sm per SM, never more than needed.
unsigned grid_for(std::int64_t items, int block, int blocks_per_sm, int sms) {
  const std::int64_t needed = (items + block - 1) / block;
  const std::int64_t full = std::int64_t(blocks_per_sm) * sms;
  return unsigned(std::max<std::int64_t>(1, std::min(needed, full)));
}

// Blocks for thread_private over `nvec` 16-byte loads.  Every block pays a fixed cost
// for its counters (zeroing 256 bytes per thread, summing them), so small inputs get one block
// per SM first, as many SMs as one load per thread needs, and more blocks per SM only once a
// thread would count more than `round` loads; never more than blocks_per_sm per SM.  (Before
// 2026-11-26, sixth session: one block per batch of five loads per thread, so 1 MiB ran on 52 of
// 132 SMs and 3 MiB on 154 blocks, 22 SMs with two.)
unsigned private_grid(std::int64_t nvec, int block, int blocks_per_sm, int sms, int round) {
  const std::int64_t one_load = (nvec + block - 1) / block;
  const std::int64_t full_rounds = (nvec + std::int64_t(block) * round - 1) / (std::int64_t(block) * round);
  const std::int64_t want = std::max(std::min<std::int64_t>(one_load, sms), full_rounds);
  return unsigned(std::max<std::int64_t>(1, std::min(want, std::int64_t(blocks_per_sm) * sms)));
}

// What every launch needs, read from the arguments; zeroes the bins on the stream.
struct Launch {
  const void* data = nullptr;
  std::int64_t n = 0;
  std::uint32_t* out = nullptr;
  int nbins = kByteBins;
  RangeParams range;
  cudaStream_t stream = nullptr;
  int sms = 1;
  int runs_max = 0;  // thread_private bytes: see choose_path
  int few_bins = 0;  // thread_private bytes, adaptive 2: see choose_path
  int exchange = 0;  // thread_private generic kernel: flush by atomicExch (flush_tile_exchange)
};

Status prepare_launch(const std::string& name, bool range, const Args& args, const Problem& p, Stream stream, Launch& l) {
  l.data = args.tensor(0).data;
  l.n = args.tensor(0).numel();
  l.out = args.tensor(1).as<std::uint32_t>();
  l.nbins = bins_of(p, range);
  l.stream = static_cast<cudaStream_t>(stream.handle());
  l.sms = std::max(1, sm_count(p.device));
  if (reinterpret_cast<std::uintptr_t>(l.out) % alignof(std::uint32_t) != 0) {
    return Status::fail(ErrorKind::argument, name + ": bins must be 4-byte aligned");
  }
  if (range) {
    Status st = range_params_of(args, l.nbins, l.range);
    if (!st.ok()) return st;
  }
  const cudaError_t e = cudaMemsetAsync(l.out, 0, std::size_t(l.nbins) * sizeof(std::uint32_t), l.stream);
  if (e != cudaSuccess) return cuda_status(e, name + ": zeroing bins");
  return Status::success();
}


// Kernels needing more than 48 KiB of dynamic shared memory must opt in first.
template <class Kernel>
Status allow_smem(Kernel kernel, std::size_t bytes, const std::string& name) {
  if (bytes <= kDefaultSmem) return Status::success();
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  return cuda_status(e, name + ": shared memory opt-in");
}

// histogram_range kernels read f32 and write u32: both must be 4-byte aligned.
Support range_alignment(const Problem& p) {
  if (p.align_bytes < 4) return Support::no("f32 data or u32 bins not 4-byte aligned");
  return Support::yes();
}

VariantDesc desc_of(const char* what, bool range, int priority, const char* summary) {
  VariantDesc d;
  d.name = std::string(range ? "histogram_range_" : "histogram_") + what;
  d.op = range ? "histogram_range" : "histogram";
  d.device_kind = DeviceKind::cuda;
  d.dtypes = {range ? f32 : u8};
  d.priority = priority;
  d.summary = summary;
  return d;
}

class GlobalAtomic final : public Variant {
 public:
  explicit GlobalAtomic(bool range)
      : Variant(desc_of("global_atomic", range, 10, "atomicAdd of each element into the global bins"),
                global_atomic_space()),
        range_(range) {}
  Config default_config(const DeviceInfo& d) const override { return global_atomic_default(d); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return range_ ? range_alignment(p) : Support::yes();
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    Launch l;
    Status st = prepare_launch(name(), range_, args, p, stream, l);
    if (!st.ok() || l.n == 0) return st;
    const int block = c.get_or("block", 256);
    const unsigned grid = grid_for(l.n, block, c.get_or("blocks_per_sm", 8), l.sms);
    if (range_) {
      histogram_global_atomic_kernel<RangeBins>
          <<<grid, block, 0, l.stream>>>(static_cast<const float*>(l.data), l.n, RangeBins{l.range}, l.out);
    } else {
      histogram_global_atomic_kernel<ByteBins>
          <<<grid, block, 0, l.stream>>>(static_cast<const std::uint8_t*>(l.data), l.n, ByteBins{}, l.out);
    }
    return cuda_launch_status(name());
  }

 private:
  bool range_;
};

class Smem final : public Variant {
 public:
  explicit Smem(bool range)
      : Variant(desc_of("smem", range, 20, "one shared-memory histogram per block, grid-stride loop"), smem_space()),
        range_(range) {}
  Config default_config(const DeviceInfo& d) const override { return smem_default(d); }
  Support supports(const Problem& p, const DeviceInfo& d, const Config&) const override {
    if (!range_) return Support::yes();
    Support s = range_alignment(p);
    if (!s) return s;
    const std::size_t bytes = std::size_t(bins_of(p, true)) * 4;
    if (bytes > smem_limit(d)) {
      return Support::no("bins * 4 = " + std::to_string(bytes) + " bytes exceed the " + std::to_string(smem_limit(d)) +
                         " bytes of shared memory per block (histogram_range_global_atomic has no limit)");
    }
    return Support::yes();
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    Launch l;
    Status st = prepare_launch(name(), range_, args, p, stream, l);
    if (!st.ok() || l.n == 0) return st;
    const int block = c.get_or("block", 256);
    const unsigned grid = grid_for(l.n, block, c.get_or("blocks_per_sm", 8), l.sms);
    const std::size_t smem = std::size_t(l.nbins) * 4;
    if (range_) {
      st = allow_smem(histogram_smem_kernel<RangeBins>, smem, name());
      if (!st.ok()) return st;
      histogram_smem_kernel<RangeBins><<<grid, block, smem, l.stream>>>(static_cast<const float*>(l.data), l.n,
                                                                         RangeBins{l.range}, l.nbins, l.out);
    } else {
      histogram_smem_kernel<ByteBins><<<grid, block, smem, l.stream>>>(static_cast<const std::uint8_t*>(l.data), l.n,
                                                                        ByteBins{}, l.nbins, l.out);
    }
    return cuda_launch_status(name());
  }

 private:
  bool range_;
};

class WarpPrivate final : public Variant {
 public:
  explicit WarpPrivate(bool range)
      : Variant(desc_of("warp_private", range, 30,
                        "private shared-memory copies per warp or lane, 16-byte loads, runs of equal bins merged"),
                warp_private_space(range)),
        range_(range) {}
  Config default_config(const DeviceInfo& d) const override { return warp_private_default(d, range_); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return range_ ? range_alignment(p) : Support::yes();
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    Launch l;
    Status st = prepare_launch(name(), range_, args, p, stream, l);
    if (!st.ok() || l.n == 0) return st;
    const int block = 32 * c.get_or("warps", 16);
    const int copies = c.get_or("copies", 1);
    const int by_lane = c.get_or("by_lane", 0);
    const bool vector = c.get_or("vector", 1) > 1;
    if (copies < 1 || (copies & (copies - 1)) != 0) {
      return Status::fail(ErrorKind::argument, name() + ": copies must be a power of two");
    }
    const int per_item = vector ? (range_ ? RangeBins::kPerVector : ByteBins::kPerVector) : 1;
    const unsigned grid = grid_for((l.n + per_item - 1) / per_item, block, c.get_or("blocks_per_sm", 4), l.sms);
    const std::size_t smem = std::size_t(copies) * std::size_t(l.nbins) * 4;
    if (range_) {
      const auto* data = static_cast<const float*>(l.data);
      const RangeBins rule{l.range};
      if (vector) {
        st = allow_smem(histogram_private_kernel<RangeBins, true>, smem, name());
        if (st.ok())
          histogram_private_kernel<RangeBins, true>
              <<<grid, block, smem, l.stream>>>(data, l.n, rule, l.nbins, copies, by_lane, l.out);
      } else {
        st = allow_smem(histogram_private_kernel<RangeBins, false>, smem, name());
        if (st.ok())
          histogram_private_kernel<RangeBins, false>
              <<<grid, block, smem, l.stream>>>(data, l.n, rule, l.nbins, copies, by_lane, l.out);
      }
    } else {
      const auto* data = static_cast<const std::uint8_t*>(l.data);
      if (vector) {
        histogram_private_kernel<ByteBins, true>
            <<<grid, block, smem, l.stream>>>(data, l.n, ByteBins{}, l.nbins, copies, by_lane, l.out);
      } else {
        histogram_private_kernel<ByteBins, false>
            <<<grid, block, smem, l.stream>>>(data, l.n, ByteBins{}, l.nbins, copies, by_lane, l.out);
      }
    }
    if (!st.ok()) return st;
    return cuda_launch_status(name());
  }

 private:
  bool range_;
};

// Both ops: per-thread 8-bit counters (histogram_thread_private.cuh).  histogram_range needs
// bins <= 256 (a bin is one byte of the counter address).
// What thread_private and spill share: 8-bit counters per thread cover at most 256 bins.
Support byte_counter_support(const Problem& p, bool range) {
  if (!range) return Support::yes();
  if (bins_of(p, true) > kMaxThreadPrivateBins)
    return Support::no("bins > 256: the 8-bit counters of a thread cover at most 256 bins");
  return range_alignment(p);
}

Status prepare_byte_counter_launch(const std::string& name, bool range, const Args& args, const Problem& p, Stream stream,
                                   Launch& l) {
  Status st = prepare_launch(name, range, args, p, stream, l);
  if (!st.ok() || l.n == 0) return st;
  if (l.nbins > kMaxThreadPrivateBins)
    return Status::fail(ErrorKind::argument, name + ": at most 256 bins (bins = " + std::to_string(l.nbins) + ")");
  return st;
}

class ThreadPrivate final : public Variant {
 public:
  explicit ThreadPrivate(bool range)
      : Variant(desc_of("thread_private", range, 40,
                        range ? "per-thread 8-bit counters in shared memory (bins <= 256), conflict-free updates, "
                                "16-byte loads"
                              : "per-thread 8-bit counters in shared memory, conflict-free atomic updates, 16-byte "
                                "loads, 16 equal bytes counted at once"),
                thread_private_space(range)),
        range_(range) {}
  Config default_config(const DeviceInfo& d) const override { return thread_private_default(d, range_); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return byte_counter_support(p, range_);
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    Launch l;
    Status st = prepare_byte_counter_launch(name(), range_, args, p, stream, l);
    if (!st.ok() || l.n == 0) return st;
    const int block = c.get_or("block", 256);
    const int ilp = c.get_or("ilp", range_ ? 1 : kDefaultIlp);
    if (range_ && ilp > 1) return Status::fail(ErrorKind::argument, name() + ": ilp must be 0 or 1 for floats");
    const int adaptive = range_ ? 0 : c.get_or("adaptive", kDefaultAdaptive);
    // Not a tuned parameter (the tuner draws uniform bytes, where no warp takes the runs path): a
    // launch argument so that test_histogram_perf_gpu can compare thresholds.
    const int runs_max = c.get_or("runs_max", kDefaultRunsMax);
    const int per_vector = range_ ? RangeBins::kPerVector : ByteBins::kPerVector;
    const std::int64_t nvec = (l.n + per_vector - 1) / per_vector;
    // `grid` (a launch argument outside the tuned space, for measurements): that many blocks.
    // Floats keep one block per batch of loads per thread (private_grid not timed with them).
    const int forced = c.get_or("grid", 0);
    const int bpsm = c.get_or("blocks_per_sm", 3);
    const unsigned grid = forced > 0 ? unsigned(forced)
                          : range_   ? grid_for((nvec + kBatch<RangeBins> - 1) / kBatch<RangeBins>, block, bpsm, l.sms)
                                     : private_grid(nvec, block, bpsm, l.sms, kFlushVectors<ByteBins>);
    l.runs_max = runs_max;
    l.few_bins = c.get_or("few_bins", kDefaultFewBins);  // as runs_max: a launch argument, not tuned
    l.exchange = c.get_or("exchange", kDefaultExchange);  // the same
    switch (block * 100 + ilp * 10 + adaptive) {
      case 25600: return run<256, 0, 0>(grid, l);
      case 25601: return run<256, 0, 1>(grid, l);
      case 25610: return run<256, 1, 0>(grid, l);
      case 25611: return run<256, 1, 1>(grid, l);
      case 25612: return run<256, 1, 2>(grid, l);
      case 25620: return run<256, 2, 0>(grid, l);
      case 25621: return run<256, 2, 1>(grid, l);
      case 25622: return run<256, 2, 2>(grid, l);
      case 51200: return run<512, 0, 0>(grid, l);
      case 51201: return run<512, 0, 1>(grid, l);
      case 51210: return run<512, 1, 0>(grid, l);
      case 51211: return run<512, 1, 1>(grid, l);
      case 51212: return run<512, 1, 2>(grid, l);
      case 51220: return run<512, 2, 0>(grid, l);
      case 51221: return run<512, 2, 1>(grid, l);
      case 51222: return run<512, 2, 2>(grid, l);
      case 76800: return run<768, 0, 0>(grid, l);
      case 76801: return run<768, 0, 1>(grid, l);
      case 76810: return run<768, 1, 0>(grid, l);
      case 76811: return run<768, 1, 1>(grid, l);
      case 76812: return run<768, 1, 2>(grid, l);
      case 76820: return run<768, 2, 0>(grid, l);
      case 76821: return run<768, 2, 1>(grid, l);
      case 76822: return run<768, 2, 2>(grid, l);
      default:
        return Status::fail(ErrorKind::argument,
                            name() + ": block must be 256, 512 or 768, ilp 0, 1 or 2 and adaptive 0, 1 or 2 (ilp 0: adaptive 0 or 1)");
    }
  }

 private:
  template <int kBlock, int kIlp, int kAdaptive>
  Status run(unsigned grid, const Launch& l) const {
    const std::size_t smem = thread_private_smem_bytes(range_, kAdaptive, kBlock);
    if (range_) {
      if constexpr (kIlp <= 1 && kAdaptive == 0) {  // floats: ilp 0 or 1, no adaptive: two kernels per block
        auto* kernel = histogram_thread_private_kernel<RangeBins, kBlock, kIlp, 0>;
        Status st = allow_smem(kernel, smem, name());
        if (!st.ok()) return st;
        kernel<<<grid, kBlock, smem, l.stream>>>(static_cast<const float*>(l.data), l.n, RangeBins{l.range}, l.nbins,
                                                 0, 0, l.exchange, l.out);
      }
    } else if constexpr (kAdaptive == 0) {
      auto* kernel = histogram_thread_private_plain_kernel<kBlock, kIlp>;
      Status st = allow_smem(kernel, smem, name());
      if (!st.ok()) return st;
      kernel<<<grid, kBlock, smem, l.stream>>>(static_cast<const std::uint8_t*>(l.data), l.n, l.out);
    } else {
      auto* kernel = histogram_thread_private_kernel<ByteBins, kBlock, kIlp, kAdaptive>;
      Status st = allow_smem(kernel, smem, name());
      if (!st.ok()) return st;
      kernel<<<grid, kBlock, smem, l.stream>>>(static_cast<const std::uint8_t*>(l.data), l.n, ByteBins{}, kByteBins,
                                               l.runs_max, l.few_bins, l.exchange, l.out);
    }
    return cuda_launch_status(name());
  }

  bool range_;
};

// Both ops: thread_private's counters without the periodic flush; a counter passing 255 spills
// into 32-bit block counts (histogram_spill.cuh).  histogram_range needs bins <= 256.  Ranked
// below thread_private (faster on most data and sizes, README), above the vendor's 35: a tuning
// candidate for long runs of equal bytes and small float inputs.
class Spill final : public Variant {
 public:
  explicit Spill(bool range)
      : Variant(desc_of("spill", range, 38,
                        range ? "per-thread 8-bit counters in shared memory that spill on overflow (bins <= 256), "
                                "no barrier in the main loop, 16-byte loads"
                              : "per-thread 8-bit counters in shared memory that spill on overflow, no barrier in "
                                "the main loop, 16-byte loads; runs and hot values counted in SIMD"),
                spill_space(range)),
        range_(range) {}
  Config default_config(const DeviceInfo& d) const override { return spill_default(d, range_); }
  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    return byte_counter_support(p, range_);
  }
  Status launch(const Args& args, const Problem& p, const Config& c, void*, Stream stream) const override {
    Launch l;
    Status st = prepare_byte_counter_launch(name(), range_, args, p, stream, l);
    if (!st.ok() || l.n == 0) return st;
    const int block = c.get_or("block", 256);
    const int adaptive = range_ ? 0 : c.get_or("adaptive", 1);
    // At least one batch of 16-byte loads per thread (thread_private's grid before 2026-11-26,
    // sixth session; private_grid was not timed with spill).
    const int per_vector = range_ ? RangeBins::kPerVector : ByteBins::kPerVector;
    const std::int64_t nvec = (l.n + per_vector - 1) / per_vector;
    const int batch = range_ ? kBatch<RangeBins> : kBatch<ByteBins>;
    const unsigned grid = grid_for((nvec + batch - 1) / batch, block, c.get_or("blocks_per_sm", 3), l.sms);
    switch (block * 10 + adaptive) {
      case 2560: return run<256, 0>(grid, l);
      case 2561: return run<256, 1>(grid, l);
      case 5120: return run<512, 0>(grid, l);
      case 5121: return run<512, 1>(grid, l);
      case 7680: return run<768, 0>(grid, l);
      case 7681: return run<768, 1>(grid, l);
      default:
        return Status::fail(ErrorKind::argument, name() + ": block must be 256, 512 or 768 and adaptive 0 or 1");
    }
  }

 private:
  template <int kBlock, int kAdaptive>
  Status run(unsigned grid, const Launch& l) const {
    const std::size_t smem = std::size_t(kBlock) * 256 + kSpillBytesPerBlock;
    if (range_) {
      if constexpr (kAdaptive == 0) {
        auto* kernel = histogram_spill_kernel<RangeBins, kBlock, 0>;
        Status st = allow_smem(kernel, smem, name());
        if (!st.ok()) return st;
        kernel<<<grid, kBlock, smem, l.stream>>>(static_cast<const float*>(l.data), l.n, RangeBins{l.range}, l.nbins,
                                                 l.out);
      }
    } else {
      auto* kernel = histogram_spill_kernel<ByteBins, kBlock, kAdaptive>;
      Status st = allow_smem(kernel, smem, name());
      if (!st.ok()) return st;
      kernel<<<grid, kBlock, smem, l.stream>>>(static_cast<const std::uint8_t*>(l.data), l.n, ByteBins{}, kByteBins,
                                               l.out);
    }
    return cuda_launch_status(name());
  }

  bool range_;
};

}  // namespace

void add_histogram_cuda_variants(Registry& registry) {
  for (bool range : {false, true}) {
    registry.add_variant(std::make_shared<Spill>(range));
    registry.add_variant(std::make_shared<ThreadPrivate>(range));
    registry.add_variant(std::make_shared<GlobalAtomic>(range));
    registry.add_variant(std::make_shared<Smem>(range));
    registry.add_variant(std::make_shared<WarpPrivate>(range));
  }
}

}  // namespace kiln::histogram
