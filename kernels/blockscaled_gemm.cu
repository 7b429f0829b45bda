// Block-scaled GEMM reproducer (NVFP4 or MXFP8) for SM120/SM121 (GeForce and RTX PRO Blackwell) and
// SM100 (B200, data-centre Blackwell). Blackwell only: it compiles anywhere nvcc 12.8+ runs, and runs
// only on an SM120/121 or SM100 GPU (elsewhere the binary reports no_kernel_image).
//
//   D[M,N] (bf16) = sum_k (A[M,K] * SFA) * (B[N,K] * SFB)     TN layout (both operands K-major),
//   C = void, fp32 accumulation.
//   NVFP4: A, B e2m1 (fp4), one ue4m3 scale per 16 elements of K.
//   MXFP8: A, B e4m3, one ue8m0 scale per 32 elements of K.
//
// The kernel is assembled the way FlashInfer's block-scaled runners assemble theirs: CUTLASS
// collective builders and (by default) an epilogue whose shared storage is carved out of the
// mainloop's budget (StageCountAutoCarveout<sizeof(epilogue SharedStorage)>).
// Configuration (each has a working default, so this file compiles as written):
//   -DTT_FORMAT=0          0: NVFP4, 1: MXFP8
//   -DTT_ARCH=120          120: SM120/SM121 (build sm_120a); 100: SM100 (build sm_100a)
//   -DTT_TILE_M=128 -DTT_TILE_N=128 -DTT_TILE_K=256   CTA tile in elements (of the KERNEL's M and N)
//   -DTT_CLUSTER_M=1 -DTT_CLUSTER_N=1                  SM100 only (SM120 has no clusters)
//   -DTT_2SM=0             SM100 only: 1 = 2-SM (CTA pair) MMA; the MMA tile is then 2*TT_TILE_M
//   -DTT_STAGES=0          0: StageCountAutoCarveout (CUTLASS picks); N>0: StageCount<N> (FlashInfer's
//                          SM120 MXFP8 runner used StageCount<2> in 0.6.8 - 0.6.18.post1, for every
//                          tile in 0.6.8 - 0.6.10.post1 and for the 256-wide ones from 0.6.11 on)
//   -DTT_SCHEDULE=0        SM120 only: 0 cooperative, 1 ping-pong, 2 KernelScheduleAuto with
//                          EpilogueScheduleAuto (FlashInfer's SM120 MXFP8 runner)
//   -DTT_SWAP_AB=0         1: the kernel computes D^T = B * A^T: its M runs over the problem's N,
//                          A/B and their scale factors are swapped and D is written column-major
//                          (FlashInfer's swap-AB tactics)
//   -DTT_STREAM_K=0        1: StreamKScheduler (FlashInfer's SM120 NVFP4 stream-K tactics)
//   -DTT_GROUPED=0         1: grouped (ptr-array, MoE-style) NVFP4 kernel with GroupProblemShape; it
//                          runs --groups=G problems (default 4), each of --m x --n x --k
//   -DTILETUNE_QUERY_ONLY  build only the kernel TYPE (no device code, no CUDA runtime calls):
//                          the binary prints SharedStorageSize and the stage count; needs no GPU.
// Build (query, ~20 s on 2 cores):
//   nvcc -std=c++17 -O1 -DTILETUNE_QUERY_ONLY -gencode=arch=compute_120a,code=sm_120a \
//        --expt-relaxed-constexpr -I$CUTLASS/include -I$CUTLASS/tools/util/include -Ikernels \
//        kernels/blockscaled_gemm.cu -o q && ./q --query
// Build (run; about 1 to 2 minutes): same without -DTILETUNE_QUERY_ONLY and with -O3, then
//   ./a.out --m=4096 --n=4096 --k=4096          (grouped build: add e.g. --groups=8)
#include <cstdio>
#include <type_traits>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/detail/sm100_blockscaled_layout.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

#include "tt_common.hpp"

