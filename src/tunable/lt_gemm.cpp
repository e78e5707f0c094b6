#include "tunable/detail/lt_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>

#include "cudakit/core/device.hpp"
#include "cudakit/tensor/cublas_error.hpp"
#include "cudakit/core/error.hpp"
#include "tunable/detail/check_kernels.hpp"
#include "tunable/detail/lt_types.hpp"

namespace cudakit::tunable::detail {

// Note [FP8 layouts]
// cuBLASLt's FP8 GEMMs on Hopper (sm_90) take only the "TN" layout: A transposed and B not, in
// cuBLAS's column-major terms, i.e. both operands K-major in memory (torch's _scaled_mm has the
// same rule: its second operand must be column-major). cuBLAS's documentation lists the other
// conditions: compute type CUBLAS_COMPUTE_32F and scale type CUDA_R_32F (lt_types), the Tensor
// Core Usage alignment (16-byte-aligned pointers; k, lda, ldb, and m and ldc in bytes of the
// output, multiples of 16), e4m3 x e4m3 or either mixed with e5m2 (not e5m2 x e5m2), and C of
// D's type for a bfloat16, float16 or float32 D (a float8 D would need a D scale and amax, which
// ScaledGemm does not carry). Keys are checked for all of it before any descriptor is made
// (GemmKey::validate), with an error naming the value and how to get there (transpose an
// operand in memory, or swap A and B and compute C^T), so an invalid request never reaches
// cuBLASLt. The scales are device pointers to one float each (per-tensor scaling): D = scale_a *
// scale_b * alpha * A B + beta C. They are part of the problem cuBLASLt plans for: the descriptor
// has scale pointers from the start (a device 1.0f until set_pointers gives the call's), so that
// the heuristic, cublasLtMatmulAlgoCheck and the call see the same scaled problem: a heuristic
// asked without them gave algorithms that cublasLtMatmul then refused for the scaled call
// (notes/figures.md, "TunableOp"). Fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM)
// stays off, as torch's _scaled_mm default: its partial sums are not promoted to float32 as often.

void check_cublaslt(cublasStatus_t status, const char* api, std::source_location location) {
  if (status != CUBLAS_STATUS_SUCCESS) throw CublasError(status, api, "cuBLASLt", location);
}

cublasLtHandle_t lt_handle() {
  // One handle per (thread, device), as the tensor layer keeps its cuBLAS handles; destroyed at
  // thread exit, failures then ignored (the runtime may be gone).
  struct Handles {
    std::unordered_map<int, cublasLtHandle_t> by_device;
    ~Handles() {
      for (auto& [device, h] : by_device) cublasLtDestroy(h);
    }
  };
  thread_local Handles handles;
  const int device = current_device();
  auto it = handles.by_device.find(device);
  if (it == handles.by_device.end()) {
    cublasLtHandle_t h = nullptr;
    check_cublaslt(cublasLtCreate(&h), "cublasLtCreate");
    it = handles.by_device.emplace(device, h).first;
  }
  return it->second;
}

namespace {

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  check_cublaslt(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)),
                 "cublasLtMatmulDescSetAttribute");
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                   std::int64_t batch, std::int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  check_cublaslt(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                            static_cast<std::uint64_t>(cols), ld),
                 "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const std::int32_t count = static_cast<std::int32_t>(batch);
    check_cublaslt(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                   "cublasLtMatrixLayoutSetAttribute");
    check_cublaslt(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                    sizeof(stride)),
                   "cublasLtMatrixLayoutSetAttribute");
  }
  return layout;
}

cublasLtEpilogue_t lt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::bias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::relu: return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::bias_relu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::gelu: return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::bias_gelu: return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilogue::none: break;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

std::int32_t lt_scale_mode(ScaleMode mode) {
  switch (mode) {
    case ScaleMode::outer_vec: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case ScaleMode::vec128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case ScaleMode::blk128x128: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    case ScaleMode::scalar: break;
  }
  return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

template <class T>
T get_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  check_cublaslt(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written),
                 "cublasLtMatmulAlgoConfigGetAttribute");
  return value;
}

