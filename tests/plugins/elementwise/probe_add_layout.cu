// Probe for issue 12 (add vs cuBLAS geam at 16384^2 f32): times cuBLAS geam beside add_streaming's
// own kernel and several access orders of c = a + b on the same buffers, interleaved (the order
// rotates each round), L2 flushed by a 256 MiB memset before every timed launch, inputs random,
// each candidate's output poisoned first and checked once against a + b on the device.
// Not part of the build: scripts/add14-device.sh compiles it with nvcc.
//   probe_add_layout time      the timing tables
//   probe_add_layout ncu       one launch of each profiled kernel (run under ncu)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "add_streaming_kernel.cuh"

using kiln::elementwise::add_streaming_kernel;

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

__device__ __forceinline__ float addv(float x, float y) { return x + y; }
__device__ __forceinline__ float4 addv(float4 x, float4 y) {
  return make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

// A dense array seen as R rows of W vectors V; a block covers blockDim.x vectors of a row times
// blockDim.y * kItems rows (thread rows ty, ty + blockDim.y, ...); one tile per block (full grid).
// kYFast: blockIdx.x walks the row tiles (down the rows first), else along the row.
template <class V, int kItems, bool kYFast>
__global__ void tile2d(const V* a, const V* b, V* c, long R, long W) {
  const long tile_col = kYFast ? blockIdx.y : blockIdx.x;
  const long tile_row = kYFast ? blockIdx.x : blockIdx.y;
  const long col = tile_col * blockDim.x + threadIdx.x;
  const long row0 = tile_row * blockDim.y * kItems + threadIdx.y;
  V va[kItems], vb[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const long r = row0 + static_cast<long>(i) * blockDim.y;
    if (r < R && col < W) {
      va[i] = a[r * W + col];
      vb[i] = b[r * W + col];
    }
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const long r = row0 + static_cast<long>(i) * blockDim.y;
    if (r < R && col < W) c[r * W + col] = addv(va[i], vb[i]);
  }
}

// A plain copy c = a in add_streaming's order (the copy anchor in the same run).
__global__ void copy_stream(const float4* a, float4* c, long chunks) {
  const long threads = static_cast<long>(gridDim.x) * blockDim.x;
  for (long j = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; j < chunks; j += 4 * threads) {
    float4 v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (j + i * threads < chunks) v[i] = a[j + i * threads];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (j + i * threads < chunks) c[j + i * threads] = v[i];
  }
}

__global__ void fill_random(float* p, long n, unsigned seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed ^ static_cast<unsigned>(i >> 32) * 40503u;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    p[i] = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

__global__ void count_wrong(const float* a, const float* b, const float* c, long n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x)
    if (!(c[i] == a[i] + b[i])) ++local;
  if (local) atomicAdd(bad, local);
}

struct Cand {
  std::string name;
  std::function<void(const float*, const float*, float*, long, long, cudaStream_t)> run;  // (a, b, c, rows, cols)
};

static int g_sms = 0;
static cublasHandle_t g_blas;

template <int kItems, int kCache>
Cand streaming(int block, int bps, const char* name) {
  return {name, [=](const float* a, const float* b, float* c, long R, long C, cudaStream_t s) {
            const long n = R * C, chunks = n / 4, step = static_cast<long>(kItems) * block;
            long per_row = std::max<long>(1, (chunks + step - 1) / step), gx = per_row;
            if (bps > 0) {
              int res = 0;
              CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res, add_streaming_kernel<float, kItems, kCache>, block, 0));
              gx = std::min<long>(static_cast<long>(std::max(1, std::min(bps, res))) * g_sms, per_row);
            }
            add_streaming_kernel<float, kItems, kCache><<<dim3(static_cast<unsigned>(gx), 1), block, 0, s>>>(a, b, c, 1, n, n, n, n);
          }};
}

