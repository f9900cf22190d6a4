// Instantiates gemm_wgmma for every row of kWgmmaConfigs and both 16-bit input types with K-major
// operands (the rows kWgmmaTf32Rows also for TF32, kWgmma3xTf32Rows for 3xTF32, the rows
// kWgmmaMnRows also for a column-major A and / or a row-major B), builds the TMA
// tensor maps and launches the persistent grid.  Compiled for sm_90a only (plugins/gemm/CMakeLists.txt).
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "gemm_wgmma.cuh"
#include "wgmma_configs.hpp"
#include "wgmma_launch.hpp"
#include "wgmma_split_k.hpp"
#include "wgmma_swap.hpp"
#include "wgmma_tensor_map.hpp"

namespace kiln::gemm {
namespace {

// cuTensorMapEncodeTiled's signature (cuda.h), called through a pointer from the runtime's
// driver entry point lookup so that the plugin does not link libcuda.
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct EncodeEntry {
  EncodeTiledFn fn = nullptr;
  std::string why;
};

const EncodeEntry& encode_entry() {
  static const EncodeEntry entry = [] {
    EncodeEntry e;
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr)
      e.why = std::string("the driver offers no cuTensorMapEncodeTiled (") + cudaGetErrorString(err) + ")";
    else
      e.fn = reinterpret_cast<EncodeTiledFn>(fn);
    return e;
  }();
  return entry;
}

// A matrix (rows x cols, row stride `ld` elements, batch stride `batch_stride`) as a tensor map
// with 128-byte swizzled boxes of 128 bytes (the swizzle span) by `box_rows`.  Batched matrices
// get a third dimension; a broadcast (stride 0) or single one stays 2-D (TMA strides must be
// nonzero).
Status encode_matrix(CUtensorMap& map, const void* base, CUtensorMapDataType type, int elem_bytes, int rows, int cols,
                     std::int64_t ld, int batch, std::int64_t batch_stride, int box_rows, bool& batched) {
  batched = batch > 1 && batch_stride != 0;
  // A stride along an extent of one is never used; TMA still wants a multiple of 16 bytes.  k = 0
  // issues no loads, but a tensor map's extents must be at least 1.
  const std::int64_t row_bytes = rows > 1 ? ld * elem_bytes : ((static_cast<std::int64_t>(cols) * elem_bytes + 15) / 16) * 16;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(std::max(cols, 1)), static_cast<cuuint64_t>(std::max(rows, 1)),
                              static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(std::max<std::int64_t>(row_bytes, 16)),
                                 static_cast<cuuint64_t>(batch_stride * elem_bytes)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / elem_bytes), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = encode_entry().fn(&map, type, batched ? 3 : 2, const_cast<void*>(base), dims, strides, box,
                                       elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                       CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return Status::fail(ErrorKind::cuda, "gemm_wgmma: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(r) + ")");
  return Status::success();
}

// What the two tensor maps of a launch are encoded from.
struct MapKey {
  const void* a;
  const void* b;
  void* c;
  const void* a_lo;
  const void* b_lo;
  int m, n, k, batch, splits;
  std::int64_t lda, ldb, ldc, stride_a, stride_b, stride_c;
  bool c_half;
  bool operator==(const MapKey& o) const {
    return a == o.a && b == o.b && c == o.c && a_lo == o.a_lo && b_lo == o.b_lo && m == o.m && n == o.n && k == o.k &&
           batch == o.batch && splits == o.splits && lda == o.lda && ldb == o.ldb && ldc == o.ldc && stride_a == o.stride_a &&
           stride_b == o.stride_b && stride_c == o.stride_c &&
           c_half == o.c_half;
  }
};
struct EncodedMaps {
  bool valid = false;
  MapKey key{};
  CUtensorMap a{}, b{}, c{}, a_lo{}, b_lo{};  // a_lo, b_lo: 3xTF32 only (else copies of a, b)
  bool a_batched = false, b_batched = false, c_batched = false;
};

// `row`: the config row launched; the instantiation is its kernel row's (wgmma_kernel_row), and
// the launch arguments (group, splits) come from `row`.
using LaunchFn = Status (*)(const WgmmaGemmArgs&, const WgmmaConfig& row, cudaStream_t);

// The input types of the launch table (3xTF32: f32 split into TF32 hi and lo parts).
enum WgmmaInput : int { kInF16 = 0, kInBf16 = 1, kInTf32 = 2, kIn3xTf32 = 3, kInputs = 4 };
// Its operand layouts: bit 0 = A column-major (MN-major), bit 1 = B row-major (MN-major).
enum WgmmaLayout : int { kLayoutAMn = 1, kLayoutBMn = 2, kLayouts = 4 };

template <std::size_t I, int IN, int LAYOUT>
Status launch_config(const WgmmaGemmArgs& g, const WgmmaConfig& row, cudaStream_t stream) {
  constexpr WgmmaConfig c = kWgmmaConfigs[I];
  constexpr bool BF16 = IN == kInBf16, SPLIT3 = IN == kIn3xTf32, TF32 = IN == kInTf32 || SPLIT3;
  constexpr bool A_MN = (LAYOUT & kLayoutAMn) != 0, B_MN = (LAYOUT & kLayoutBMn) != 0;
  constexpr int elem_bytes = TF32 ? 4 : 2;
  static_assert(c.bk == 64, "the kernel's k step is one 128-byte swizzled row (64 16-bit or 32 f32 elements)");
  constexpr int smem = wgmma_smem_bytes(c);
  auto kernel =
      gemm_wgmma_kernel<BF16, TF32, A_MN, B_MN, c.bm, c.bn, c.stages, c.consumers, c.pingpong == 1, c.cluster, SPLIT3>;
  const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (attr != cudaSuccess)
    return Status::fail(ErrorKind::cuda, std::string("gemm_wgmma: cudaFuncSetAttribute: ") + cudaGetErrorString(attr));
  if (TF32 && g.c_half)
    return Status::fail(ErrorKind::argument, "gemm_wgmma: TF32 stores C in f32 only");
  if (SPLIT3 && (g.a_lo == nullptr || g.b_lo == nullptr))
    return Status::fail(ErrorKind::argument, "gemm_wgmma: 3xTF32 needs the lo parts of A and B");
  // Split k: the kernel stores f32 partials (alpha 1, through TMA) into the workspace, and the
  // reduction applies alpha and beta (wgmma_split_k.hpp).
  const WgmmaSplitPlan plan = wgmma_split_plan(g.m, g.n, g.k, g.batch, row.splits, 128 / elem_bytes);
  const bool split = plan.splits > 1;
  if (split && (g.partials == nullptr || reinterpret_cast<std::uintptr_t>(g.partials) % 16 != 0))
    return Status::fail(ErrorKind::argument, "gemm_wgmma: split k needs a 16-byte aligned workspace of " +
                                                 std::to_string(plan.bytes) + " bytes");
  if (split && SPLIT3) return Status::fail(ErrorKind::argument, "gemm_wgmma: 3xTF32 does not split k");
  void* const out = split ? g.partials : g.c;
  const bool out_half = !split && g.c_half;
  WgmmaKernelArgs k{out, g.m, g.n, g.k, g.batch, split ? plan.ld : g.ldc, split ? 0 : g.stride_c,
                    split ? 1.0f : g.alpha, split ? 0.0f : g.beta, out_half ? 1 : 0, split || g.beta == 0.0f ? 1 : 0,
                    0, 0, 0, (g.m + c.bm - 1) / c.bm, (g.n + c.bn - 1) / c.bn, row.group, plan.splits, plan.kb_per_split};
  static_assert(c.cluster == 1 || c.cluster == 2, "clusters of 1 or 2 blocks");
  // The maps depend on the operands' addresses, extents and strides only; a repeated call (the
  // usual case: the same weights and activations buffers) reuses this thread's last encoding
  // (one per instantiation, so config and input type are fixed).
  const MapKey key{g.a,   g.b,   out,          g.a_lo,     g.b_lo,     g.m,        g.n,     g.k,
                   g.batch, plan.splits, g.lda, g.ldb, g.ldc, g.stride_a, g.stride_b, g.stride_c, g.c_half};
  thread_local EncodedMaps last;
  if (!last.valid || !(last.key == key)) {
    last.valid = false;
    // TF32 loads the f32 bits as they are (the tensor cores ignore the low mantissa bits).
    const CUtensorMapDataType in_type = TF32   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                        : BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                               : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    // K-major A: m rows of k, boxes of BM rows x 128 bytes of k.  MN-major A (column-major): k
    // rows of m, boxes of 64 m (128 bytes) x 64 k rows (load_operand in gemm_wgmma.cuh).
    Status s = A_MN ? encode_matrix(last.a, g.a, in_type, elem_bytes, g.k, g.m, g.lda, g.batch, g.stride_a, c.bk,
                                    last.a_batched)
                    : encode_matrix(last.a, g.a, in_type, elem_bytes, g.m, g.k, g.lda, g.batch, g.stride_a, c.bm,
                                    last.a_batched);
    if (!s.ok()) return s;
    // K-major B (column-major): n rows of k; with a cluster each block loads BN / cluster rows of
    // B (and multicasts them).  MN-major B (row-major): k rows of n, boxes of 64 n x 64 k rows.
    s = B_MN ? encode_matrix(last.b, g.b, in_type, elem_bytes, g.k, g.n, g.ldb, g.batch, g.stride_b, c.bk,
                             last.b_batched)
             : encode_matrix(last.b, g.b, in_type, elem_bytes, g.n, g.k, g.ldb, g.batch, g.stride_b, c.bn / c.cluster,
                             last.b_batched);
    if (!s.ok()) return s;
    // C: m rows of n, stored 64 rows x 128 bytes at a time by the epilogue.  Split k: the f32
    // partials instead, slice * batch + entry along the third dimension (always 3-D).
    if (split)
      s = encode_matrix(last.c, out, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, g.m, g.n, plan.ld, plan.splits * g.batch,
                        static_cast<std::int64_t>(g.m) * plan.ld, 64, last.c_batched);
    else
      s = encode_matrix(last.c, g.c, g.c_half ? in_type : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, g.c_half ? 2 : 4, g.m, g.n,
                        g.ldc, g.batch, g.stride_c, 64, last.c_batched);
    if (!s.ok()) return s;
    if constexpr (SPLIT3) {  // the lo parts: laid out as the hi parts (wgmma_3xtf32.hpp)
      bool batched = false;
      s = encode_matrix(last.a_lo, g.a_lo, in_type, elem_bytes, g.m, g.k, g.lda, g.batch, g.stride_a, c.bm, batched);
      if (!s.ok()) return s;
      s = encode_matrix(last.b_lo, g.b_lo, in_type, elem_bytes, g.n, g.k, g.ldb, g.batch, g.stride_b,
                        c.bn / c.cluster, batched);
      if (!s.ok()) return s;
    } else {
      last.a_lo = last.a;
      last.b_lo = last.b;
    }
    last.key = key;
    last.valid = true;
  }
  k.a_batched = last.a_batched ? 1 : 0;
  k.b_batched = last.b_batched ? 1 : 0;
  k.c_batched = last.c_batched ? 1 : 0;
  // One block per SM, in whole clusters: as many clusters as the device can hold at once.
  const long long units =
      static_cast<long long>((k.tiles_m + c.cluster - 1) / c.cluster) * k.tiles_n * g.batch * plan.splits;
  long long resident = std::max(1, g.sm_count / c.cluster);
  cudaLaunchConfig_t launch{};
  cudaLaunchAttribute cluster_attr{};
  launch.blockDim = dim3(wgmma_threads(c));
  launch.dynamicSmemBytes = smem;
  launch.stream = stream;
  if constexpr (c.cluster > 1) {
    cluster_attr.id = cudaLaunchAttributeClusterDimension;
    cluster_attr.val.clusterDim.x = c.cluster;
    cluster_attr.val.clusterDim.y = 1;
    cluster_attr.val.clusterDim.z = 1;
    launch.attrs = &cluster_attr;
    launch.numAttrs = 1;
    // Clusters need their blocks in one GPC, so fewer than sm_count / 2 may fit; asked once.
    static const int max_clusters = [&] {
      cudaLaunchConfig_t probe = launch;
      probe.gridDim = dim3(c.cluster * static_cast<unsigned>(resident));
      int n = 0;
      return cudaOccupancyMaxActiveClusters(&n, kernel, &probe) == cudaSuccess && n > 0 ? n : 0;
    }();
    if (max_clusters > 0) resident = std::min<long long>(resident, max_clusters);
  }
  launch.gridDim = dim3(static_cast<unsigned>(c.cluster * std::min(units, resident)));
  const cudaError_t err = cudaLaunchKernelEx(&launch, kernel, last.a, last.b, last.c, last.a_lo, last.b_lo, k);
  if (err != cudaSuccess)
    return Status::fail(ErrorKind::cuda, std::string("gemm_wgmma: launch: ") + cudaGetErrorString(err));
  const Status launched = cuda_launch_status("gemm_wgmma");
  if (!launched.ok() || !split) return launched;
  WgmmaSplitReduceArgs r;
  r.partials = static_cast<const float*>(g.partials);
  r.ld = plan.ld;
  r.m = g.m;
  r.n = g.n;
  r.batch = g.batch;
  r.splits = plan.splits;
  r.c = g.c;
  r.ldc = g.ldc;
  r.stride_c = g.stride_c;
  r.c_type = TF32 || !g.c_half ? 0 : BF16 ? 1 : 2;
  r.alpha = g.alpha;
  r.beta = g.beta;
  return launch_wgmma_split_reduce(r, stream);
}

// Whether row `index` is built for input IN with operand layout LAYOUT: every row for 16-bit
// K-major operands, kWgmmaTf32Rows for TF32 (K-major only), kWgmmaMnRows for 16-bit MN-major ones.
constexpr bool built(int index, int in, int layout) {
  if (in == kInTf32) return layout == 0 && wgmma_tf32_row(index);
  if (in == kIn3xTf32) return layout == 0 && wgmma_3xtf32_row(index);
  return wgmma_layout_row(index, (layout & kLayoutAMn) != 0, (layout & kLayoutBMn) != 0);
}

// Row I's launcher, or nullptr where row I is not built for IN and LAYOUT or only shares another
// row's kernel (launched through that row's entry; `if constexpr` keeps those from being
// instantiated at all: host code for every row would add seconds of nvcc).
// The swapped rows are gemm_wgmma_swap.cu's.
template <std::size_t I, int IN, int LAYOUT>
constexpr LaunchFn table_entry() {
  if constexpr (wgmma_kernel_row(static_cast<int>(I)) == static_cast<int>(I) && built(static_cast<int>(I), IN, LAYOUT) &&
                !kWgmmaConfigs[I].swap)
    return &launch_config<I, IN, LAYOUT>;
  else
    return nullptr;
}

template <int IN, int LAYOUT, std::size_t... I>
constexpr std::array<LaunchFn, sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {table_entry<I, IN, LAYOUT>()...};
}

