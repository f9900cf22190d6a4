// topk_cub_sort: per row, a full CUB radix sort of (key, index) pairs, then the first k.
//
//   1. build_topk_keys: key = topk_key(x, largest) (topk_sort_key.hpp: ascending key order is the
//      op's output order, NaN and -0 rules included) and index = column, for every element;
//   2. a stable ascending radix sort of the pairs, indices starting in increasing order, so
//      equal keys keep the smaller index first: cub::DeviceRadixSort for one row,
//      cub::DeviceSegmentedRadixSort (one segment per row) for several;
//   3. gather_topk: indices[r][j] = sorted index j of row r, values[r][j] = x[r][that index] (the
//      input value itself, so -0.0 and NaN payloads come out bit for bit).
// Keys, indices, row offsets and CUB's temporary storage all live in the workspace.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <string>

#include "cuda_support.hpp"
#include "topk_sort_key.hpp"
#include "vendor_variant.hpp"
#include "vendor_variants.hpp"

namespace kiln::vendor {
namespace {

constexpr int kBlock = 256;
constexpr std::int64_t kMaxGridDim = 65535;  // loops stride over whatever the grid does not cover

__global__ void build_topk_keys(const float* __restrict__ x, std::int64_t x_stride, int rows, int n, bool largest,
                                std::uint32_t* __restrict__ keys, int* __restrict__ index, int* __restrict__ offsets) {
  const int col0 = blockIdx.x * blockDim.x + threadIdx.x;
  const int col_step = gridDim.x * blockDim.x;
  for (int r = blockIdx.y; r < rows; r += gridDim.y) {
    const float* row = x + static_cast<std::int64_t>(r) * x_stride;
    const std::int64_t base = static_cast<std::int64_t>(r) * n;
    for (int j = col0; j < n; j += col_step) {
      keys[base + j] = topk_key(row[j], largest);
      index[base + j] = j;
    }
  }
  // Segment r is [offsets[r], offsets[r + 1]); rows * n fits int (checked by supports()).
  if (offsets != nullptr && blockIdx.y == 0)
    for (int r = col0; r <= rows; r += col_step) offsets[r] = r * n;
}

__global__ void gather_topk(const float* __restrict__ x, std::int64_t x_stride, const int* __restrict__ sorted,
                            int rows, int n, int k, float* __restrict__ values, std::int64_t values_stride,
                            int* __restrict__ indices, std::int64_t indices_stride) {
  for (int r = blockIdx.y; r < rows; r += gridDim.y) {
    const int* order = sorted + static_cast<std::int64_t>(r) * n;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < k; j += gridDim.x * blockDim.x) {
      const int i = order[j];
      values[static_cast<std::int64_t>(r) * values_stride + j] = x[static_cast<std::int64_t>(r) * x_stride + i];
      indices[static_cast<std::int64_t>(r) * indices_stride + j] = i;
    }
  }
}

dim3 grid_for(std::int64_t cols, std::int64_t rows) {
  const std::int64_t gx = std::min<std::int64_t>(std::max<std::int64_t>(1, (cols + kBlock - 1) / kBlock), kMaxGridDim);
  const std::int64_t gy = std::min<std::int64_t>(std::max<std::int64_t>(1, rows), kMaxGridDim);
  return dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
}

// The CUB sort, on DoubleBuffers (CUB ping-pongs between the two halves and says which holds the
// result, so it needs no copies of its own).  A null temp pointer makes it the size query.
cudaError_t cub_sort(void* temp, std::size_t& temp_bytes, cub::DoubleBuffer<std::uint32_t>& keys,
                     cub::DoubleBuffer<int>& index, int rows, int n, const int* offsets, cudaStream_t stream) {
  if (rows == 1) return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, index, n, 0, 32, stream);
  return cub::DeviceSegmentedRadixSort::SortPairs(temp, temp_bytes, keys, index, rows * n, rows, offsets, offsets + 1,
                                                  0, 32, stream);
}

// Where each buffer sits in the workspace; with a null base, only sizes (workspace_bytes).
struct TopkLayout {
  std::uint32_t* keys[2] = {nullptr, nullptr};
  int* index[2] = {nullptr, nullptr};
  int* offsets = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  std::size_t total = 0;
};

cudaError_t topk_layout(void* base, int rows, int n, TopkLayout& l) {
  cub::DoubleBuffer<std::uint32_t> no_keys;
  cub::DoubleBuffer<int> no_index;
  const cudaError_t err = cub_sort(nullptr, l.temp_bytes, no_keys, no_index, rows, n, nullptr, nullptr);
  if (err != cudaSuccess) return err;
  const std::size_t items = static_cast<std::size_t>(rows) * static_cast<std::size_t>(n);
  WorkspaceCarver carve(base);
  for (int i = 0; i < 2; ++i) l.keys[i] = static_cast<std::uint32_t*>(carve.take(items * sizeof(std::uint32_t)));
  for (int i = 0; i < 2; ++i) l.index[i] = static_cast<int*>(carve.take(items * sizeof(int)));
  if (rows > 1) l.offsets = static_cast<int*>(carve.take((static_cast<std::size_t>(rows) + 1) * sizeof(int)));
  l.temp = carve.take(l.temp_bytes);
  l.total = carve.used();
  return cudaSuccess;
}