#ifndef TT_FORMAT
#define TT_FORMAT 0
#endif
#ifndef TT_ARCH
#define TT_ARCH 120
#endif
#ifndef TT_SWAP_AB
#define TT_SWAP_AB 0
#endif
#ifndef TT_STREAM_K
#define TT_STREAM_K 0
#endif
#ifndef TT_CLUSTER_M
#define TT_CLUSTER_M 1
#endif
#ifndef TT_CLUSTER_N
#define TT_CLUSTER_N 1
#endif
#ifndef TT_2SM
#define TT_2SM 0
#endif
#ifndef TT_TILE_M
#define TT_TILE_M 128
#endif
#ifndef TT_TILE_N
#define TT_TILE_N 128
#endif
#ifndef TT_TILE_K
#define TT_TILE_K 256
#endif
#ifndef TT_STAGES
#define TT_STAGES 0
#endif
#ifndef TT_SCHEDULE
#define TT_SCHEDULE 0
#endif
#ifndef TT_GROUPED
#define TT_GROUPED 0
#endif

static_assert(TT_FORMAT == 0 || TT_FORMAT == 1, "TT_FORMAT: 0 NVFP4, 1 MXFP8");
static_assert(!(TT_GROUPED && TT_FORMAT != 0), "the grouped reproducer is NVFP4 only");
static_assert(!(TT_GROUPED && (TT_SWAP_AB || TT_STREAM_K)), "the grouped reproducer has no swap-AB or stream-K");
static_assert(!(TT_SCHEDULE == 2 && TT_ARCH != 120), "KernelScheduleAuto (TT_SCHEDULE=2) is an SM120 option here");

using namespace cute;

