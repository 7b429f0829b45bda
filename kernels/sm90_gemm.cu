// SM90 (Hopper: H100, H200) dense GEMM reproducer, bf16 or fp8 (e4m3) inputs, bf16 output.
//
//   D[M,N] (bf16) = A[M,K] * B[N,K]^T      TN layout (both K-major, what fp8 WGMMA needs), C = void,
//   fp32 accumulation, TMA warp-specialised mainloop built by CUTLASS's collective builders.
// Configuration (each has a working default, so this file compiles as written):
//   -DTT_DTYPE=0           0: bf16 x bf16, 1: fp8 e4m3 x e4m3
//   -DTT_TILE_M=128 -DTT_TILE_N=128 -DTT_TILE_K=64    CTA tile in elements
//   -DTT_CLUSTER_M=1 -DTT_CLUSTER_N=1                  thread-block cluster
//   -DTT_STAGES=0          0: StageCountAutoCarveout (CUTLASS picks); N>0: StageCount<N> (may overflow smem)
//   -DTT_SCHEDULE=0        0: cooperative (tile M >= 128), 1: ping-pong
//   -DTILETUNE_QUERY_ONLY  build only the kernel TYPE: prints SharedStorageSize and stages, no GPU needed.
// Build (run):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
//        -I$CUTLASS/include -I$CUTLASS/tools/util/include -Ikernels kernels/sm90_gemm.cu -o g && ./g --m=4096 --n=4096 --k=4096
#include <cstdio>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

#include "tt_common.hpp"

#ifndef TT_DTYPE
#define TT_DTYPE 0
#endif
#ifndef TT_TILE_M
#define TT_TILE_M 128
#endif
#ifndef TT_TILE_N
#define TT_TILE_N 128
#endif
#ifndef TT_TILE_K
#define TT_TILE_K 64
#endif
#ifndef TT_CLUSTER_M
#define TT_CLUSTER_M 1
#endif
#ifndef TT_CLUSTER_N
#define TT_CLUSTER_N 1
#endif
#ifndef TT_STAGES
#define TT_STAGES 0
#endif
#ifndef TT_SCHEDULE
#define TT_SCHEDULE 0
#endif

using namespace cute;

namespace cfg {
using ElementAB = cute::conditional_t<TT_DTYPE == 1, cutlass::float_e4m3_t, cutlass::bfloat16_t>;
using ElementD = cutlass::bfloat16_t;
using ElementC = void;
constexpr int kAlignAB = 128 / cutlass::sizeof_bits<ElementAB>::value;  // 16 bytes for TMA
constexpr int kAlignD = 128 / cutlass::sizeof_bits<ElementD>::value;
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::ColumnMajor;
using LayoutD = cutlass::layout::RowMajor;

using Tile = Shape<Int<TT_TILE_M>, Int<TT_TILE_N>, Int<TT_TILE_K>>;
using Cluster = Shape<Int<TT_CLUSTER_M>, Int<TT_CLUSTER_N>, _1>;
using MainloopSchedule = cute::conditional_t<TT_SCHEDULE == 1, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                             cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
using EpilogueSchedule = cute::conditional_t<TT_SCHEDULE == 1, cutlass::epilogue::TmaWarpSpecialized,
                                             cutlass::epilogue::TmaWarpSpecializedCooperative>;

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster, cutlass::epilogue::collective::EpilogueTileAuto,
    float, float, ElementC, LayoutD, kAlignD, ElementD, LayoutD, kAlignD, EpilogueSchedule>::CollectiveOp;

using StagePolicy = cute::conditional_t<
    (TT_STAGES > 0), cutlass::gemm::collective::StageCount<(TT_STAGES > 0 ? TT_STAGES : 2)>,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>>;

using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, LayoutA, kAlignAB, ElementAB, LayoutB, kAlignAB,
    float, Tile, Cluster, StagePolicy, MainloopSchedule>::CollectiveOp;

using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
}  // namespace cfg