class TopkCubSort final : public VendorVariant {
 public:
  TopkCubSort()
      : VendorVariant("topk_cub_sort", "topk", {DType::f32},
                      "per row, CUB radix sort of (order-preserving key, index), first k") {}

  Support supports(const Problem& p, const DeviceInfo&, const Config&) const override {
    const std::int64_t rows = dim_or(p, "rows", 0), n = dim_or(p, "n", 0);
    if (rows < 0 || n < 0 || (n > 0 && rows > INT_MAX / n))
      return Support::no("rows * n = " + std::to_string(rows) + " * " + std::to_string(n) +
                         " exceeds 2^31-1 (CUB's segmented sort takes int)");
    return Support::yes();
  }

  std::size_t workspace_bytes(const Problem& p, const Config&) const override {
    const std::int64_t rows = dim_or(p, "rows", 0), n = dim_or(p, "n", 0);
    if (rows <= 0 || n <= 0 || rows > INT_MAX / n) return 0;
    ScopedDevice on(p.device.ordinal);  // CUB sizes its grid for the current device
    TopkLayout l;
    if (!on.ok() || topk_layout(nullptr, static_cast<int>(rows), static_cast<int>(n), l) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;  // launch() repeats the query and reports the error
    }
    return l.total;
  }

  // args = {x[rows,n] f32, values[rows,k] f32, indices[rows,k] i32; largest}.
  Status launch(const Args& args, const Problem& problem, const Config&, void* workspace,
                Stream stream) const override {
    const TensorRef& x = args.tensor(0);
    const TensorRef& values = args.tensor(1);
    const TensorRef& indices = args.tensor(2);
    const std::int64_t rows = x.rows(), n = x.cols(), k = values.cols();
    const bool largest = dim_or(problem, "largest", scalar_or(args, 0, 1.0) != 0.0 ? 1 : 0) != 0;
    if (rows == 0 || k == 0) return Status::success();
    if (n <= 0 || k > n || rows > INT_MAX / n)
      return Status::fail(ErrorKind::unsupported, "topk_cub_sort: needs 1 <= k <= n and rows * n <= 2^31-1");
    // A rank-1 tensor is one row: its stride is never stepped over.
    const std::int64_t x_stride = rows > 1 ? x.row_stride : n;
    const std::int64_t values_stride = rows > 1 ? values.row_stride : k;
    const std::int64_t indices_stride = rows > 1 ? indices.row_stride : k;
    const int r = static_cast<int>(rows), ni = static_cast<int>(n), ki = static_cast<int>(k);

    ScopedDevice on(problem.device.ordinal);
    if (Status s = device_status(on, "topk_cub_sort"); !s.ok()) return s;
    const auto cu_stream = static_cast<cudaStream_t>(stream.handle());
    if (workspace == nullptr)
      return Status::fail(ErrorKind::internal, "topk_cub_sort: no workspace (see workspace_bytes)");
    TopkLayout l;
    if (Status s = cuda_status(topk_layout(workspace, r, ni, l), "topk_cub_sort", "CUB size query"); !s.ok()) return s;

    build_topk_keys<<<grid_for(n, rows), kBlock, 0, cu_stream>>>(x.as<const float>(), x_stride, r, ni, largest,
                                                                 l.keys[0], l.index[0], l.offsets);
    if (Status s = launch_status("topk_cub_sort"); !s.ok()) return s;

    cub::DoubleBuffer<std::uint32_t> keys(l.keys[0], l.keys[1]);
    cub::DoubleBuffer<int> index(l.index[0], l.index[1]);
    std::size_t temp_bytes = l.temp_bytes;
    if (Status s =
            cuda_status(cub_sort(l.temp, temp_bytes, keys, index, r, ni, l.offsets, cu_stream), "topk_cub_sort",
                        rows == 1 ? "cub::DeviceRadixSort::SortPairs" : "cub::DeviceSegmentedRadixSort::SortPairs");
        !s.ok())
      return s;

    gather_topk<<<grid_for(k, rows), kBlock, 0, cu_stream>>>(x.as<const float>(), x_stride, index.Current(), r, ni, ki,
                                                             values.as<float>(), values_stride, indices.as<int>(),
                                                             indices_stride);
    return launch_status("topk_cub_sort");
  }
};

}  // namespace

std::shared_ptr<const Variant> make_topk_cub_sort() { return std::make_shared<TopkCubSort>(); }

}  // namespace kiln::vendor
