// tiletune constructed sample: only the instantiation lines of the generated TU (args extracted from FlashInfer v0.6.14 generate_kernels.py output)
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, half, void, EpilogueOpDefault, NONE, 256, 128, 128, 1, 1, 1, false, false, false, true);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, __nv_bfloat16, void, EpilogueOpDefault, NONE, 256, 128, 128, 1, 1, 1, false, false, false, true);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, half, void, EpilogueOpDefault, NONE, 256, 128, 128, 1, 1, 1, false, false, false, false);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, __nv_bfloat16, void, EpilogueOpDefault, NONE, 256, 128, 128, 1, 1, 1, false, false, false, false);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, half, void, EpilogueOpDefault, FINALIZE, 256, 128, 128, 1, 1, 1, false, false, false, true);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, __nv_bfloat16, void, EpilogueOpDefault, FINALIZE, 256, 128, 128, 1, 1, 1, false, false, false, true);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, half, void, EpilogueOpDefault, FINALIZE, 256, 128, 128, 1, 1, 1, false, false, false, false);
INSTANTIATE_TMA_WARP_SPECIALIZED_MOE_GEMM(Sm120, SafeFP4, SafeFP4, __nv_bfloat16, void, EpilogueOpDefault, FINALIZE, 256, 128, 128, 1, 1, 1, false, false, false, false);