template <class T>
void set_config(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute, T value) {
  check_cublaslt(cublasLtMatmulAlgoConfigSetAttribute(&algo, attribute, &value, sizeof(value)),
                 "cublasLtMatmulAlgoConfigSetAttribute");
}

LtAlgoConfig config_of(const cublasLtMatmulAlgo_t& algo) {
  LtAlgoConfig c;
  c.algo_id = get_config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID);
  c.tile = static_cast<int>(get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID));
  c.stages = static_cast<int>(get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID));
  c.splitk = get_config<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  c.reduction = static_cast<int>(get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME));
  c.swizzle = static_cast<int>(get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING));
  c.custom = static_cast<int>(get_config<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION));
  c.inner_shape = get_config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  c.cluster_shape = get_config<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return c;
}

// A capability that is an array of uint32 (tile or stage ids); {0} (undefined: the algorithm
// picks) when it has none.
std::vector<std::uint32_t> cap_ids(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attribute) {
  std::size_t bytes = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attribute, nullptr, 0, &bytes) != CUBLAS_STATUS_SUCCESS ||
      bytes == 0) {
    return {0};
  }
  std::vector<std::uint32_t> ids(bytes / sizeof(std::uint32_t));
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attribute, ids.data(), bytes, &bytes) != CUBLAS_STATUS_SUCCESS ||
      ids.empty()) {
    return {0};
  }
  return ids;
}

template <class T>
T cap_value(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attribute) {
  T value{};
  std::size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, attribute, &value, sizeof(value), &written) != CUBLAS_STATUS_SUCCESS) {
    return T{};
  }
  return value;
}

bool init_algo(const LtDescriptors& d, int id, cublasLtMatmulAlgo_t& algo) {
  const LtTypes t = lt_types(d.key());
  return cublasLtMatmulAlgoInit(lt_handle(), t.compute, t.scale, t.a, t.b, t.c, t.c, id, &algo) ==
         CUBLAS_STATUS_SUCCESS;
}

// cublasLtMatmulAlgoCheck; the workspace the algorithm needs and its waves, or nullopt.
std::optional<cublasLtMatmulHeuristicResult_t> check_algo(const LtDescriptors& d, const cublasLtMatmulAlgo_t& algo) {
  cublasLtMatmulHeuristicResult_t result{};
  if (cublasLtMatmulAlgoCheck(lt_handle(), d.op, d.a, d.b, d.c, d.c, &algo, &result) != CUBLAS_STATUS_SUCCESS) {
    return std::nullopt;
  }
  if (result.workspaceSize > d.key().workspace_bytes) return std::nullopt;
  return result;
}

}  // namespace

