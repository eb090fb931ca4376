// The cuBLASLt executor (docs/gemm-lab.md, "cuBLASLt executor"): inputs generated on the GPU (or
// copied there from their .npy files), a spot check against the float64 reference, a CUDA graph
// of back-to-back matmuls sized to ~75 ms per replay, and a meter on the NVML backend measuring
// the same GPU.
#include "lab/cuda_executor.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <thread>

#include "cuda_check.h"
#include "cuda_kernels.h"
#include "wattlab/core/clock.h"
#include "lab/bit_stats_gpu.h"
#include "lab/generate_gpu.h"
#include "lab/operand_file.h"
#include "lab/recipe.h"
#include "lab/reference.h"

namespace wattlab::lab {
namespace {

using detail::cuda_error;

constexpr int64_t kMaxGemmsPerReplay = 20000;  // graph instantiation time grows with nodes
constexpr int64_t kSpotChecks = 16;            // rows of A and columns of B in the spot check

// cublasGetStatusName lives in libcublas, which the executor does not otherwise need.
const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cublasStatus_t (unknown)";
  }
}

Error lt_error(cublasStatus_t s, const std::string& what) {
  Error e;
  e.kind = s == CUBLAS_STATUS_NOT_SUPPORTED ? ErrorKind::not_supported : ErrorKind::unavailable;
  e.what = fmt::format("{} failed: {} ({})", what, status_name(s), static_cast<int>(s));
  e.vendor_code = static_cast<int>(s);
  return e;
}
#define WATTLAB_LT_TRY(call, what)                                       \
  do {                                                                   \
    cublasStatus_t wattlab_s_ = (call);                                  \
    if (wattlab_s_ != CUBLAS_STATUS_SUCCESS) return lt_error(wattlab_s_, what); \
  } while (0)

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32: return CUDA_R_32F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::f8_e4m3: return CUDA_R_8F_E4M3;
    case DType::f8_e5m2: return CUDA_R_8F_E5M2;
    case DType::i8: return CUDA_R_8I;
  }
  return CUDA_R_32F;
}
cudaDataType_t cuda_type(OutType t) {
  switch (t) {
    case OutType::f32: return CUDA_R_32F;
    case OutType::f16: return CUDA_R_16F;
    case OutType::bf16: return CUDA_R_16BF;
    case OutType::i32: return CUDA_R_32I;
  }
  return CUDA_R_32F;
}

// Compute and scale types of each engine (the table in docs/gemm-lab.md).
struct LtTypes {
  cublasComputeType_t compute;
  cudaDataType_t scale;
};
LtTypes lt_types(Engine e) {
  switch (e) {
    case Engine::fp32: return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case Engine::tf32: return {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
    case Engine::fp16acc16: return {CUBLAS_COMPUTE_16F, CUDA_R_16F};
    case Engine::int8: return {CUBLAS_COMPUTE_32I, CUDA_R_32I};
    default: return {CUBLAS_COMPUTE_32F, CUDA_R_32F};
  }
}

// alpha = 1, beta = 0 in the scale type's bits.
struct Scalars {
  alignas(8) unsigned char alpha[8]{}, beta[8]{};
};
Scalars scalars(cudaDataType_t scale) {
  Scalars s;
  if (scale == CUDA_R_16F) {
    const uint16_t one = 0x3C00;
    std::memcpy(s.alpha, &one, sizeof(one));
  } else if (scale == CUDA_R_32I) {
    const int32_t one = 1;
    std::memcpy(s.alpha, &one, sizeof(one));
  } else {
    const float one = 1.0f;
    std::memcpy(s.alpha, &one, sizeof(one));
  }
  return s;
}

std::string uuid_text(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                     b[15]);
}

std::vector<int64_t> spread_indices(int64_t n, int64_t count) {
  std::vector<int64_t> out;
  const int64_t c = std::min(n, count);
  for (int64_t i = 0; i < c; ++i) out.push_back(c == 1 ? 0 : i * (n - 1) / (c - 1));
  return out;
}

