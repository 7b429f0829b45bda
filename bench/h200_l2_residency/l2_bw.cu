// Read bandwidth of the GPU's memory hierarchy by working-set size: the L2 plateau and the DRAM
// floor the L2-residency term of tiletune's model needs (bench/h200_l2_residency/README.md).
//
// For each working set S (1 MiB .. 1 GiB) one kernel reads S bytes with 16-byte loads, every SM
// busy (blocks = 8 x SMs, 512 threads, grid-stride); it is launched `reps` times back to back on the
// same buffer, so what fits in L2 is served from L2 after the first pass (warm), and timed with CUDA
// events around all passes. Cold: one pass after 4 x L2 bytes were written to a scratch buffer,
// events around the pass alone (the flush is outside the timed interval). One JSON line per size.
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a l2_bw.cu -o l2_bw && ./l2_bw
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); std::exit(1); } } while (0)

__global__ void read_kernel(const float4* __restrict__ p, size_t n, float* sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcg(p + i);  // cache-global: through L2, not L1 (the GEMM's TMA loads also bypass L1)
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) sink[0] = acc;  // never true for the data written below; keeps the loads live
}

__global__ void fill(float4* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = make_float4(1.f, 2.f, 3.f, (float)(i & 7));
}

int main() {
  int dev = 0, sms = 0, l2 = 0, clk_khz = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  const size_t max_bytes = size_t(1) << 30;
  float4* buf;
  float* sink;
  void* flush;
  const size_t flush_bytes = size_t(l2) * 4;
  CK(cudaMalloc(&buf, max_bytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&flush, flush_bytes));
  fill<<<sms * 8, 512>>>(buf, max_bytes / 16);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::printf("{\"device\": \"%s\", \"sms\": %d, \"l2_bytes\": %d, \"max_clock_mhz\": %d}\n", prop.name, sms, l2,
              clk_khz / 1000);
  std::vector<size_t> sizes;
  for (size_t s = size_t(1) << 20; s <= max_bytes; s *= 2) {
    sizes.push_back(s);
    if (s * 3 / 2 <= max_bytes) sizes.push_back(s * 3 / 2);
  }
  for (size_t s : sizes) {
    const size_t n = s / 16;
    const int reps = s <= (size_t(64) << 20) ? 200 : 20;
    read_kernel<<<sms * 8, 512>>>(buf, n, sink);  // warm-up pass (and L2 fill)
    CK(cudaGetLastError());
    CK(cudaEventRecord(a));
    for (int r = 0; r < reps; ++r) read_kernel<<<sms * 8, 512>>>(buf, n, sink);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float warm_ms = 0.f;
    CK(cudaEventElapsedTime(&warm_ms, a, b));
    // cold: flush, then one pass, timed alone (events around the pass only)
    const int cold_reps = 10;
    float cold_ms = 0.f;
    for (int r = 0; r < cold_reps; ++r) {
      CK(cudaMemsetAsync(flush, r & 0xFF, flush_bytes));
      CK(cudaEventRecord(a));
      read_kernel<<<sms * 8, 512>>>(buf, n, sink);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, a, b));
      cold_ms += ms;
    }
    CK(cudaGetLastError());
    const double warm_s = warm_ms / 1e3 / reps, cold_s = cold_ms / 1e3 / cold_reps;
    std::printf("{\"bytes\": %zu, \"warm_us\": %.3f, \"warm_tbps\": %.3f, \"cold_us\": %.3f, \"cold_tbps\": %.3f, "
                "\"reps\": %d}\n", s, warm_s * 1e6, s / warm_s / 1e12, cold_s * 1e6, s / cold_s / 1e12, reps);
    std::fflush(stdout);
  }
  return 0;
}