// V = float4: W = C / 4 vectors per row.
template <class V, int kItems, bool kYFast>
Cand tiled(int bx, int by, const char* name) {
  return {name, [=](const float* a, const float* b, float* c, long R, long C, cudaStream_t s) {
            const long W = C / static_cast<long>(sizeof(V) / 4);
            const long tx = (W + bx - 1) / bx, ty = (R + static_cast<long>(by) * kItems - 1) / (static_cast<long>(by) * kItems);
            const dim3 grid = kYFast ? dim3(static_cast<unsigned>(ty), static_cast<unsigned>(tx)) : dim3(static_cast<unsigned>(tx), static_cast<unsigned>(ty));
            tile2d<V, kItems, kYFast><<<grid, dim3(bx, by), 0, s>>>(reinterpret_cast<const V*>(a), reinterpret_cast<const V*>(b),
                                                                    reinterpret_cast<V*>(c), R, W);
          }};
}

Cand geam() {
  return {"cublas_geam", [](const float* a, const float* b, float* c, long R, long C, cudaStream_t s) {
            const float one = 1.0f;
            cublasSetStream(g_blas, s);
            // Row-major R x C is column-major C x R, leading dimension C (as kiln's vendor variant).
            if (cublasSgeam(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(C), static_cast<int>(R), &one, a,
                            static_cast<int>(C), &one, b, static_cast<int>(C), c, static_cast<int>(C)) != CUBLAS_STATUS_SUCCESS) {
              std::fprintf(stderr, "geam failed\n");
              std::exit(1);
            }
          }};
}

