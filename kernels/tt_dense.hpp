// tiletune reproducer support for the dense bf16/fp8 GEMMs (sm90_gemm.cu, sm100_gemm.cu): one dense
// problem through a built CUTLASS GEMM with inputs hashed on the GPU, swap-AB, and tt::run_gemm.
// Apart from tt_common.hpp because it needs CUTLASS's GEMM types (packed strides, problem shapes),
// which the other users of tt_common.hpp (the grouped kernel's arguments, the stand-in GEMM of
// the tests) do not include.
#pragma once

#ifndef TILETUNE_QUERY_ONLY
#include "cute/tensor.hpp"
#include "cutlass/gemm/gemm.h"
#include "cutlass/numeric_types.h"
#include "cutlass/util/packed_stride.hpp"

#include "tt_common.hpp"

namespace tt {

// One dense problem D[M,N] (row-major) = A[M,K] * B[N,K]^T through a built CUTLASS GEMM: inputs
// hashed on the GPU, the kernel's own problem swapped under swap-AB (its M is the problem's N, its
// A the problem's B, and it writes D column-major: the same memory), the CUTLASS steps, the check
// against the float64 reference recomputed from the same hashes, one JSON line per L2 state.
// `set_epilogue(args)` fills the epilogue's fusion arguments (D = 1 * accumulator).
template <class Gemm, class ElementAB, class ElementD, class SetEpilogue>
int run_dense(Result r, const Options& o, const Shape& p, bool swap_ab, const SetEpilogue& set_epilogue) {
  using GemmKernel = typename Gemm::GemmKernel;
  fill_device(r);
  if (!kernel_image_ok(r, reinterpret_cast<const void*>(cutlass::device_kernel<GemmKernel>))) {
    r.print();
    return 1;
  }
  const int M = static_cast<int>(p.m), N = static_cast<int>(p.n), K = static_cast<int>(p.k);
  r.m = M; r.n = N; r.k = K;
  const int KM = swap_ab ? N : M, KN = swap_ab ? M : N;
  r.kernel_m = KM; r.kernel_n = KN;

  // Values: small multiples of 1/4 (exact in bf16 and e4m3; every fp32 partial sum is exact for
  // K < 2^17), so the float64 reference sees exactly what the GPU sees.
  constexpr uint32_t kSeedA = 1, kSeedB = 2;
  auto* dA = to_device<ElementAB>(r, nullptr, size_t(M) * K * sizeof(ElementAB));
  auto* dB = to_device<ElementAB>(r, nullptr, size_t(N) * K * sizeof(ElementAB));
  auto* dD = to_device<ElementD>(r, nullptr, size_t(M) * N * sizeof(ElementD));
  if (!dA || !dB || !dD) { r.print(); return 1; }
  fill_hashed(dA, size_t(M) * K, o.seed, kSeedA);
  fill_hashed(dB, size_t(N) * K, o.seed, kSeedB);
  cudaMemset(dD, 0xFF, size_t(M) * N * sizeof(ElementD));  // 0xFFFF is a bf16 NaN: poison
  if (cuda_failed(r, cudaDeviceSynchronize(), "input fill")) { r.print(); return 1; }

  auto stride_A = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, {KM, K, 1});
  auto stride_B = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, {KN, K, 1});
  auto stride_D = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, {KM, KN, 1});
  auto stride_C = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, {KM, KN, 1});

  typename Gemm::Arguments args;
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = cute::make_shape(KM, KN, K, 1);
  args.mainloop.ptr_A = swap_ab ? dB : dA;
  args.mainloop.dA = stride_A;
  args.mainloop.ptr_B = swap_ab ? dA : dB;
  args.mainloop.dB = stride_B;
  set_epilogue(args);
  args.epilogue.ptr_C = nullptr;
  args.epilogue.dC = stride_C;
  args.epilogue.ptr_D = dD;
  args.epilogue.dD = stride_D;
  args.hw_info.device_id = 0;
  args.hw_info.sm_count = r.sm_count;

  auto ref = [&](long long i, long long j) {
    double acc = 0;
    for (long long kk = 0; kk < K; ++kk)
      acc += double(float(ElementAB(hashed_value(o.seed, kSeedA, uint64_t(i) * K + kk)))) *
             double(float(ElementAB(hashed_value(o.seed, kSeedB, uint64_t(j) * K + kk))));
    return acc;
  };
  auto check = [&](Result& res) { return check_sampled(res, dD, M, N, ref, o.seed, o.samples); };
  Gemm gemm;
  Widths bits{cutlass::sizeof_bits<ElementAB>::value, cutlass::sizeof_bits<ElementD>::value};
  int rc = run_gemm(r, gemm, args, bits, 2.0 * M * N * double(K), check, o);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dD);
  return rc;
}
}  // namespace tt
#endif