// Everything one point allocates; freed before the next point.
struct PointResources {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* buffer = nullptr;  // X1/X2
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a_desc = nullptr, b_desc = nullptr, c_desc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;

  void release() {
    if (graph_exec) cudaGraphExecDestroy(graph_exec);
    if (graph) cudaGraphDestroy(graph);
    if (a_desc) cublasLtMatrixLayoutDestroy(a_desc);
    if (b_desc) cublasLtMatrixLayoutDestroy(b_desc);
    if (c_desc) cublasLtMatrixLayoutDestroy(c_desc);
    if (op) cublasLtMatmulDescDestroy(op);
    for (void* p : {a, b, c, buffer})
      if (p) cudaFree(p);
    *this = {};
  }
};

class CudaExecutor final : public GemmExecutor {
 public:
  CudaExecutor(CudaExecutorOptions opt, std::unique_ptr<Meter> meter, std::vector<DeviceProperties> devices,
               std::string gpu_name)
      : opt_(std::move(opt)), meter_(std::move(meter)), devices_(std::move(devices)), gpu_name_(std::move(gpu_name)) {}
  ~CudaExecutor() override {
    cudaDeviceSynchronize();
    res_.release();
    release_context();
    if (meter_) meter_->stop();
  }

  Status init_context() {
    if (ready_) return {};
    WATTLAB_CUDA_TRY(cudaSetDevice(opt_.cuda_device));
    WATTLAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    WATTLAB_CUDA_TRY(cudaMalloc(&workspace_, opt_.workspace_bytes));
    WATTLAB_CUDA_TRY(cudaEventCreate(&ev0_));
    WATTLAB_CUDA_TRY(cudaEventCreate(&ev1_));
    WATTLAB_LT_TRY(cublasLtCreate(&lt_), "cublasLtCreate");
    ready_ = true;
    return {};
  }

  bool simulated() const override { return false; }
  std::string description() const override {
    const std::size_t v = cublasLtGetVersion();
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    return fmt::format("cuBLASLt {}.{}.{} on CUDA device {} ({}), CUDA runtime {}.{}, driver API {}.{}", v / 10000,
                       (v / 100) % 100, v % 100, opt_.cuda_device, gpu_name_, rt / 1000, (rt % 1000) / 10, drv / 1000,
                       (drv % 1000) / 10);
  }
  Meter& meter() override { return *meter_; }
  Clock& clock() override { return meter_->clock(); }
  std::vector<DeviceProperties> devices() const override { return devices_; }

  Result<Prepared> prepare(const GemmSpec& spec, double target_replay_s) override {
    if (ready_) {
      if (auto e = cudaStreamSynchronize(stream_); e != cudaSuccess) return cuda_error(e, "cudaStreamSynchronize");
    }
    const auto t0 = std::chrono::steady_clock::now();
    res_.release();  // the previous point's buffers and graph
    const double release_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spec_ = spec;
    host_until_ = {};
    auto p = prepare_point(spec, target_replay_s);
    if (p) p->step_s["release"] = release_s;
    return p;
  }

  Status launch(int64_t replays) override {
    if (spec_.control == Control::rest || spec_.control == Control::idle) {
      // Nothing runs on the GPU: the "replays" are host time.
      const auto now = std::chrono::steady_clock::now();
      host_until_ = std::max(host_until_, now) +
                    std::chrono::nanoseconds(static_cast<int64_t>(std::llround(static_cast<double>(replays) * replay_s_ * 1e9)));
      return {};
    }
    if (spec_.fidelity) {
      // The original's loop: one GEMM, then a synchronization, every iteration.
      for (int64_t i = 0; i < replays * gemms_per_replay_; ++i) {
        if (auto st = matmul(); !st) return st;
        WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
      }
      return {};
    }
    for (int64_t i = 0; i < replays; ++i) WATTLAB_CUDA_TRY(cudaGraphLaunch(res_.graph_exec, stream_));
    return {};
  }