LtDescriptors::LtDescriptors(const GemmKey& key) : key_(key) {
  const LtTypes t = lt_types(key);
  try {
    check_cublaslt(cublasLtMatmulDescCreate(&op, t.compute, t.scale), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = key.transa == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = key.transb == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
    set_desc(op, CUBLASLT_MATMUL_DESC_TRANSA, ta);
    set_desc(op, CUBLASLT_MATMUL_DESC_TRANSB, tb);
    if (key.op == GemmOp::scaled_gemm) {
      // See Note [FP8 layouts]: the scaled problem from the start.
      scale_a_ = scale_b_ = device_unit_scale();
      set_desc(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(scale_a_));
      set_desc(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(scale_b_));
      // See Note [FP8 scale modes] in gemm_key.cpp. Scalar is cuBLASLt's default: left unset.
      if (key.scale_a_mode != ScaleMode::scalar || key.scale_b_mode != ScaleMode::scalar) {
        set_desc(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, lt_scale_mode(key.scale_a_mode));
        set_desc(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, lt_scale_mode(key.scale_b_mode));
      }
    }
    if (key.epilogue != Epilogue::none) {
      set_desc(op, CUBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue(key.epilogue));
      if (has_bias(key.epilogue)) set_desc(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, t.c);
    }
    const std::int64_t a_rows = key.transa == 'n' ? key.m : key.k, a_cols = key.transa == 'n' ? key.k : key.m;
    const std::int64_t b_rows = key.transb == 'n' ? key.k : key.n, b_cols = key.transb == 'n' ? key.n : key.k;
    a = make_layout(t.a, a_rows, a_cols, key.lda, key.batch, key.stride_a);
    b = make_layout(t.b, b_rows, b_cols, key.ldb, key.batch, key.stride_b);
    c = make_layout(t.c, key.m, key.n, key.ldc, key.batch, key.stride_c);
  } catch (...) {
    release();
    throw;
  }
}

LtDescriptors::~LtDescriptors() { release(); }

void LtDescriptors::release() noexcept {
  if (a) cublasLtMatrixLayoutDestroy(a);
  if (b) cublasLtMatrixLayoutDestroy(b);
  if (c) cublasLtMatrixLayoutDestroy(c);
  if (op) cublasLtMatmulDescDestroy(op);
  a = b = c = nullptr;
  op = nullptr;
}

void LtDescriptors::set_pointers(const void* bias, const float* scale_a, const float* scale_b) {
  // Only on change: a cached descriptor called with the same buffers costs no attribute calls.
  if (has_bias(key_.epilogue) && bias != bias_) {
    set_desc(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    bias_ = bias;
  }
  if (key_.op == GemmOp::scaled_gemm) {
    if (scale_a != scale_a_) {
      set_desc(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(scale_a));
      scale_a_ = scale_a;
    }
    if (scale_b != scale_b_) {
      set_desc(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(scale_b));
      scale_b_ = scale_b;
    }
  }
}

// Note [Alignment preferences]
// cuBLASLt's heuristic is told the operands' smallest alignment (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*,
// 256 bytes when not set) and leaves out every algorithm that needs more. torch's cuBLASLt calls tell
// it each pointer's own alignment up to 256 (bgemm_internal_cublaslt, gemm_and_bias) or nothing,
// i.e. 256 (scaled_gemm); cudakit's key capped the class at 16, so for the same 256-byte-aligned
// operands the heuristic ranked a smaller set of kernels. The key's class now goes up to 256
// (alignment_class), and a solution found for it is only reused for pointers at least as aligned:
// the class is part of the key.
std::vector<LtAlgo> heuristic_algos(const LtDescriptors& d, int count, std::optional<std::size_t> workspace_limit) {
  cublasLtMatmulPreference_t preference = nullptr;
  check_cublaslt(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
  int returned = 0;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const auto set_preference = [&](cublasLtMatmulPreferenceAttributes_t attribute, const auto& value) {
    if (status == CUBLAS_STATUS_SUCCESS) {
      status = cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof(value));
    }
  };
  const std::uint64_t workspace = std::min(d.key().workspace_bytes, workspace_limit.value_or(d.key().workspace_bytes));
  const std::uint32_t alignment = static_cast<std::uint32_t>(d.key().alignment);
  set_preference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspace);
  set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment);
  set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment);
  set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment);
  set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment);
  if (status == CUBLAS_STATUS_SUCCESS) {
    status = cublasLtMatmulAlgoGetHeuristic(lt_handle(), d.op, d.a, d.b, d.c, d.c, preference, count,
                                            results.data(), &returned);
  }
  cublasLtMatmulPreferenceDestroy(preference);
  // NOT_SUPPORTED: no algorithm for this problem (the caller falls back to Default).
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return {};
  check_cublaslt(status, "cublasLtMatmulAlgoGetHeuristic");
  std::vector<LtAlgo> algos;
  for (int i = 0; i < returned; ++i) {
    if (results[static_cast<std::size_t>(i)].state != CUBLAS_STATUS_SUCCESS) continue;
    const cublasLtMatmulHeuristicResult_t& r = results[static_cast<std::size_t>(i)];
    algos.push_back({r.algo, r.workspaceSize, config_of(r.algo)});
  }
  return algos;
}

