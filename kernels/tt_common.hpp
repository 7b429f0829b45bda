// tiletune reproducer support: command line, device facts, timing and the one JSON result line.
//
// Every kernels/*.cu file includes this header and prints exactly one JSON line on stdout:
//   {"kernel","arch","tile","cluster","stages","smem_bytes","smem_limit","can_implement",
//    "initialize","run","time_ms","tflops","rel_error","error","cutlass_version", ...}
// Values that were not measured are null; "error" is null on success and one line otherwise.
// The .cu file describes its GEMM in a Result, builds the kernel's arguments and inputs, and hands
// them to run_gemm(), which runs CUTLASS's steps in the same order for every reproducer
// (can_implement -> initialize -> checked first run -> result check -> timing) and prints the line.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include "cutlass/version.h"

#ifndef TILETUNE_QUERY_ONLY
#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/device_kernel.h"
#endif

namespace tt {

// ---------------------------------------------------------------- JSON writing (no dependency)

inline std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

inline std::string json_num(double v, bool known = true) {
  if (!known || !std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Tri-state outcome of a CUTLASS step: not reached (null), ok, or the CUTLASS status string.
struct Step {
  bool reached = false;
  bool ok = false;
  std::string status;  // "Success" or cutlassGetStatusString(...)
  std::string json() const { return reached ? json_str(status) : "null"; }
};

struct Result {
  std::string kernel;        // file stem, e.g. "sm90_gemm"
  std::string arch;          // the arch the kernel was compiled for, e.g. "sm90a"
  std::string dtype;         // "bf16", "fp8_e4m3", "nvfp4"
  std::string schedule;      // "cooperative" / "pingpong"
  std::string mainloop;      // mainloop variant: "default", "fp8_fast_accum", "blockscaled"
  std::string epilogue;      // epilogue schedule: "tma", "no_smem", "auto"
  std::string tile_scheduler = "persistent";  // "persistent" (data-parallel) or "stream_k"
  bool swap_ab = false;      // the kernel computes D^T = B * A^T (its M runs over the problem's N)
  std::string mode;          // "query" or "run"
  int tile[3] = {0, 0, 0};
  int cluster[3] = {1, 1, 1};
  int stages = 0;            // the mainloop's pipeline stage count (what the builder chose)
  std::string stage_policy;  // "auto_carveout" or "explicit"
  long long smem_bytes = -1; // GemmKernel::SharedStorageSize
  long long smem_limit = -1; // device opt-in per-block limit (cudaDevAttrMaxSharedMemoryPerBlockOptin)
  std::string smem_limit_source;  // "device", or "cutlass constant" (query mode: the arch capacity CUTLASS assumes)
  bool grouped = false;
  int groups = 1;
  long long m = 0, n = 0, k = 0;
  long long kernel_m = 0, kernel_n = 0;  // the kernel's own M and N (swapped under swap-AB)
  std::string l2;            // "warm" (same buffers every run) or "cold" (L2 flushed before each run)
  long long flush_bytes = 0; // bytes written to flush L2 before each cold run
  Step can_implement, initialize, run;
  double time_ms = NAN;      // median of timed runs
  std::vector<double> times_ms;
  double tflops = NAN;
  double rel_error = NAN;    // ||D - ref|| / ||ref|| over the checked elements
  double error_bound = NAN;  // what rel_error is held to for this dtype
  long long nonfinite = -1;  // NaN/Inf (or never written) elements of D
  std::string cuda_error;    // cudaError_t name when the CUDA runtime reported one
  std::string error;         // one line; empty on success
  std::string device;        // GPU name
  int device_cc = 0;         // e.g. 90
  int sm_count = 0;
  int driver_version = 0;
  int runtime_version = 0;

  void print() const {
    std::string o = "{";
    auto add = [&](const char* k, const std::string& v) {
      if (o.size() > 1) o += ", ";
      o += json_str(k) + ": " + v;
    };
    auto opt_str = [](const std::string& s) { return s.empty() ? std::string("null") : json_str(s); };
    auto triple = [](const int* v) {
      return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + "]";
    };
    add("kernel", json_str(kernel));
    add("arch", json_str(arch));
    add("dtype", json_str(dtype));
    add("schedule", json_str(schedule));
    add("mode", json_str(mode));
    add("mainloop", opt_str(mainloop));
    add("epilogue", opt_str(epilogue));
    add("tile_scheduler", json_str(tile_scheduler));
    add("swap_ab", swap_ab ? "true" : "false");
    add("tile", triple(tile));
    add("cluster", triple(cluster));
    add("stages", stages > 0 ? std::to_string(stages) : "null");
    add("stage_policy", json_str(stage_policy));
    add("smem_bytes", smem_bytes >= 0 ? std::to_string(smem_bytes) : "null");
    add("smem_limit", smem_limit >= 0 ? std::to_string(smem_limit) : "null");
    add("smem_limit_source", opt_str(smem_limit_source));
    add("grouped", grouped ? "true" : "false");
    add("groups", std::to_string(groups));
    add("problem", m > 0 ? "{\"m\": " + std::to_string(m) + ", \"n\": " + std::to_string(n) +
                               ", \"k\": " + std::to_string(k) + "}"
                         : "null");
    add("kernel_problem", kernel_m > 0 ? "{\"m\": " + std::to_string(kernel_m) + ", \"n\": " + std::to_string(kernel_n) +
                                           ", \"k\": " + std::to_string(k) + "}"
                                     : "null");
    add("l2", opt_str(l2));
    add("flush_bytes", flush_bytes > 0 ? std::to_string(flush_bytes) : "null");
    add("can_implement", can_implement.json());
    add("initialize", initialize.json());
    add("run", run.json());
    add("time_ms", json_num(time_ms));
    std::string ts = "[";
    for (size_t i = 0; i < times_ms.size(); ++i) ts += (i ? ", " : "") + json_num(times_ms[i]);
    add("times_ms", ts + "]");
    add("tflops", json_num(tflops));
    add("rel_error", json_num(rel_error));
    add("error_bound", json_num(error_bound));
    add("nonfinite", nonfinite >= 0 ? std::to_string(nonfinite) : "null");
    add("cuda_error", opt_str(cuda_error));
    add("error", opt_str(error));
    add("device", opt_str(device));
    add("device_cc", device_cc ? std::to_string(device_cc) : "null");
    add("sm_count", sm_count ? std::to_string(sm_count) : "null");
    add("driver_version", driver_version ? std::to_string(driver_version) : "null");
    add("runtime_version", runtime_version ? std::to_string(runtime_version) : "null");
    add("cutlass_version", json_str(std::to_string(CUTLASS_MAJOR) + "." + std::to_string(CUTLASS_MINOR) +
                                    "." + std::to_string(CUTLASS_PATCH)));
    std::printf("%s}\n", o.c_str());
    std::fflush(stdout);
  }
};

// ---------------------------------------------------------------- command line

struct Shape {
  long long m, n, k;
};

struct Options {
  bool query = false;  // print the compile-time facts only; touch no GPU
  long long m = 4096, n = 4096, k = 4096;
  std::vector<Shape> problems;  // --problems=MxNxK,...: several problems in one process (sm90_gemm)
  std::vector<std::string> l2_states{"warm"};  // --l2=warm|cold|both
  int groups = 4;      // grouped kernels: number of equal-sized groups
  int warmup = 10, iters = 50;
  int samples = 1024;  // outputs checked against the float64 reference (tt::run_dense)
  unsigned seed = 2024;
  // The problems to run: --problems when given, else --m/--n/--k.
  std::vector<Shape> shapes() const { return problems.empty() ? std::vector<Shape>{{m, n, k}} : problems; }
};

inline bool parse_shapes(const char* text, std::vector<Shape>& out) {
  std::string t = text;
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t end = t.find(',', pos);
    std::string item = t.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    long long a = 0, b = 0, c = 0;
    char x1 = 0, x2 = 0;
    int used = 0;
    if (std::sscanf(item.c_str(), "%lld%c%lld%c%lld%n", &a, &x1, &b, &x2, &c, &used) != 5 || x1 != 'x' || x2 != 'x' ||
        used != static_cast<int>(item.size()) || a < 1 || b < 1 || c < 1)
      return false;
    out.push_back({a, b, c});
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return !out.empty();
}

inline Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* name) -> const char* {
      size_t len = std::strlen(name);
      if (a.compare(0, len, name) == 0 && a.size() > len && a[len] == '=') return argv[i] + len + 1;
      return nullptr;
    };
    const char* v;
    if (a == "--query") o.query = true;
    else if ((v = val("--m"))) o.m = std::atoll(v);
    else if ((v = val("--n"))) o.n = std::atoll(v);
    else if ((v = val("--k"))) o.k = std::atoll(v);
    else if ((v = val("--problems"))) {
      if (!parse_shapes(v, o.problems)) {
        std::fprintf(stderr, "--problems=%s: expected MxNxK[,MxNxK...] with every size >= 1\n", v);
        std::exit(2);
      }
    } else if ((v = val("--l2"))) {
      std::string w = v;
      if (w == "both") o.l2_states = {"warm", "cold"};
      else if (w == "warm" || w == "cold") o.l2_states = {w};
      else {
        std::fprintf(stderr, "--l2=%s: expected warm, cold or both\n", v);
        std::exit(2);
      }
    }
    else if ((v = val("--groups"))) o.groups = std::atoi(v);
    else if ((v = val("--warmup"))) o.warmup = std::atoi(v);
    else if ((v = val("--iters"))) o.iters = std::atoi(v);
    else if ((v = val("--samples"))) o.samples = std::max(1, std::atoi(v));
    else if ((v = val("--seed"))) o.seed = static_cast<unsigned>(std::atoll(v));
    else {
      std::fprintf(stderr, "unknown argument %s (use --query, --m=, --n=, --k=, --problems=, --l2=, --samples=, --groups=, --warmup=, --iters=, --seed=)\n",
                   argv[i]);
      std::exit(2);
    }
  }
  return o;
}