Cand copy_anchor() {
  return {"copy_stream(c=a)", [](const float* a, const float*, float* c, long R, long C, cudaStream_t s) {
            copy_stream<<<8 * g_sms, 256, 0, s>>>(reinterpret_cast<const float4*>(a), reinterpret_cast<float4*>(c), R * C / 4);
          }};
}
Cand memcpy_anchor() {
  return {"cudaMemcpyAsync(c=a)", [](const float* a, const float*, float* c, long R, long C, cudaStream_t s) {
            CK(cudaMemcpyAsync(c, a, R * C * 4, cudaMemcpyDeviceToDevice, s));
          }};
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Times every candidate on (a, b, c) of R x C floats, interleaved; prints us, GB/s (3 streams,
// 2 for the copies) and the ratio to the first candidate's median (geam).
static void time_set(const char* title, std::vector<Cand>& cands, const float* a, const float* b, float* c, long R, long C,
                     int rounds, void* flush, size_t flush_bytes, cudaStream_t s, unsigned long long* bad) {
  const long n = R * C;
  std::printf("\n== %s: %ld x %ld f32, a=%p b=%p c=%p, %d rounds\n", title, R, C, (const void*)a, (const void*)b, (void*)c, rounds);
  std::vector<std::vector<double>> t(cands.size());
  std::vector<long> wrong(cands.size(), 0);
  for (size_t k = 0; k < cands.size(); ++k) {  // poison, run once, check
    CK(cudaMemsetAsync(c, 0xff, n * 4, s));
    cands[k].run(a, b, c, R, C, s);
    CK(cudaGetLastError());
    if (cands[k].name.find("c=a") == std::string::npos) {
      CK(cudaMemsetAsync(bad, 0, 8, s));
      count_wrong<<<4 * g_sms, 256, 0, s>>>(a, b, c, n, bad);
      unsigned long long h = 0;
      CK(cudaMemcpyAsync(&h, bad, 8, cudaMemcpyDeviceToHost, s));
      CK(cudaStreamSynchronize(s));
      wrong[k] = static_cast<long>(h);
    }
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < cands.size(); ++i) {
      const size_t k = (i + r) % cands.size();
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
      CK(cudaEventRecord(e0, s));
      cands[k].run(a, b, c, R, C, s);
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      t[k].push_back(1000.0 * ms);
    }
  const double base = median(t[0]);
  for (size_t k = 0; k < cands.size(); ++k) {
    const double us = median(t[k]);
    const double streams = cands[k].name.find("c=a") != std::string::npos ? 2 : 3;
    const double lo = *std::min_element(t[k].begin(), t[k].end()), hi = *std::max_element(t[k].begin(), t[k].end());
    std::printf("%-34s %9.1f us  [%8.1f %8.1f]  %6.0f GB/s  geam/this %.3f  wrong %ld\n", cands[k].name.c_str(), us, lo, hi,
                streams * n * 4 / us / 1e3, base / us, wrong[k]);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

int main(int argc, char** argv) {
  const bool ncu = argc > 1 && std::strcmp(argv[1], "ncu") == 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs, L2 %d MB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
  if (cublasCreate(&g_blas) != CUBLAS_STATUS_SUCCESS) return 1;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  const long N = 16384;
  const size_t tensor = N * N * 4, slack = 8u << 20;
  char* pool = nullptr;
  CK(cudaMalloc(&pool, 3 * tensor + 3 * slack));
  void* flush = nullptr;
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  unsigned long long* bad = nullptr;
  CK(cudaMalloc(&bad, 8));
  fill_random<<<8 * g_sms, 256, 0, s>>>(reinterpret_cast<float*>(pool), static_cast<long>((3 * tensor + 3 * slack) / 4), 12345u);
  CK(cudaStreamSynchronize(s));
  auto at = [&](size_t off) { return reinterpret_cast<float*>(pool + off); };
  float* a = at(0);
  float* b = at(tensor);
  float* c = at(2 * tensor);

  if (ncu) {  // one launch each, 16384^2, the layout of consecutive allocations
    std::vector<Cand> cs = {geam(), streaming<4, 0>(256, 8, "streaming default"),
                            tiled<float4, 4, false>(32, 8, "t4 32x8 i4"), tiled<float, 1, false>(32, 8, "t1 32x8 i1")};
    for (auto& cd : cs) {
      cd.run(a, b, c, N, N, s);
      CK(cudaStreamSynchronize(s));
    }
    CK(cudaGetLastError());
    std::printf("ncu launches done\n");
    return 0;
  }

  std::vector<Cand> big = {
      geam(),
      streaming<4, 0>(256, 8, "streaming b256 i4 c0 bps8 (default)"),
      streaming<4, 0>(256, 0, "streaming b256 i4 c0 bps0"),
      streaming<4, 2>(256, 8, "streaming b256 i4 c2 bps8"),
      streaming<8, 0>(128, 4, "streaming b128 i8 c0 bps4"),
      tiled<float4, 4, false>(32, 8, "t4 32x8 i4 xfast"),
      tiled<float4, 4, true>(32, 8, "t4 32x8 i4 yfast"),
      tiled<float4, 1, false>(8, 32, "t4 8x32 i1 xfast"),
      tiled<float4, 2, false>(16, 16, "t4 16x16 i2 xfast"),
      tiled<float4, 2, false>(64, 4, "t4 64x4 i2 xfast"),
      tiled<float4, 4, false>(256, 1, "t4 256x1 i4 xfast"),
      tiled<float4, 1, false>(256, 1, "t4 256x1 i1 xfast (flat)"),
      tiled<float, 1, false>(32, 8, "t1 32x8 i1 xfast"),
      tiled<float, 4, false>(32, 8, "t1 32x8 i4 xfast"),
      tiled<float, 4, true>(32, 8, "t1 32x8 i4 yfast"),
      tiled<float, 1, false>(256, 1, "t1 256x1 i1 (flat scalar)"),
      copy_anchor(),
      memcpy_anchor(),
  };
  time_set("16384^2, consecutive layout", big, a, b, c, N, N, 25, flush, flush_bytes, s, bad);

  std::vector<Cand> few = {geam(), streaming<4, 0>(256, 8, "streaming default"), tiled<float4, 4, false>(32, 8, "t4 32x8 i4 xfast"),
                           tiled<float4, 1, false>(8, 32, "t4 8x32 i1 xfast"), tiled<float, 1, false>(32, 8, "t1 32x8 i1 xfast")};
  const size_t shifts[][2] = {{4096, 8192}, {65536, 131072}, {1u << 20, 3u << 19}, {(2u << 20) + 256, (4u << 20) + 512}};
  for (auto& sh : shifts) {
    char title[96];
    std::snprintf(title, sizeof title, "16384^2, b shifted %zu B, c shifted %zu B", sh[0], sh[1]);
    time_set(title, few, a, at(tensor + sh[0]), at(2 * tensor + sh[1]), N, N, 15, flush, flush_bytes, s, bad);
  }
  for (long m : {4096L, 2048L, 1024L}) {
    char title[64];
    std::snprintf(title, sizeof title, "%ld^2", m);
    time_set(title, few, a, b, c, m, m, 60, flush, flush_bytes, s, bad);
  }
  CK(cudaDeviceSynchronize());
  cublasDestroy(g_blas);
  return 0;
}