namespace cfg {
#if TT_FORMAT == 1
using DataType = cutlass::float_e4m3_t;                  // MXFP8: e4m3 data + ue8m0 scale per 32
using ElementA = cutlass::mx_float8_t<DataType>;
using ElementSF = cutlass::float_ue8m0_t;
constexpr int kAlignAB = 16;  // 16 e4m3 elements = 16 bytes, what TMA needs
#else
using DataType = cutlass::float_e2m1_t;                  // NVFP4: fp4 data + ue4m3 scale per 16
using ElementA = cutlass::nv_float4_t<DataType>;
using ElementSF = cutlass::float_ue4m3_t;
constexpr int kAlignAB = 32;  // 32 fp4 elements = 16 bytes, what TMA needs
#endif
using ElementB = ElementA;
using ElementD = cutlass::bfloat16_t;
using ElementC = void;
constexpr int kAlignD = 128 / cutlass::sizeof_bits<ElementD>::value;
constexpr int kDataBits = cutlass::sizeof_bits<DataType>::value;

// Grouped kernels take a pointer to one stride per group: the builders see a pointer layout tag.
// Swap-AB writes the kernel's (N x M) result column-major: the same memory as row-major M x N.
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cutlass::layout::ColumnMajor;
using LayoutD = cute::conditional_t<TT_SWAP_AB, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
using TagA = cute::conditional_t<TT_GROUPED, LayoutA*, LayoutA>;
using TagB = cute::conditional_t<TT_GROUPED, LayoutB*, LayoutB>;
using TagD = cute::conditional_t<TT_GROUPED, LayoutD*, LayoutD>;

#if TT_ARCH == 100
using Arch = cutlass::arch::Sm100;
// The builders take the MMA tile: with 2-SM MMA it spans the CTA pair (twice the CTA tile's M).
using Tile = Shape<Int<TT_TILE_M*(TT_2SM ? 2 : 1)>, Int<TT_TILE_N>, Int<TT_TILE_K>>;
using Cluster = Shape<int, int, _1>;  // dynamic, as FlashInfer's SM100 runners; set at run time
#if TT_GROUPED
using MainloopSchedule = cute::conditional_t<TT_2SM, cutlass::gemm::KernelPtrArrayTmaWarpSpecialized2SmNvf4Sm100,
                                             cutlass::gemm::KernelPtrArrayTmaWarpSpecialized1SmNvf4Sm100>;
using EpilogueSchedule = cute::conditional_t<TT_2SM, cutlass::epilogue::PtrArrayTmaWarpSpecialized2Sm,
                                             cutlass::epilogue::PtrArrayTmaWarpSpecialized1Sm>;
using ProblemShape = cutlass::gemm::GroupProblemShape<Shape<int, int, int>>;
#elif TT_FORMAT == 1
// MXFP8 on SM100: FlashInfer's mxfp8_gemm_template_sm100.h schedules
using MainloopSchedule = cute::conditional_t<TT_2SM, cutlass::gemm::KernelTmaWarpSpecialized2SmMxf8f6f4Sm100,
                                             cutlass::gemm::KernelTmaWarpSpecialized1SmMxf8f6f4Sm100>;
using EpilogueSchedule = cute::conditional_t<TT_2SM, cutlass::epilogue::TmaWarpSpecialized2Sm,
                                             cutlass::epilogue::TmaWarpSpecialized1Sm>;
using ProblemShape = Shape<int, int, int, int>;
#else
using MainloopSchedule = cute::conditional_t<TT_2SM, cutlass::gemm::KernelTmaWarpSpecialized2SmNvf4Sm100,
                                             cutlass::gemm::KernelTmaWarpSpecialized1SmNvf4Sm100>;
using EpilogueSchedule = cute::conditional_t<TT_2SM, cutlass::epilogue::TmaWarpSpecialized2Sm,
                                             cutlass::epilogue::TmaWarpSpecialized1Sm>;
using ProblemShape = Shape<int, int, int, int>;
#endif
#else
static_assert(TT_CLUSTER_M == 1 && TT_CLUSTER_N == 1 && TT_2SM == 0, "SM120 has no thread-block clusters");
using Arch = cutlass::arch::Sm120;
using Tile = Shape<Int<TT_TILE_M>, Int<TT_TILE_N>, Int<TT_TILE_K>>;
using Cluster = Shape<_1, _1, _1>;

#if TT_GROUPED
using MainloopSchedule = cute::conditional_t<TT_SCHEDULE == 1, cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong,
                                             cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative>;
using EpilogueSchedule = cute::conditional_t<TT_SCHEDULE == 1, cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong,
                                             cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative>;
using ProblemShape = cutlass::gemm::GroupProblemShape<Shape<int, int, int>>;
#else
using MainloopSchedule = cute::conditional_t<
    TT_SCHEDULE == 2, cutlass::gemm::collective::KernelScheduleAuto,
    cute::conditional_t<TT_SCHEDULE == 1, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                        cutlass::gemm::KernelTmaWarpSpecializedCooperative>>;
using EpilogueSchedule = cute::conditional_t<TT_SCHEDULE == 2, cutlass::epilogue::collective::EpilogueScheduleAuto,
                                             cutlass::epilogue::TmaWarpSpecialized>;
using ProblemShape = Shape<int, int, int, int>;
#endif
#endif

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    Arch, cutlass::arch::OpClassTensorOp, Tile, Cluster,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, ElementC, TagD, kAlignD, ElementD, TagD, kAlignD,
    EpilogueSchedule>::CollectiveOp;

// The stage policy under test: auto (carve the epilogue out of the budget) or a fixed count.
using StagePolicy = cute::conditional_t<
    (TT_STAGES > 0), cutlass::gemm::collective::StageCount<(TT_STAGES > 0 ? TT_STAGES : 2)>,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>>;

using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    Arch, cutlass::arch::OpClassBlockScaledTensorOp, ElementA, TagA, kAlignAB, ElementB, TagB,
    kAlignAB, float, Tile, Cluster, StagePolicy, MainloopSchedule>::CollectiveOp;

// Stream-K or the kernel's default (persistent data-parallel) tile scheduler.
using Scheduler = cute::conditional_t<TT_STREAM_K, cutlass::gemm::StreamKScheduler, void>;
using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue, Scheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
}  // namespace cfg