// Query mode: the problem given on the command line and the kernel's own problem (swapped under
// swap-AB), without touching a GPU; a reproducer's --query shows how the kernel will see the problem.
inline void query_problem(Result& r, const Options& o) {
  const Shape p = o.shapes().front();
  r.m = p.m; r.n = p.n; r.k = p.k;
  r.kernel_m = r.swap_ab ? p.n : p.m;
  r.kernel_n = r.swap_ab ? p.m : p.n;
}

// Small deterministic generator (so a reproducer's inputs are the same on every machine).
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint32_t next() {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    return static_cast<uint32_t>(s >> 11);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * (next() & 0xFFFFFF) / float(0x1000000); }
};

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Compares D (read back as floats, row-major M x N) with a float64 reference at `samples`
// pseudo-random positions, and scans all of D for NaN/Inf (D is poisoned with NaN before the
// run, so an element the kernel never wrote shows up here too). Fills rel_error and nonfinite.
template <class RefFn>
inline void check_output(Result& r, const std::vector<float>& d, long long M, long long N, const RefFn& ref,
                         int samples, unsigned seed) {
  long long bad = 0;
  for (float v : d) bad += std::isfinite(v) ? 0 : 1;
  r.nonfinite = bad;
  Rng rng(seed ^ 0xC0FFEEu);
  double num = 0, den = 0;
  for (int s = 0; s < samples; ++s) {
    long long i = rng.next() % M, j = rng.next() % N;
    double want = ref(i, j);
    double got = d[i * N + j];
    num += (got - want) * (got - want);
    den += want * want;
  }
  r.rel_error = den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
  if (bad > 0) r.rel_error = INFINITY;
}