  Status synchronize() override {
    if (ready_) WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
    if (host_until_ > std::chrono::steady_clock::now()) std::this_thread::sleep_until(host_until_);
    return {};
  }

  WindowResult window_result(WindowId id) override { return meter_->wait_result(id, std::chrono::seconds(10)); }

 private:
  Result<Prepared> prepare_point(const GemmSpec& spec, double target_replay_s) {
    switch (spec.control) {
      case Control::none: return prepare_gemm(spec, target_replay_s);
      case Control::rest: return prepare_rest(spec, target_replay_s);
      case Control::toggle: return prepare_toggle(spec, target_replay_s);
      case Control::idle: return prepare_idle(spec, target_replay_s);
    }
    return Error{ErrorKind::internal, "unknown control", ""};
  }

  Result<Prepared> prepare_gemm(const GemmSpec& spec, double target_replay_s) {
    if (auto st = init_context(); !st) return st.error();
    const EngineSpec& es = lab::spec(spec.engine);
    if (auto why = shape_problem(spec.engine, spec.m, spec.n, spec.k))
      return Error{ErrorKind::invalid_argument, *why, ""};
    const OperandShape sa{Operand::A, spec.m, spec.n, spec.k, es.a};
    const OperandShape sb{Operand::B, spec.m, spec.n, spec.k, es.b};
    // A recipe, or nothing where the operand comes from a file.
    auto recipe_of = [&](Operand which) -> Result<std::optional<Recipe>> {
      if (!operand_file(spec, which).empty()) return std::optional<Recipe>{};
      auto r = parse_recipe(which == Operand::A ? spec.recipe_a : spec.recipe_b);
      if (!r) return r.error();
      return std::optional<Recipe>(std::move(*r));
    };
    auto ra = recipe_of(Operand::A);
    if (!ra) return ra.error();
    auto rb = recipe_of(Operand::B);
    if (!rb) return rb.error();
    const std::size_t c_count = static_cast<std::size_t>(spec.m) * static_cast<std::size_t>(spec.n);
    Prepared p;
    auto t_step = std::chrono::steady_clock::now();
    auto step_done = [&](const char* name) {
      const auto now = std::chrono::steady_clock::now();
      p.step_s[name] = std::chrono::duration<double>(now - t_step).count();
      t_step = now;
    };
    WATTLAB_CUDA_TRY(cudaMalloc(&res_.a, storage_bytes(sa)));
    WATTLAB_CUDA_TRY(cudaMalloc(&res_.b, storage_bytes(sb)));
    WATTLAB_CUDA_TRY(cudaMalloc(&res_.c, c_count * size_bytes(es.out)));
    if (auto st = fill_operand(spec, *ra, sa, res_.a); !st) return st.error();
    if (auto st = fill_operand(spec, *rb, sb, res_.b); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
    step_done("generate");
    if (auto st = input_stats(sa, sb, p); !st) return st.error();
    step_done("stats");
    if (auto st = setup_matmul(spec, es); !st) return st.error();

    // One GEMM, then the checks on its output.
    if (auto st = matmul(); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
    auto nonfinite = detail::count_nonfinite(res_.c, es.out, c_count, stream_);
    if (!nonfinite) return nonfinite.error();
    p.nonfinite_fraction = static_cast<double>(*nonfinite) / static_cast<double>(c_count);
    auto rel = spot_check(spec, es, sa, sb);
    if (!rel) return rel.error();
    p.rel_error = *rel;
    step_done("check");

    // Calibrate: the time of one GEMM (after two to settle), then the graph's size from it.
    for (int i = 0; i < 2; ++i)
      if (auto st = matmul(); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaEventRecord(ev0_, stream_));
    constexpr int kTimed = 5;
    for (int i = 0; i < kTimed; ++i)
      if (auto st = matmul(); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaEventRecord(ev1_, stream_));
    auto gemm_s = elapsed_s();
    if (!gemm_s) return gemm_s.error();
    const double one_s = std::max(*gemm_s / kTimed, 1e-7);
    gemms_per_replay_ = std::clamp<int64_t>(std::llround(target_replay_s / one_s), 1, kMaxGemmsPerReplay);
    p.gemms_per_replay = gemms_per_replay_;
    if (spec.fidelity) {
      p.replay_s = one_s * static_cast<double>(gemms_per_replay_);
    } else {
      auto st = capture([&]() -> Status {
        for (int64_t i = 0; i < gemms_per_replay_; ++i)
          if (auto s = matmul(); !s) return s;
        return {};
      });
      if (!st) return st.error();
      auto replay = time_replay();
      if (!replay) return replay.error();
      p.replay_s = *replay;
    }
    replay_s_ = p.replay_s;
    step_done("capture");
    return p;
  }

  // Generates the operand from its recipe on the device, or copies it there from its file.
  Status fill_operand(const GemmSpec& spec, const std::optional<Recipe>& recipe, const OperandShape& shape,
                      void* device) {
    if (recipe) return generate_gpu(*recipe, shape, spec.seed, device, stream_);
    auto bytes = load_operand_file(spec, shape);
    if (!bytes) return bytes.error();
    // On the point's stream (non-blocking: the legacy stream would not order it), finished before
    // the host buffer goes.
    WATTLAB_CUDA_TRY(cudaMemcpyAsync(device, bytes->data(), bytes->size(), cudaMemcpyHostToDevice, stream_));
    WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
    return {};
  }

  Status input_stats(const OperandShape& sa, const OperandShape& sb, Prepared& p) {
    auto a = bit_stats_gpu(res_.a, sa, stream_);
    if (!a) return a.error();
    auto b = bit_stats_gpu(res_.b, sb, stream_);
    if (!b) return b.error();
    for (auto [name, s] : {std::pair{"a", &*a}, std::pair{"b", &*b}}) {
      const std::string n = name;
      p.input_stats[n + "_popcount_bits"] = s->mean_popcount_bits;
      p.input_stats[n + "_zero_fraction"] = s->zero_fraction;
      p.input_stats[n + "_distinct_values"] = static_cast<double>(s->distinct_values);
      if (std::isfinite(s->mean_hamming_along_k_bits)) p.input_stats[n + "_hamming_k_bits"] = s->mean_hamming_along_k_bits;
      if (std::isfinite(s->mean_hamming_along_mn_bits))
        p.input_stats[n + "_hamming_mn_bits"] = s->mean_hamming_along_mn_bits;
      p.input_stats[n + "_width_bits"] = s->width_bits;
    }
    if (sa.dtype == sb.dtype) {
      auto ab = ab_bit_agreement_gpu(res_.a, sa, res_.b, sb, stream_);
      if (!ab) return ab.error();
      if (std::isfinite(*ab)) p.input_stats["ab_bit_agreement"] = *ab;
    }
    return {};
  }

  Status setup_matmul(const GemmSpec& spec, const EngineSpec& es) {
    const LtTypes t = lt_types(spec.engine);
    scalars_ = scalars(t.scale);
    WATTLAB_LT_TRY(cublasLtMatmulDescCreate(&res_.op, t.compute, t.scale), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    WATTLAB_LT_TRY(cublasLtMatmulDescSetAttribute(res_.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "TRANSA");
    WATTLAB_LT_TRY(cublasLtMatmulDescSetAttribute(res_.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "TRANSB");
    // TN: A stored K x M (ld K) and transposed, B K x N (ld K), C M x N (ld M).
    WATTLAB_LT_TRY(cublasLtMatrixLayoutCreate(&res_.a_desc, cuda_type(es.a), spec.k, spec.m, spec.k), "layout A");
    WATTLAB_LT_TRY(cublasLtMatrixLayoutCreate(&res_.b_desc, cuda_type(es.b), spec.k, spec.n, spec.k), "layout B");
    WATTLAB_LT_TRY(cublasLtMatrixLayoutCreate(&res_.c_desc, cuda_type(es.out), spec.m, spec.n, spec.m), "layout C");
    cublasLtMatmulPreference_t pref = nullptr;
    WATTLAB_LT_TRY(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = opt_.workspace_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt_, res_.op, res_.a_desc, res_.b_desc, res_.c_desc,
                                                             res_.c_desc, pref, 1, &heur, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
      return Error{ErrorKind::not_supported,
                   fmt::format("cuBLASLt has no algorithm for engine {} at {}x{}x{} ({})", es.name, spec.m, spec.n,
                               spec.k, hs == CUBLAS_STATUS_SUCCESS ? "none found" : status_name(hs)),
                   "try another shape or engine; `wattlab gemm check` lists what runs"};
    res_.algo = heur.algo;
    return {};
  }

  Status matmul() {
    WATTLAB_LT_TRY(cublasLtMatmul(lt_, res_.op, scalars_.alpha, res_.a, res_.a_desc, res_.b, res_.b_desc, scalars_.beta,
                                  res_.c, res_.c_desc, res_.c, res_.c_desc, &res_.algo, workspace_,
                                  opt_.workspace_bytes, stream_),
                   "cublasLtMatmul");
    return {};
  }

  // 16 rows of A and 16 columns of B (both K-contiguous) against the same 256 entries of C.
  Result<double> spot_check(const GemmSpec& spec, const EngineSpec& es, const OperandShape& sa, const OperandShape& sb) {
    const auto rows = spread_indices(spec.m, kSpotChecks);
    const auto cols = spread_indices(spec.n, kSpotChecks);
    const std::size_t ka = static_cast<std::size_t>(spec.k) * size_bytes(sa.dtype);
    const std::size_t kb = static_cast<std::size_t>(spec.k) * size_bytes(sb.dtype);
    const std::size_t oc = size_bytes(es.out);
    std::vector<std::byte> a(rows.size() * ka), b(cols.size() * kb), c(rows.size() * cols.size() * oc);
    for (std::size_t r = 0; r < rows.size(); ++r)
      WATTLAB_CUDA_TRY(cudaMemcpy(a.data() + r * ka, static_cast<const std::byte*>(res_.a) + rows[r] * ka, ka,
                                  cudaMemcpyDeviceToHost));
    for (std::size_t j = 0; j < cols.size(); ++j)
      WATTLAB_CUDA_TRY(cudaMemcpy(b.data() + j * kb, static_cast<const std::byte*>(res_.b) + cols[j] * kb, kb,
                                  cudaMemcpyDeviceToHost));
    // C(i, j) at i + j*M; the reference is row-major in (r, c).
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t j = 0; j < cols.size(); ++j) {
        const std::size_t at = static_cast<std::size_t>(rows[r] + cols[j] * spec.m) * oc;
        WATTLAB_CUDA_TRY(cudaMemcpy(c.data() + (r * cols.size() + j) * oc, static_cast<const std::byte*>(res_.c) + at,
                                    oc, cudaMemcpyDeviceToHost));
      }
    std::vector<int64_t> local_rows(rows.size()), local_cols(cols.size());
    for (std::size_t i = 0; i < local_rows.size(); ++i) local_rows[i] = static_cast<int64_t>(i);
    for (std::size_t i = 0; i < local_cols.size(); ++i) local_cols[i] = static_cast<int64_t>(i);
    const auto ref = reference_entries(a, sa.dtype, b, sb.dtype, spec.k, local_rows, local_cols);
    const auto got = decode_output(c, es.out, ref.size());
    return compare(got, ref, es.rel_error_bound).rel_frobenius_error;
  }

  Result<Prepared> prepare_rest(const GemmSpec& spec, double target_replay_s) {
    if (auto st = init_context(); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaMalloc(&res_.buffer, spec.rest_bytes));
    WATTLAB_CUDA_TRY(cudaMemset(res_.buffer, spec.fill_byte & 0xFF, spec.rest_bytes));
    WATTLAB_CUDA_TRY(cudaDeviceSynchronize());
    Prepared p;
    p.replay_s = replay_s_ = target_replay_s;
    p.input_stats["buffer_bytes"] = static_cast<double>(spec.rest_bytes);
    p.input_stats["fill_byte"] = spec.fill_byte;
    return p;
  }

  Result<Prepared> prepare_toggle(const GemmSpec& spec, double target_replay_s) {
    if (auto st = init_context(); !st) return st.error();
    const int n = std::clamp(spec.toggle_bits, 0, 8);
    const auto mask = static_cast<uint8_t>(n == 8 ? 0xFF : (1u << n) - 1u);
    WATTLAB_CUDA_TRY(cudaMalloc(&res_.buffer, spec.rest_bytes));
    WATTLAB_CUDA_TRY(cudaMemsetAsync(res_.buffer, 0, spec.rest_bytes, stream_));
    auto pass = [&] { return detail::launch_xor_bytes(res_.buffer, spec.rest_bytes, mask, stream_); };
    if (auto st = pass(); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaEventRecord(ev0_, stream_));
    for (int i = 0; i < 4; ++i)
      if (auto st = pass(); !st) return st.error();
    WATTLAB_CUDA_TRY(cudaEventRecord(ev1_, stream_));
    auto t = elapsed_s();
    if (!t) return t.error();
    gemms_per_replay_ = std::clamp<int64_t>(std::llround(target_replay_s / std::max(*t / 4, 1e-7)), 1, kMaxGemmsPerReplay);
    auto st = capture([&]() -> Status {
      for (int64_t i = 0; i < gemms_per_replay_; ++i)
        if (auto s = pass(); !s) return s;
      return {};
    });
    if (!st) return st.error();
    auto replay = time_replay();
    if (!replay) return replay.error();
    Prepared p;
    p.gemms_per_replay = gemms_per_replay_;  // kernel passes, not GEMMs: the point reports no TFLOP/s
    p.replay_s = replay_s_ = *replay;
    p.input_stats["buffer_bytes"] = static_cast<double>(spec.rest_bytes);
    p.input_stats["toggle_mask"] = mask;
    return p;
  }

  Result<Prepared> prepare_idle(const GemmSpec& spec, double target_replay_s) {
    if (spec.hold_context) {
      if (auto st = init_context(); !st) return st.error();
    } else {
      release_context();
    }
    Prepared p;
    p.replay_s = replay_s_ = target_replay_s;
    p.input_stats["context_held"] = spec.hold_context ? 1 : 0;
    return p;
  }

  // Frees this process's CUDA context (cudaDeviceReset destroys the process's primary context;
  // the GPU itself is not reset). The next point creates a new one.
  void release_context() {
    if (!ready_) return;
    cudaStreamSynchronize(stream_);
    if (lt_) cublasLtDestroy(lt_);
    if (workspace_) cudaFree(workspace_);
    if (ev0_) cudaEventDestroy(ev0_);
    if (ev1_) cudaEventDestroy(ev1_);
    if (stream_) cudaStreamDestroy(stream_);
    lt_ = nullptr;
    workspace_ = nullptr;
    ev0_ = ev1_ = nullptr;
    stream_ = nullptr;
    ready_ = false;
    cudaDeviceReset();
  }

  template <class F>
  Status capture(F&& body) {
    WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream_));
    WATTLAB_CUDA_TRY(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    const Status inner = body();
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
    res_.graph = graph;
    if (!inner) return inner;
    if (end != cudaSuccess) return cuda_error(end, "cudaStreamEndCapture");
    WATTLAB_CUDA_TRY(cudaGraphInstantiate(&res_.graph_exec, res_.graph, 0));
    return {};
  }

  // One replay after one untimed replay (first launches upload the graph).
  Result<double> time_replay() {
    WATTLAB_CUDA_TRY(cudaGraphLaunch(res_.graph_exec, stream_));
    WATTLAB_CUDA_TRY(cudaEventRecord(ev0_, stream_));
    WATTLAB_CUDA_TRY(cudaGraphLaunch(res_.graph_exec, stream_));
    WATTLAB_CUDA_TRY(cudaEventRecord(ev1_, stream_));
    return elapsed_s();
  }

  Result<double> elapsed_s() {
    WATTLAB_CUDA_TRY(cudaEventSynchronize(ev1_));
    float ms = 0;
    WATTLAB_CUDA_TRY(cudaEventElapsedTime(&ms, ev0_, ev1_));
    return static_cast<double>(ms) * 1e-3;
  }

  CudaExecutorOptions opt_;
  std::unique_ptr<Meter> meter_;
  std::vector<DeviceProperties> devices_;
  std::string gpu_name_;
  bool ready_ = false;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  PointResources res_;
  GemmSpec spec_;
  Scalars scalars_;
  int64_t gemms_per_replay_ = 1;
  double replay_s_ = 0.075;
  std::chrono::steady_clock::time_point host_until_{};
};

}  // namespace

bool cuda_executor_available() { return true; }

Result<std::unique_ptr<GemmExecutor>> make_cuda_executor(const CudaExecutorOptions& opt) {
  int count = 0;
  if (auto e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    Error err = cuda_error(e, "cudaGetDeviceCount");
    err.hint = "no usable NVIDIA GPU or driver here; --device sim runs the SIMULATED executor";
    return err;
  }
  if (opt.cuda_device < 0 || opt.cuda_device >= count)
    return Error{ErrorKind::invalid_argument, fmt::format("CUDA device {} does not exist ({} visible)", opt.cuda_device, count),
                 "pick one of 0.." + std::to_string(count - 1)};
  cudaDeviceProp prop{};
  if (auto e = cudaGetDeviceProperties(&prop, opt.cuda_device); e != cudaSuccess)
    return cuda_error(e, "cudaGetDeviceProperties");

  BackendOptions b = opt.backend;
  if (b.device == "auto") b.device = "nvml";
  if (b.device != "nvml")
    return Error{ErrorKind::invalid_argument, fmt::format("the GPU executor measures with NVML, not '{}'", b.device),
                 "use --device nvml (or sim for the SIMULATED executor)"};
  // Measure exactly the GPU the GEMMs run on.
  if (b.gpus.empty()) b.gpus = {uuid_text(prop.uuid)};
  OpenedSensors s = open_sensors(b);
  if (s.sensors.empty()) {
    std::string why;
    for (const auto& st : s.statuses) why += (why.empty() ? "" : "; ") + st.backend + ": " + st.detail;
    return Error{ErrorKind::unavailable, "no NVML domain for the GEMM's GPU: " + why, "check `wattlab sensors`"};
  }
  std::vector<DeviceProperties> devices;
  for (const auto& sen : s.sensors) devices.push_back({sen->backend(), sen->properties()});
  auto meter = std::make_unique<Meter>(std::move(s.sensors), MonotonicClock::instance(), opt.meter);
  meter->start();
  if (!meter->wait_first_reads(std::chrono::seconds(10))) {
    meter->stop();
    return Error{ErrorKind::unavailable, "the meter got no first reading of every sensor within 10 s", ""};
  }
  auto exec = std::make_unique<CudaExecutor>(opt, std::move(meter), std::move(devices), prop.name);
  if (auto st = exec->init_context(); !st) return st.error();
  return std::unique_ptr<GemmExecutor>(std::move(exec));
}

}  // namespace wattlab::lab