template <int IN>
constexpr std::array<std::array<LaunchFn, kWgmmaConfigCount>, kLayouts> make_layouts() {
  constexpr auto idx = std::make_index_sequence<kWgmmaConfigCount>{};
  return {{make_table<IN, 0>(idx), make_table<IN, 1>(idx), make_table<IN, 2>(idx), make_table<IN, 3>(idx)}};
}

// [input type][layout][config row]
constexpr std::array<std::array<std::array<LaunchFn, kWgmmaConfigCount>, kLayouts>, kInputs> kLaunchTable = {
    {make_layouts<kInF16>(), make_layouts<kInBf16>(), make_layouts<kInTf32>(), make_layouts<kIn3xTf32>()}};

}  // namespace

Status wgmma_encode_matrix(CUtensorMap& map, const void* base, CUtensorMapDataType type, int elem_bytes, int rows,
                           int cols, std::int64_t ld, int batch, std::int64_t batch_stride, int box_rows, bool& batched) {
  if (encode_entry().fn == nullptr) return Status::fail(ErrorKind::unsupported, "gemm_wgmma: " + encode_entry().why);
  return encode_matrix(map, base, type, elem_bytes, rows, cols, ld, batch, batch_stride, box_rows, batched);
}

bool wgmma_tensor_maps_available(std::string& why) {
  const EncodeEntry& e = encode_entry();
  if (e.fn == nullptr) why = e.why;
  return e.fn != nullptr;
}