#ifndef TILETUNE_QUERY_ONLY
// ---------------------------------------------------------------- device facts and errors

inline void fill_device(Result& r) {
  int dev = 0;
  cudaDeviceProp p;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    r.cuda_error = cudaGetErrorName(cudaGetLastError());
    return;
  }
  r.device = p.name;
  r.device_cc = p.major * 10 + p.minor;
  r.sm_count = p.multiProcessorCount;
  int optin = 0;
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  r.smem_limit = optin;
  r.smem_limit_source = "device";
  cudaDriverGetVersion(&r.driver_version);
  cudaRuntimeGetVersion(&r.runtime_version);
}

// Is there code for this GPU in the binary at all? Asked before anything else, because the first
// symptom can otherwise be a host-side failure further on that hides the cause (seen on an H200:
// an sm_120a NVFP4 binary aborts while CUTLASS builds the fp4 TMA descriptor, before initialize()
// would have reported the missing image).
inline bool kernel_image_ok(Result& r, const void* kernel) {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, kernel);
  if (e == cudaSuccess) return true;
  r.cuda_error = cudaGetErrorName(e);
  r.error = "no kernel image for this device (binary built for " + r.arch + ", device cc " +
            std::to_string(r.device_cc) + "): cudaFuncGetAttributes: " + cudaGetErrorName(e) + " (" +
            cudaGetErrorString(e) + ")";
  return false;
}