static tt::Result describe(bool query) {
  tt::Result r;
  r.kernel = "blockscaled_gemm";
  r.arch = TT_ARCH == 100 ? "sm100a" : "sm120a";
  r.dtype = TT_FORMAT == 1 ? "mxfp8" : "nvfp4";
  r.schedule = TT_ARCH == 100 ? (TT_2SM ? "2sm" : "1sm")
                              : (TT_SCHEDULE == 2 ? "auto" : TT_SCHEDULE == 1 ? "pingpong" : "cooperative");
  r.mainloop = "blockscaled";
  r.epilogue = TT_SCHEDULE == 2 ? "auto" : "tma";
  r.tile_scheduler = TT_STREAM_K ? "stream_k" : "persistent";
  r.swap_ab = TT_SWAP_AB != 0;
  r.cluster[0] = TT_CLUSTER_M; r.cluster[1] = TT_CLUSTER_N; r.cluster[2] = 1;
  r.mode = query ? "query" : "run";
  r.tile[0] = TT_TILE_M; r.tile[1] = TT_TILE_N; r.tile[2] = TT_TILE_K;
  r.stages = cfg::Mainloop::DispatchPolicy::Stages;
  r.stage_policy = TT_STAGES > 0 ? "explicit" : "auto_carveout";
  r.smem_bytes = cfg::Kernel::SharedStorageSize;
  r.smem_limit = TT_ARCH == 100 ? cutlass::arch::sm100_smem_capacity_bytes : cutlass::arch::sm120_smem_capacity_bytes;
  r.smem_limit_source = "cutlass constant";
  r.grouped = TT_GROUPED != 0;
  r.groups = 1;
  r.error_bound = 4.0 / 256;  // bf16 output: 4 units of roundoff (tiletune/tuner/classify.py ERROR_BOUNDS)
  return r;
}

#ifdef TILETUNE_QUERY_ONLY
int main(int argc, char** argv) {
  tt::Options o = tt::parse(argc, argv);
  (void)o;
  tt::Result r = describe(true);
  tt::query_problem(r, o);
  r.print();
  return 0;
}
#else