static tt::Result describe(bool query) {
  tt::Result r;
  r.kernel = "sm90_gemm";
  r.arch = "sm90a";
  r.dtype = TT_DTYPE == 1 ? "fp8_e4m3" : "bf16";
  r.schedule = TT_SCHEDULE == 1 ? "pingpong" : "cooperative";
  r.mode = query ? "query" : "run";
  r.tile[0] = TT_TILE_M; r.tile[1] = TT_TILE_N; r.tile[2] = TT_TILE_K;
  r.cluster[0] = TT_CLUSTER_M; r.cluster[1] = TT_CLUSTER_N; r.cluster[2] = 1;
  r.stages = cfg::Mainloop::DispatchPolicy::Stages;
  r.stage_policy = TT_STAGES > 0 ? "explicit" : "auto_carveout";
  r.smem_bytes = cfg::Kernel::SharedStorageSize;
  r.smem_limit = cutlass::gemm::collective::detail::sm90_smem_capacity_bytes;
  r.smem_limit_source = "cutlass constant";
  // Inputs are exact in their dtype and the sum is in fp32, so the error is bf16 output rounding
  // (relative 2^-9 per element) plus fp32 accumulation order: held to 4 units of bf16 roundoff,
  // the bound tiletune/tuner/classify.py ERROR_BOUNDS uses for bf16 outputs.
  r.error_bound = 4.0 / 256;
  return r;
}

#ifdef TILETUNE_QUERY_ONLY
int main(int argc, char** argv) {
  tt::Options o = tt::parse(argc, argv);
  (void)o;
  describe(true).print();
  return 0;
}
#else

int main(int argc, char** argv) {
  tt::Options o = tt::parse(argc, argv);
  tt::Result r = describe(o.query);
  if (o.query) {
    r.print();
    return 0;
  }
  tt::fill_device(r);
  if (!tt::kernel_image_ok(r, reinterpret_cast<const void*>(cutlass::device_kernel<cfg::Kernel>))) {
    r.print();
    return 1;
  }
  const int M = static_cast<int>(o.m), N = static_cast<int>(o.n), K = static_cast<int>(o.k);
  r.m = M; r.n = N; r.k = K;

  // Inputs: values exactly representable in the input dtype (small integers times 1/4 for fp8,
  // uniform [-1, 1) rounded to bf16), so the float64 reference sees exactly what the GPU sees.
  tt::Rng rng(o.seed);
  std::vector<cfg::ElementAB> hA(size_t(M) * K), hB(size_t(N) * K);
  for (auto& v : hA) v = cfg::ElementAB(TT_DTYPE == 1 ? float(int(rng.next() % 17) - 8) * 0.25f : rng.uniform(-1.f, 1.f));
  for (auto& v : hB) v = cfg::ElementAB(TT_DTYPE == 1 ? float(int(rng.next() % 17) - 8) * 0.25f : rng.uniform(-1.f, 1.f));

  auto* dA = tt::to_device<cfg::ElementAB>(r, hA.data(), hA.size() * sizeof(cfg::ElementAB));
  auto* dB = tt::to_device<cfg::ElementAB>(r, hB.data(), hB.size() * sizeof(cfg::ElementAB));
  auto* dD = tt::to_device<cfg::ElementD>(r, nullptr, size_t(M) * N * sizeof(cfg::ElementD));
  if (!dA || !dB || !dD) { r.print(); return 1; }
  cudaMemset(dD, 0xFF, size_t(M) * N * sizeof(cfg::ElementD));  // 0xFFFF is a bf16 NaN: poison

  auto stride_A = cutlass::make_cute_packed_stride(typename cfg::Kernel::StrideA{}, {M, K, 1});
  auto stride_B = cutlass::make_cute_packed_stride(typename cfg::Kernel::StrideB{}, {N, K, 1});
  auto stride_D = cutlass::make_cute_packed_stride(typename cfg::Kernel::StrideD{}, {M, N, 1});

  typename cfg::Gemm::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = cute::make_shape(M, N, K, 1);
  args.mainloop.ptr_A = dA;
  args.mainloop.dA = stride_A;
  args.mainloop.ptr_B = dB;
  args.mainloop.dB = stride_B;
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = stride_D;
  args.epilogue.ptr_D = dD;
  args.epilogue.dD = stride_D;
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = r.sm_count;

  auto ref = [&](long long i, long long j) {
    double acc = 0;
    for (long long kk = 0; kk < K; ++kk) acc += double(float(hA[i * K + kk])) * double(float(hB[j * K + kk]));
    return acc;
  };
  auto check = [&](tt::Result& res) { return tt::check_dense(res, dD, M, N, ref, o.seed); };
  cfg::Gemm gemm;
  tt::Widths bits{cutlass::sizeof_bits<cfg::ElementAB>::value, cutlass::sizeof_bits<cfg::ElementD>::value};
  return tt::run_gemm(r, gemm, args, bits, 2.0 * M * N * double(K), check, o);
}
#endif