// Note [Enumerating algorithms]
// cuBLASLt's heuristic ranks a few dozen configurations by a model; the fastest on the device is
// often one it ranks low or leaves out (split-K for tall-skinny shapes, another swizzle for
// large ones). Beyond it, every algorithm id the types allow (cublasLtMatmulAlgoGetIds) is
// combined with the tiles and stages its capabilities list, split-K factors 1-16 where it
// supports split-K (with the reduction schemes its mask allows), and both swizzles where it
// supports swizzling. That space has thousands of points, so it is sampled in a fixed
// pseudo-random order (the same in every process) up to 4096 cublasLtMatmulAlgoCheck calls
// (tens of ms); the configurations that pass are ranked by how evenly their thread blocks fill
// the GPU (waves / ceil(waves) from the check), and the best max_count are timed.
std::vector<LtAlgo> enumerated_algos(const LtDescriptors& d, const std::vector<LtAlgoConfig>& known, int max_count) {
  if (max_count <= 0) return {};
  const LtTypes t = lt_types(d.key());
  std::vector<int> ids(256);
  int returned = 0;
  if (cublasLtMatmulAlgoGetIds(lt_handle(), t.compute, t.scale, t.a, t.b, t.c, t.c, static_cast<int>(ids.size()),
                               ids.data(), &returned) != CUBLAS_STATUS_SUCCESS) {
    return {};
  }
  ids.resize(static_cast<std::size_t>(returned));
  struct Point {
    int id;
    std::uint32_t tile, stages;
    int splitk;
    std::uint32_t reduction, swizzle;
  };
  std::vector<Point> points;
  for (const int id : ids) {
    cublasLtMatmulAlgo_t algo;
    if (!init_algo(d, id, algo)) continue;
    const std::vector<std::uint32_t> tiles = cap_ids(algo, CUBLASLT_ALGO_CAP_TILE_IDS);
    const std::vector<std::uint32_t> stages = cap_ids(algo, CUBLASLT_ALGO_CAP_STAGES_IDS);
    const bool splitk = cap_value<std::int32_t>(algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) != 0;
    const std::uint32_t reductions = cap_value<std::uint32_t>(algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    const bool swizzle = cap_value<std::uint32_t>(algo, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) != 0;
    for (const std::uint32_t tile : tiles) {
      for (const std::uint32_t stage : stages) {
        for (int s = 0; s <= (swizzle ? 1 : 0); ++s) {
          points.push_back({id, tile, stage, 1, CUBLASLT_REDUCTION_SCHEME_NONE, static_cast<std::uint32_t>(s)});
          if (!splitk) continue;
          for (const int factor : {2, 4, 8, 16}) {
            if (d.key().k < factor * 256) break;  // each part at least 256 deep
            for (const std::uint32_t scheme : {CUBLASLT_REDUCTION_SCHEME_INPLACE, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
                                               CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE}) {
              if (reductions & scheme) points.push_back({id, tile, stage, factor, scheme, static_cast<std::uint32_t>(s)});
            }
          }
        }
      }
    }
  }
  std::mt19937 order(0x7475);  // fixed: every process samples the same configurations
  std::shuffle(points.begin(), points.end(), order);
  constexpr std::size_t kMaxChecks = 4096;
  struct Found {
    LtAlgo algo;
    double evenness;
  };
  std::vector<Found> found;
  for (std::size_t i = 0; i < points.size() && i < kMaxChecks; ++i) {
    const Point& p = points[i];
    cublasLtMatmulAlgo_t algo;
    if (!init_algo(d, p.id, algo)) continue;
    if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &p.tile, sizeof(p.tile)) ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &p.stages, sizeof(p.stages)) ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &p.splitk, sizeof(p.splitk)) ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &p.reduction,
                                             sizeof(p.reduction)) ||
        cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &p.swizzle, sizeof(p.swizzle))) {
      continue;
    }
    const std::optional<cublasLtMatmulHeuristicResult_t> result = check_algo(d, algo);
    if (!result) continue;
    LtAlgo a{algo, result->workspaceSize, config_of(algo)};
    if (std::find(known.begin(), known.end(), a.config) != known.end()) continue;
    const bool duplicate = std::any_of(found.begin(), found.end(), [&](const Found& f) { return f.algo.config == a.config; });
    if (duplicate) continue;
    const double waves = std::max(static_cast<double>(result->wavesCount), 1e-3);
    found.push_back({a, waves / std::ceil(waves)});
  }
  std::stable_sort(found.begin(), found.end(), [](const Found& x, const Found& y) { return x.evenness > y.evenness; });
  std::vector<LtAlgo> algos;
  for (std::size_t i = 0; i < found.size() && static_cast<int>(i) < max_count; ++i) algos.push_back(found[i].algo);
  return algos;
}