// CUTLASS's SM90+ can_implement() answers only yes/no (Status::kInvalid, "Invalid status"); the
// usual reason is TMA's rule that every row stride be a multiple of 16 bytes. Say so when it holds.
inline std::string tma_alignment_note(long long M, long long N, long long K, int bits_ab, int bits_d) {
  std::string note;
  auto row = [&](const char* what, long long elems, int bits) {
    long long bits_total = elems * bits;
    if (bits_total % 128) {
      std::string bytes = std::to_string(bits_total / 8) + (bits_total % 8 ? ".5" : "");
      note += std::string(note.empty() ? "" : "; ") + what + " rows of " + std::to_string(elems) + " elements = " +
              bytes + " B are not a multiple of the 16 B TMA needs";
    }
  };
  row("A/B (K-major)", K, bits_ab);
  row("D", N, bits_d);
  (void)M;
  return note;
}

// ---------------------------------------------------------------- inputs hashed on the device

// A value that is a small multiple of 1/4 in [-2, 2] (exact in bf16 and e4m3) for element `idx` of
// operand `which`: the GPU fills operands with it, the host reference recomputes it.
__host__ __device__ inline float hashed_value(uint32_t seed, uint32_t which, uint64_t idx) {
  uint64_t x = idx * 0x9E3779B97F4A7C15ull + (uint64_t(seed) << 32) + which * 0xD1B54A32D192ED03ull;
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return float(int(x % 17) - 8) * 0.25f;
}

template <class T>
__global__ void fill_hashed_kernel(T* p, size_t n, uint32_t seed, uint32_t which) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = T(hashed_value(seed, which, i));
}

template <class T>
void fill_hashed(T* p, size_t n, uint32_t seed, uint32_t which) {
  fill_hashed_kernel<<<1024, 256>>>(p, n, seed, which);
}

template <class T>
__global__ void count_nonfinite_kernel(const T* p, size_t n, unsigned long long* out) {
  unsigned long long bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    bad += isfinite(float(p[i])) ? 0 : 1;
  if (bad) atomicAdd(out, bad);
}