Status launch_wgmma(const WgmmaGemmArgs& g, int config_index, void* stream) {
  if (config_index < 0 || config_index >= kWgmmaConfigCount)
    return Status::fail(ErrorKind::argument, "gemm_wgmma: no instantiated config " + std::to_string(config_index));
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::success();
  if (encode_entry().fn == nullptr) return Status::fail(ErrorKind::unsupported, "gemm_wgmma: " + encode_entry().why);
  if (g.tf32 && (g.a_mn || g.b_mn))
    return Status::fail(ErrorKind::unsupported, "gemm_wgmma: TF32 reads K-major operands only");
  if (kWgmmaConfigs[config_index].swap) return launch_wgmma_swap(g, config_index, stream);
  const int layout = (g.a_mn ? kLayoutAMn : 0) | (g.b_mn ? kLayoutBMn : 0);
  const int in = g.split3 ? kIn3xTf32 : g.tf32 ? kInTf32 : g.bf16 ? kInBf16 : kInF16;
  if (g.split3 && !g.tf32) return Status::fail(ErrorKind::argument, "gemm_wgmma: 3xTF32 splits f32 operands (tf32)");
  const LaunchFn fn = kLaunchTable[in][layout][wgmma_kernel_row(config_index)];
  if (fn == nullptr || !built(config_index, in, layout))
    return Status::fail(ErrorKind::unsupported, "gemm_wgmma: config " + std::to_string(config_index) +
                                                    " is not built for this input type and layout (kWgmmaTf32Rows, "
                                                    "kWgmma3xTf32Rows, kWgmmaMnRows)");
  return fn(g, kWgmmaConfigs[config_index], as_stream(stream));
}

}  // namespace kiln::gemm