namespace {

// e2m1 code -> value (bit 3 is the sign).
float e2m1_value(uint8_t code) {
  static const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (code & 8 ? -1.f : 1.f) * mag[code & 7];
}

// One operand, rows x K, K contiguous. NVFP4: random fp4 codes, two per byte (element 0 in the low
// nibble). MXFP8: e4m3 codes of small multiples of 1/4 (exact, so the reference is exact).
struct Operand {
  long long rows, K;
  std::vector<uint8_t> bytes;
  Operand(long long r, long long k, tt::Rng& rng) : rows(r), K(k), bytes(cfg::kDataBits == 8 ? r * k : (r * k + 1) / 2) {
    for (auto& b : bytes) {
      if (cfg::kDataBits == 8)
        b = cutlass::float_e4m3_t(float(int(rng.next() % 17) - 8) * 0.25f).storage;
      else
        b = static_cast<uint8_t>(rng.next() & 0xFF);
    }
  }
  float at(long long row, long long kk) const {
    long long idx = row * K + kk;
    if (cfg::kDataBits == 8) return float(cutlass::float_e4m3_t::bitcast(bytes[idx]));
    uint8_t b = bytes[idx / 2];
    return e2m1_value(idx % 2 ? (b >> 4) : (b & 0xF));
  }
};

#if TT_GROUPED
// The grouped (ptr-array, MoE-style) run: G groups of the same M x N x K (a MoE layer's experts,
// each with its own weights and tokens), every group in its own allocations. The kernel reads
// per-group operand pointers, strides and scale-factor layouts from device arrays, one entry per
// group, and the problem shapes from a device array; the host copy of the shapes is passed as
// well so can_implement() checks every group's alignment.
int run_grouped(const tt::Options& o, tt::Result& r) {
  using MainloopArgs = typename cfg::Mainloop::Arguments;
  using EpilogueArgs = typename cfg::Epilogue::Arguments;
  // What the kernel's pointer arrays point at (the fp4 data type, the ue4m3 scale type, bf16).
  using ElemA = std::remove_const_t<std::remove_pointer_t<std::remove_pointer_t<decltype(MainloopArgs::ptr_A)>>>;
  using ElemB = std::remove_const_t<std::remove_pointer_t<std::remove_pointer_t<decltype(MainloopArgs::ptr_B)>>>;
  using ElemSF = std::remove_const_t<std::remove_pointer_t<std::remove_pointer_t<decltype(MainloopArgs::ptr_SFA)>>>;
  using ElemD = std::remove_pointer_t<std::remove_pointer_t<decltype(EpilogueArgs::ptr_D)>>;
  using StrideA = typename cfg::Mainloop::InternalStrideA;
  using StrideB = typename cfg::Mainloop::InternalStrideB;
  using StrideD = typename cfg::Epilogue::InternalStrideD;
  using LayoutSFA = typename cfg::Mainloop::InternalLayoutSFA;
  using LayoutSFB = typename cfg::Mainloop::InternalLayoutSFB;
  using ProblemMNK = typename cfg::ProblemShape::UnderlyingProblemShape;
  using Config = typename cfg::Mainloop::Sm1xxBlkScaledConfig;
  static_assert(std::is_same_v<ElemSF, cfg::ElementSF>, "scale factors are ue4m3");

  const int G = o.groups, M = static_cast<int>(o.m), N = static_cast<int>(o.n), K = static_cast<int>(o.k);
  r.groups = G;
  r.m = M; r.n = N; r.k = K;
  if (G < 1 || M < 1 || N < 1 || K < 1) {
    r.error = "grouped run needs --groups >= 1 and --m, --n, --k >= 1 (each group's shape); got groups=" +
              std::to_string(G) + " m=" + std::to_string(M) + " n=" + std::to_string(N) + " k=" + std::to_string(K);
    r.print();
    return 2;
  }
  tt::fill_device(r);
  if (!tt::kernel_image_ok(r, reinterpret_cast<const void*>(cutlass::device_kernel<cfg::Kernel>))) {
    r.print();
    return 1;
  }

  // Every group has the same shape, so one stride and one scale-factor layout serve them all;
  // the kernel still reads them per group, as it would for experts of different sizes.
  const auto mnkl = cute::make_shape(M, N, K, 1);
  const StrideA stride_A = cutlass::make_cute_packed_stride(StrideA{}, {M, K, 1});
  const StrideB stride_B = cutlass::make_cute_packed_stride(StrideB{}, {N, K, 1});
  const StrideD stride_D = cutlass::make_cute_packed_stride(StrideD{}, {M, N, 1});
  const LayoutSFA layout_SFA = Config::tile_atom_to_shape_SFA(mnkl);
  const LayoutSFB layout_SFB = Config::tile_atom_to_shape_SFB(mnkl);
  const size_t n_sfa = cute::size(cute::filter_zeros(layout_SFA));
  const size_t n_sfb = cute::size(cute::filter_zeros(layout_SFB));
  const size_t d_elems = size_t(M) * N;

  // Host inputs, group by group: random fp4 codes, scale factors from {0.5, 1, 2, 4} (exact in ue4m3).
  tt::Rng rng(o.seed);
  const float sf_choices[4] = {0.5f, 1.f, 2.f, 4.f};
  std::vector<Operand> A, B;
  std::vector<std::vector<cfg::ElementSF>> sfa(G, std::vector<cfg::ElementSF>(n_sfa)),
      sfb(G, std::vector<cfg::ElementSF>(n_sfb));
  A.reserve(G);
  B.reserve(G);
  for (int g = 0; g < G; ++g) {
    A.emplace_back(M, K, rng);
    B.emplace_back(N, K, rng);
    for (auto& s : sfa[g]) s = cfg::ElementSF(sf_choices[rng.next() % 4]);
    for (auto& s : sfb[g]) s = cfg::ElementSF(sf_choices[rng.next() % 4]);
  }

  // Device operands, one allocation per group, and the per-group arrays the kernel indexes.
  std::vector<const ElemA*> hA(G);
  std::vector<const ElemB*> hB(G);
  std::vector<const ElemSF*> hSFA(G), hSFB(G);
  std::vector<ElemD*> hD(G);
  for (int g = 0; g < G; ++g) {
    hA[g] = tt::to_device<ElemA>(r, A[g].bytes.data(), A[g].bytes.size());
    hB[g] = tt::to_device<ElemB>(r, B[g].bytes.data(), B[g].bytes.size());
    hSFA[g] = tt::to_device<ElemSF>(r, sfa[g].data(), n_sfa * sizeof(ElemSF));
    hSFB[g] = tt::to_device<ElemSF>(r, sfb[g].data(), n_sfb * sizeof(ElemSF));
    hD[g] = tt::to_device<ElemD>(r, nullptr, d_elems * sizeof(ElemD));
    if (!hA[g] || !hB[g] || !hSFA[g] || !hSFB[g] || !hD[g]) { r.print(); return 1; }
    // 0xFFFF is a bf16 NaN: poison, so an output the kernel never writes is counted as non-finite.
    if (tt::cuda_failed(r, cudaMemset(hD[g], 0xFF, d_elems * sizeof(ElemD)), "cudaMemset")) { r.print(); return 1; }
  }
  const std::vector<ProblemMNK> shapes(G, ProblemMNK{M, N, K});
  const std::vector<StrideA> strides_A(G, stride_A);
  const std::vector<StrideB> strides_B(G, stride_B);
  const std::vector<StrideD> strides_D(G, stride_D);
  const std::vector<LayoutSFA> layouts_SFA(G, layout_SFA);
  const std::vector<LayoutSFB> layouts_SFB(G, layout_SFB);
  auto* d_shapes = tt::to_device<ProblemMNK>(r, shapes.data(), G * sizeof(ProblemMNK));
  auto* d_ptr_A = tt::to_device<const ElemA*>(r, hA.data(), G * sizeof(ElemA*));
  auto* d_ptr_B = tt::to_device<const ElemB*>(r, hB.data(), G * sizeof(ElemB*));
  auto* d_ptr_SFA = tt::to_device<const ElemSF*>(r, hSFA.data(), G * sizeof(ElemSF*));
  auto* d_ptr_SFB = tt::to_device<const ElemSF*>(r, hSFB.data(), G * sizeof(ElemSF*));
  auto* d_ptr_D = tt::to_device<ElemD*>(r, hD.data(), G * sizeof(ElemD*));
  auto* d_stride_A = tt::to_device<StrideA>(r, strides_A.data(), G * sizeof(StrideA));
  auto* d_stride_B = tt::to_device<StrideB>(r, strides_B.data(), G * sizeof(StrideB));
  auto* d_stride_D = tt::to_device<StrideD>(r, strides_D.data(), G * sizeof(StrideD));
  auto* d_layout_SFA = tt::to_device<LayoutSFA>(r, layouts_SFA.data(), G * sizeof(LayoutSFA));
  auto* d_layout_SFB = tt::to_device<LayoutSFB>(r, layouts_SFB.data(), G * sizeof(LayoutSFB));
  if (!d_shapes || !d_ptr_A || !d_ptr_B || !d_ptr_SFA || !d_ptr_SFB || !d_ptr_D || !d_stride_A || !d_stride_B ||
      !d_stride_D || !d_layout_SFA || !d_layout_SFB) {
    r.print();
    return 1;
  }

  typename cfg::Gemm::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kGrouped;
  args.problem_shape = cfg::ProblemShape{G, d_shapes, shapes.data()};
  args.mainloop.ptr_A = d_ptr_A;
  args.mainloop.dA = d_stride_A;
  args.mainloop.ptr_B = d_ptr_B;
  args.mainloop.dB = d_stride_B;
  args.mainloop.ptr_SFA = d_ptr_SFA;
  args.mainloop.layout_SFA = d_layout_SFA;
  args.mainloop.ptr_SFB = d_ptr_SFB;
  args.mainloop.layout_SFB = d_layout_SFB;
  // One alpha and beta for all groups (no per-group pointer arrays): D = 1 * acc, no C.
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = d_stride_D;  // C is void; a valid array of the right type all the same
  args.epilogue.ptr_D = d_ptr_D;
  args.epilogue.dD = d_stride_D;
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = r.sm_count;
#if TT_ARCH == 100
  args.hw_info.cluster_shape = dim3(TT_CLUSTER_M, TT_CLUSTER_N, 1);
  args.hw_info.cluster_shape_fallback = dim3(TT_CLUSTER_M, TT_CLUSTER_N, 1);
#endif

  // Check: 1,024 outputs sampled over all groups against the float64 reference of the
  // dequantized inputs, and every group's D scanned for NaN/Inf. Positions are drawn first and
  // D is read back one group at a time, so the host holds one group's output at most.
  auto check = [&](tt::Result& res) {
    struct Sample { int g; long long i, j; };
    std::vector<Sample> samples(1024);
    tt::Rng pick(o.seed ^ 0xC0FFEEu);
    for (auto& s : samples) {
      s.g = static_cast<int>(pick.next() % G);
      s.i = pick.next() % M;
      s.j = pick.next() % N;
    }
    long long bad = 0;
    double num = 0, den = 0;
    std::vector<ElemD> out(d_elems);
    for (int g = 0; g < G; ++g) {
      if (tt::cuda_failed(res, cudaMemcpy(out.data(), hD[g], d_elems * sizeof(ElemD), cudaMemcpyDeviceToHost),
                          "cudaMemcpy(D)"))
        return false;
      for (const auto& v : out) bad += std::isfinite(float(v)) ? 0 : 1;
      auto tSFA = cute::make_tensor(sfa[g].data(), layout_SFA);
      auto tSFB = cute::make_tensor(sfb[g].data(), layout_SFB);
      for (const auto& s : samples) {
        if (s.g != g) continue;
        double want = 0;
        for (long long kk = 0; kk < K; ++kk)
          want += double(A[g].at(s.i, kk)) * float(tSFA(int(s.i), int(kk), 0)) * double(B[g].at(s.j, kk)) *
                  float(tSFB(int(s.j), int(kk), 0));
        double got = float(out[s.i * N + s.j]);
        num += (got - want) * (got - want);
        den += want * want;
      }
    }
    res.nonfinite = bad;
    res.rel_error = bad > 0 ? INFINITY : den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
    return true;
  };
  cfg::Gemm gemm;
  return tt::run_gemm(r, gemm, args, tt::Widths{4, cutlass::sizeof_bits<cfg::ElementD>::value},
                      2.0 * G * double(M) * N * double(K), check, o);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  tt::Options o = tt::parse(argc, argv);
  tt::Result r = describe(o.query);
  if (o.query) {
    tt::query_problem(r, o);
    r.print();
    return 0;
  }
#if TT_GROUPED
  return run_grouped(o, r);
#else
  tt::fill_device(r);
  if (!tt::kernel_image_ok(r, reinterpret_cast<const void*>(cutlass::device_kernel<cfg::Kernel>))) {
    r.print();
    return 1;
  }
  const int M = static_cast<int>(o.m), N = static_cast<int>(o.n), K = static_cast<int>(o.k);
  r.m = M; r.n = N; r.k = K;
  // The kernel's own problem: with swap-AB its M is the problem's N, its A is the problem's B
  // (the weights) and its B the problem's A; operands and scale factors are built in its terms.
  const int KM = TT_SWAP_AB ? N : M, KN = TT_SWAP_AB ? M : N;
  r.kernel_m = KM; r.kernel_n = KN;

  using Config = typename cfg::Mainloop::Sm1xxBlkScaledConfig;
  auto problem = cute::make_shape(KM, KN, K, 1);
  auto stride_A = cutlass::make_cute_packed_stride(typename cfg::Kernel::StrideA{}, {KM, K, 1});
  auto stride_B = cutlass::make_cute_packed_stride(typename cfg::Kernel::StrideB{}, {KN, K, 1});
  auto stride_D = cutlass::make_cute_packed_stride(typename cfg::Kernel::StrideD{}, {KM, KN, 1});
  auto layout_SFA = Config::tile_atom_to_shape_SFA(problem);
  auto layout_SFB = Config::tile_atom_to_shape_SFB(problem);
  size_t n_sfa = cute::size(cute::filter_zeros(layout_SFA));
  size_t n_sfb = cute::size(cute::filter_zeros(layout_SFB));

  // Inputs: random data, scale factors drawn from {0.5, 1, 2, 4} (exact in ue4m3 and ue8m0).
  tt::Rng rng(o.seed);
  Operand A(KM, K, rng), B(KN, K, rng);
  const float sf_choices[4] = {0.5f, 1.f, 2.f, 4.f};
  std::vector<cfg::ElementSF> sfa(n_sfa), sfb(n_sfb);
  for (auto& s : sfa) s = cfg::ElementSF(sf_choices[rng.next() % 4]);
  for (auto& s : sfb) s = cfg::ElementSF(sf_choices[rng.next() % 4]);

  auto* dA = tt::to_device<cfg::DataType>(r, A.bytes.data(), A.bytes.size());
  auto* dB = tt::to_device<cfg::DataType>(r, B.bytes.data(), B.bytes.size());
  auto* dSFA = tt::to_device<cfg::ElementSF>(r, sfa.data(), sfa.size() * sizeof(cfg::ElementSF));
  auto* dSFB = tt::to_device<cfg::ElementSF>(r, sfb.data(), sfb.size() * sizeof(cfg::ElementSF));
  auto* dD = tt::to_device<cfg::ElementD>(r, nullptr, size_t(M) * N * sizeof(cfg::ElementD));
  if (!dA || !dB || !dSFA || !dSFB || !dD) { r.print(); return 1; }
  cudaMemset(dD, 0xFF, size_t(M) * N * sizeof(cfg::ElementD));  // 0xFFFF is a bf16 NaN: poison

  typename cfg::Gemm::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = problem;
  args.mainloop.ptr_A = dA;
  args.mainloop.dA = stride_A;
  args.mainloop.ptr_B = dB;
  args.mainloop.dB = stride_B;
  args.mainloop.ptr_SFA = dSFA;
  args.mainloop.layout_SFA = layout_SFA;
  args.mainloop.ptr_SFB = dSFB;
  args.mainloop.layout_SFB = layout_SFB;
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = stride_D;
  args.epilogue.ptr_D = dD;
  args.epilogue.dD = stride_D;
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = r.sm_count;
#if TT_ARCH == 100
  args.hw_info.cluster_shape = dim3(TT_CLUSTER_M, TT_CLUSTER_N, 1);
  args.hw_info.cluster_shape_fallback = dim3(TT_CLUSTER_M, TT_CLUSTER_N, 1);
#endif

  // Reference in the kernel's terms, read in the problem's: D is row-major M x N either way, and
  // under swap-AB problem element (i, j) is the kernel's (j, i).
  auto tSFA = cute::make_tensor(sfa.data(), layout_SFA);
  auto tSFB = cute::make_tensor(sfb.data(), layout_SFB);
  auto kernel_ref = [&](long long i, long long j) {
    double acc = 0;
    for (long long kk = 0; kk < K; ++kk)
      acc += double(A.at(i, kk)) * float(tSFA(int(i), int(kk), 0)) * double(B.at(j, kk)) * float(tSFB(int(j), int(kk), 0));
    return acc;
  };
  auto ref = [&](long long i, long long j) { return TT_SWAP_AB ? kernel_ref(j, i) : kernel_ref(i, j); };
  auto check = [&](tt::Result& res) { return tt::check_dense(res, dD, M, N, ref, o.seed); };
  cfg::Gemm gemm;
  return tt::run_gemm(r, gemm, args, tt::Widths{cfg::kDataBits, cutlass::sizeof_bits<cfg::ElementD>::value},
                      2.0 * M * N * double(K), check, o);
#endif
}
#endif