// Keeps the GPU busy for `ns` nanoseconds (one thread reading the global timer). Enqueued before the
// first event of a timed run, it lets the host enqueue the GEMM's launch and the second event while
// the GPU is still busy, so the interval between the events holds the kernel alone, not the host's
// launch latency (which would otherwise dominate kernels of a few microseconds).
__global__ void hold_gpu_kernel(long long ns) {
  long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// Records the first CUDA error (name + text) and returns true if there was one.
inline bool cuda_failed(Result& r, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return false;
  if (r.cuda_error.empty()) r.cuda_error = cudaGetErrorName(e);
  if (r.error.empty()) r.error = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return true;
}

// Times `launch` with CUDA events: `warmup` untimed runs, then `iters` runs timed one by one.
// Cold L2 (`flush` non-null): before every run, outside the timed interval, `flush_bytes` are
// written to a scratch buffer four times the L2's size, so the kernel finds none of its operands
// there. Each timed run starts behind a 50 us hold of the GPU (hold_gpu_kernel), so the events time
// the kernel, not the host's launch latency. Returns false (and fills r.error) if a launch or the device reported an error.
// `prepare(r)` runs before every launch, outside the timed interval (the CUTLASS re-initialize).
template <class F, class P>
inline bool time_launches(Result& r, const F& launch, const P& prepare, int warmup, int iters,
                          void* flush = nullptr, size_t flush_bytes = 0) {
  r.times_ms.clear();
  auto evict = [&]() { if (flush) cudaMemsetAsync(flush, r.times_ms.size() & 0xFF, flush_bytes); };
  for (int i = 0; i < warmup; ++i) {
    evict();
    if (!prepare(r) || !launch(r)) return false;
  }
  if (cuda_failed(r, cudaDeviceSynchronize(), "warm-up")) return false;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < iters; ++i) {
    evict();
    if (!prepare(r)) return false;
    hold_gpu_kernel<<<1, 1>>>(50000);  // 50 us: the launch below is enqueued before the GPU gets to `a`
    cudaEventRecord(a);
    if (!launch(r)) return false;
    cudaEventRecord(b);
    if (cuda_failed(r, cudaEventSynchronize(b), "timed run")) return false;
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    r.times_ms.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  r.time_ms = median(r.times_ms);
  return true;
}

// ---------------------------------------------------------------- the CUTLASS run sequence

template <class T>
T* to_device(Result& r, const void* host, size_t bytes) {
  void* p = nullptr;
  if (cuda_failed(r, cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc")) return nullptr;
  if (host && cuda_failed(r, cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy")) return nullptr;
  return static_cast<T*>(p);
}

// initialize() answers "Error Internal" and swallows the CUDA error when the runtime refuses the
// kernel. Ask the runtime the same two questions it asked (is there code for this GPU? may the
// kernel have this much shared memory?) and keep the answer, so "no kernel image" and "too much
// shared memory" are told apart.
template <class Kernel>
void probe_kernel(Result& r) {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, cutlass::device_kernel<Kernel>);
  if (e != cudaSuccess) {
    cuda_failed(r, e, "cudaFuncGetAttributes(kernel)");
    return;
  }
  e = cudaFuncSetAttribute(cutlass::device_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(r.smem_bytes));
  if (e != cudaSuccess) cuda_failed(r, e, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
}

// Reads D (M x N, row-major, on the device) back as floats and compares it with ref(i, j).
template <class ElementD, class RefFn>
bool check_dense(Result& r, const ElementD* dD, long long M, long long N, const RefFn& ref, unsigned seed) {
  std::vector<ElementD> hD(size_t(M) * N);
  if (cuda_failed(r, cudaMemcpy(hD.data(), dD, hD.size() * sizeof(ElementD), cudaMemcpyDeviceToHost), "cudaMemcpy(D)"))
    return false;
  std::vector<float> d(hD.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(hD[i]);
  check_output(r, d, M, N, ref, 1024, seed);
  return true;
}

// The same check without a host copy of D: NaN/Inf counted on the device, and only the sampled
// outputs read back (for big campaign shapes, where D is hundreds of MB).
template <class ElementD, class RefFn>
bool check_sampled(Result& r, const ElementD* dD, long long M, long long N, const RefFn& ref, unsigned seed,
                   int samples = 1024) {
  unsigned long long* d_bad = nullptr;
  if (cuda_failed(r, cudaMalloc(&d_bad, sizeof(unsigned long long)), "cudaMalloc")) return false;
  cudaMemset(d_bad, 0, sizeof(unsigned long long));
  count_nonfinite_kernel<<<1024, 256>>>(dD, size_t(M) * N, d_bad);
  unsigned long long bad = 0;
  bool failed = cuda_failed(r, cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost), "count non-finite D");
  cudaFree(d_bad);
  if (failed) return false;
  r.nonfinite = static_cast<long long>(bad);
  Rng rng(seed ^ 0xC0FFEEu);
  double num = 0, den = 0;
  for (int s = 0; s < samples; ++s) {
    long long i = rng.next() % M, j = rng.next() % N;
    ElementD v;
    if (cuda_failed(r, cudaMemcpy(&v, dD + (i * N + j), sizeof v, cudaMemcpyDeviceToHost), "cudaMemcpy(D)")) return false;
    double want = ref(i, j), got = float(v);
    num += (got - want) * (got - want);
    den += want * want;
  }
  r.rel_error = bad > 0 ? INFINITY : den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
  return true;
}

// Element widths in bits, for saying why can_implement() refused (tma_alignment_note).
struct Widths {
  int ab;  // A and B
  int d;   // D
};

// Runs a built CUTLASS GEMM through every step, recording each in r and stopping at the first that
// fails: can_implement -> workspace -> initialize (probe_kernel when it fails) -> first run, alone
// and synchronised (a faulting kernel is reported before any timing) -> check(r), which reads D back
// and fills rel_error and nonfinite (false: it could not, r.error says why) -> timed runs.
// r.m, r.n, r.k must hold the problem (one group's, for grouped kernels); `flops` is per launch.
// Prints the JSON line and returns the exit status: 0 only if every step passed and D is right.
template <class Gemm, class Check>
int run_gemm(Result& r, Gemm& gemm, const typename Gemm::Arguments& args, Widths bits, double flops,
             const Check& check, const Options& o) {
  cutlass::Status st = gemm.can_implement(args);
  r.can_implement = {true, st == cutlass::Status::kSuccess, cutlassGetStatusString(st)};
  if (st != cutlass::Status::kSuccess) {
    std::string why = tma_alignment_note(r.m, r.n, r.k, bits.ab, bits.d);
    r.error = std::string("can_implement: ") + cutlassGetStatusString(st) + (why.empty() ? "" : " (" + why + ")");
    r.print();
    return 1;
  }
  // Grouped kernels keep a TMA descriptor per SM and operand here, rewritten on the device per group.
  void* ws = to_device<uint8_t>(r, nullptr, Gemm::get_workspace_size(args));
  if (!ws) {
    r.print();
    return 1;
  }
  st = gemm.initialize(args, ws);
  r.initialize = {true, st == cutlass::Status::kSuccess, cutlassGetStatusString(st)};
  if (st != cutlass::Status::kSuccess) {
    probe_kernel<typename Gemm::GemmKernel>(r);
    r.error = std::string("initialize: ") + cutlassGetStatusString(st) + (r.error.empty() ? "" : "; " + r.error);
    r.print();
    return 1;
  }
  auto launch = [&](Result& res) {
    cutlass::Status s = gemm.run();
    if (s != cutlass::Status::kSuccess) {
      res.run = {true, false, cutlassGetStatusString(s)};
      cuda_failed(res, cudaGetLastError(), "run");
      if (res.error.empty()) res.error = std::string("run: ") + cutlassGetStatusString(s);
      return false;
    }
    return true;
  };
  // Every timed launch is re-initialized first, as FlashInfer's runners call initialize() before
  // each run(): a stream-K kernel's workspace (its fix-up flags) must be zeroed before every
  // launch, or a launch after the first can wait forever on flags the last one left set (seen on
  // the H200: the stream-K builds hung from the first problem with more tiles than SMs).
  auto prepare = [&](Result& res) {
    cutlass::Status s = gemm.initialize(args, ws);
    if (s == cutlass::Status::kSuccess) return true;
    res.error = std::string("re-initialize before a timed run: ") + cutlassGetStatusString(s);
    return false;
  };
  if (!launch(r) || cuda_failed(r, cudaDeviceSynchronize(), "first run")) {
    if (!r.run.reached) r.run = {true, false, "Error"};
    r.print();
    return 1;
  }
  r.run = {true, true, "Success"};
  if (!check(r)) {
    r.print();
    return 1;
  }
  // One timed pass (and one JSON line) per L2 state asked for; cold passes flush 4x the L2 first.
  int rc = 0;
  for (const std::string& state : o.l2_states) {
    Result out = r;
    out.l2 = state;
    void* flush = nullptr;
    size_t flush_bytes = 0;
    if (state == "cold") {
      int l2 = 0;
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
      flush_bytes = size_t(std::max(l2, 1 << 20)) * 4;
      if (cuda_failed(out, cudaMalloc(&flush, flush_bytes), "cudaMalloc(L2 flush buffer)")) {
        out.print();
        rc = 1;
        continue;
      }
      out.flush_bytes = static_cast<long long>(flush_bytes);
    }
    if (time_launches(out, launch, prepare, o.warmup, o.iters, flush, flush_bytes))
      out.tflops = flops / (out.time_ms * 1e-3) / 1e12;
    if (flush) cudaFree(flush);
    if (out.error.empty() && !(out.rel_error <= out.error_bound))
      out.error = "wrong results: rel_error " + json_num(out.rel_error) + " above bound " + json_num(out.error_bound);
    out.print();
    if (!out.error.empty()) rc = 1;
  }
  return rc;
}

#endif

}  // namespace tt
