// A stand-in GEMM for tt::run_gemm (kernels/tt_common.hpp): the shared CUTLASS step sequence
// (can_implement -> workspace -> initialize + probe -> first run -> check -> timing) driven by a
// GEMM whose answers are chosen on the command line, so the sequence's JSON and error texts can
// be checked where no GPU is. The real reproducers (kernels/*.cu) are what runs on a GPU.
// Built and run by tests/kernels/test_run_sequence_nvcc.py:
//   ./stub {can_implement|initialize} [--m= --n= --k=]
#include <string>

#include "tt_common.hpp"

// What cutlass::device_kernel<> needs of a kernel; the body does nothing.
struct StubKernel {
  static constexpr int MaxThreadsPerBlock = 32;
  static constexpr int MinBlocksPerMultiprocessor = 1;
  struct Params {};
  __device__ void operator()(Params const&, char*) {}
};

struct StubGemm {
  using GemmKernel = StubKernel;
  struct Arguments {
    cutlass::Status can_implement, initialize;
  };
  static size_t get_workspace_size(const Arguments&) { return 256; }
  cutlass::Status can_implement(const Arguments& a) const { return a.can_implement; }
  cutlass::Status initialize(const Arguments& a, void*) { return a.initialize; }
  cutlass::Status run() { return cutlass::Status::kSuccess; }
};

int main(int argc, char** argv) {
  const std::string fail = argc > 1 ? argv[1] : "";
  tt::Options o = tt::parse(argc - 1, argv + 1);  // argv[1] (the failing step) is skipped as a program name
  tt::Result r;
  r.kernel = "run_sequence_stub";
  r.arch = "sm90a";
  r.dtype = "bf16";
  r.mode = "run";
  r.m = o.m; r.n = o.n; r.k = o.k;
  r.smem_bytes = 410624;  // the 8-stage bf16 128x256x64 kernel's: over every GPU's per-block limit
  r.error_bound = 4.0 / 256;
  StubGemm::Arguments args{fail == "can_implement" ? cutlass::Status::kInvalid : cutlass::Status::kSuccess,
                           fail == "initialize" ? cutlass::Status::kErrorInternal : cutlass::Status::kSuccess};
  StubGemm gemm;
  auto check = [](tt::Result& res) { res.rel_error = 0; res.nonfinite = 0; return true; };
  return tt::run_gemm(r, gemm, args, tt::Widths{16, 16}, 2.0 * o.m * o.n * double(o.k), check, o);
}