// Note [Neighbours of the heuristic's choices]
// The heuristic returns each kernel with the cluster shape and swizzle its model prefers; on
// Hopper the thread-block cluster decides how many blocks share a multicast load of A or B, and
// the model's choice is not always the fastest on the device (torch's square bfloat16 GEMMs run a
// 256x128 tile with a 1x2 cluster that the heuristic may rank below the same tile with another
// cluster). Those configurations are offered neither by the heuristic's list nor by the
// enumeration (which leaves the cluster to the algorithm), so the first seeds' neighbours are
// tried: each other cluster shape of up to four CTAs along one or both axes, and the other
// swizzle. cublasLtMatmulAlgoCheck keeps those that run here, in seed order.
std::vector<LtAlgo> neighbour_algos(const LtDescriptors& d, const std::vector<LtAlgoConfig>& seeds,
                                    const std::vector<LtAlgoConfig>& known, int max_count) {
  constexpr std::size_t kSeeds = 8;
  constexpr std::uint16_t kClusters[] = {CUBLASLT_CLUSTER_SHAPE_1x1x1, CUBLASLT_CLUSTER_SHAPE_1x2x1,
                                         CUBLASLT_CLUSTER_SHAPE_2x1x1, CUBLASLT_CLUSTER_SHAPE_2x2x1,
                                         CUBLASLT_CLUSTER_SHAPE_1x4x1, CUBLASLT_CLUSTER_SHAPE_4x1x1};
  std::vector<LtAlgo> found;
  std::vector<LtAlgoConfig> tried = known;
  const auto try_config = [&](const LtAlgoConfig& c) {
    if (static_cast<int>(found.size()) >= max_count) return;
    if (std::find(tried.begin(), tried.end(), c) != tried.end()) return;
    tried.push_back(c);
    if (std::optional<LtAlgo> algo = algo_from_config(d, c)) found.push_back(*algo);
  };
  for (std::size_t i = 0; i < seeds.size() && i < kSeeds; ++i) {
    for (const std::uint16_t cluster : kClusters) {
      LtAlgoConfig c = seeds[i];
      c.cluster_shape = cluster;
      try_config(c);
    }
    LtAlgoConfig swizzled = seeds[i];
    swizzled.swizzle = seeds[i].swizzle == 0 ? 1 : 0;
    try_config(swizzled);
  }
  return found;
}

std::optional<LtAlgo> algo_from_config(const LtDescriptors& d, const LtAlgoConfig& config) {
  cublasLtMatmulAlgo_t algo;
  if (!init_algo(d, config.algo_id, algo)) return std::nullopt;
  try {
    set_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, static_cast<std::uint32_t>(config.tile));
    set_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, static_cast<std::uint32_t>(config.stages));
    set_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, static_cast<std::int32_t>(config.splitk));
    set_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, static_cast<std::uint32_t>(config.reduction));
    set_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, static_cast<std::uint32_t>(config.swizzle));
    set_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, static_cast<std::uint32_t>(config.custom));
    set_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, static_cast<std::uint16_t>(config.inner_shape));
    set_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, static_cast<std::uint16_t>(config.cluster_shape));
  } catch (const CublasError&) {
    return std::nullopt;  // a value this cuBLASLt does not know
  }
  const std::optional<cublasLtMatmulHeuristicResult_t> result = check_algo(d, algo);
  if (!result) return std::nullopt;
  return LtAlgo{algo, result->workspaceSize, config};
}

void lt_matmul(const LtDescriptors& d, const LtAlgo* algo, const void* a, const void* b, void* c, double alpha,
               double beta, void* workspace, std::size_t workspace_bytes, StreamRef stream) {
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const bool is_double = d.key().a_type == GemmDType::float64;
  const void* alpha_p = is_double ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = is_double ? static_cast<const void*>(&beta) : &beta_f;
  check_cublaslt(cublasLtMatmul(lt_handle(), d.op, alpha_p, a, d.a, b, d.b, beta_p, c, d.c, c, d.c,
                                algo ? &algo->algo : nullptr, workspace, workspace_bytes, stream.handle()),
                 "cublasLtMatmul");
}

}  // namespace cudakit::tunable::detail
