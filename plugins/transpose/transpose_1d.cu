// transpose_read_coalesced and transpose_write_coalesced: 1-D grid-stride loops in the order of
// `in` or of `out` (the seeds' 1-D transposes).
#include <algorithm>
#include <cstdint>

#include <kiln/cuda_status.hpp>

#include "transpose_cuda_variants.hpp"
#include "transpose_copy.hpp"
#include "transpose_kernels.cuh"
#include "transpose_operands.hpp"
#include "transpose_params.hpp"

namespace kiln::transpose {
namespace {

enum class Order { read, write };

class Transpose1d final : public Variant {
 public:
  explicit Transpose1d(Order order)
      : Variant(order == Order::read
                    ? VariantDesc{"transpose_read_coalesced", "transpose", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16, DType::i32}, 10,
                                  "1-D grid-stride loop in the order of in: coalesced reads, strided writes"}
                    : VariantDesc{"transpose_write_coalesced", "transpose", DeviceKind::cuda, {DType::f32, DType::f16, DType::bf16, DType::i32}, 30,
                                  "1-D grid-stride loop in the order of out: strided reads, coalesced writes"},
                one_d_space()),
        order_(order) {}

  Config default_config(const DeviceInfo& device) const override { return one_d_default(device); }

  Support supports(const Problem&, const DeviceInfo&, const Config&) const override { return Support::yes(); }

  Status launch(const Args& args, const Problem& problem, const Config& config, void*, Stream stream) const override {
    const TransposeOperands o = transpose_operands(args);
    if (o.numel() == 0) return Status::success();
    const int block = config.get_or("block", 0);
    if (block <= 0 || block > 1024) return Status::fail(ErrorKind::argument, name() + ": bad config " + config.to_string());
    // The loop strides over the rest when the grid is capped.
    const auto grid = static_cast<unsigned>(std::min<std::int64_t>((o.numel() + block - 1) / block, 2147483647));
    const auto s = static_cast<cudaStream_t>(stream.handle());
    if (o.copy) return transpose_copy(o, s, name());
    if (o.elem_bytes == 2)
      run<std::uint16_t>(o, grid, block, s);
    else
      run<std::uint32_t>(o, grid, block, s);
    return cuda_launch_status(name().c_str());
  }

 private:
  template <class T>
  void run(const TransposeOperands& o, unsigned grid, int block, cudaStream_t s) const {
    if (order_ == Order::read)
      transpose_read_coalesced_kernel<T><<<grid, block, 0, s>>>(o.in_as<T>(), o.ld_in, o.out_as<T>(), o.ld_out, o.m, o.n);
    else
      transpose_write_coalesced_kernel<T><<<grid, block, 0, s>>>(o.in_as<T>(), o.ld_in, o.out_as<T>(), o.ld_out, o.m, o.n);
  }

  Order order_;
};

}  // namespace

std::shared_ptr<const Variant> make_transpose_read_coalesced() { return std::make_shared<Transpose1d>(Order::read); }
std::shared_ptr<const Variant> make_transpose_write_coalesced() { return std::make_shared<Transpose1d>(Order::write); }

}  // namespace kiln::transpose
