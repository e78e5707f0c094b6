// The jiterator. On any machine (no GPU needed): the host work of a cached call before its launch
// (the plan: checks, promotion, key, parameters; and the function table's lookup), and of a
// first call with the disk cache warm before the module load (generating the source, reading
// and verifying the entry). On the GPU: cold first call (split into NVRTC's load, compile and
// cubin, and the module load with the launch), first call in a new process with the disk cache
// warm (children of this process, with their parts), host time of a cached call beside a bare
// cuLaunchKernel of the same kernel, bandwidth of axpy, broadcast, strided and mixed-dtype cases
// and of a sum of squares, beside a device-to-device copy in the same run.
// Prints one JSON line per figure: {"bench":"jiterator","impl":"cudakit","case":...,"value":...,"unit":...}.
// bench/torch_jiterator_bench.py prints the same cases for torch's jiterator, torch's own ops
// and CuPy; bench/jiterator_table.py joins them.
//
//   jiterator_bench                     everything (uses a fresh kernel cache under /tmp)
//   jiterator_bench --host              the host part only
//   jiterator_bench --child DIR         (internal) one disk-warm first call over cache DIR
//   jiterator_bench --cold-child DIR    (internal) one cold first call over a fresh cache DIR
//
// Note [What a cold first call measures]
// A new process's first call of a kernel no cache knows: NVRTC opened, the kernel compiled and
// loaded, the launch. What it does not measure is reading libnvrtc (109 MB with its builtins)
// from the disk: that happens once per boot of the machine, for the first program to use NVRTC,
// and costs what the disk costs (a tenth of a second on a fresh lent machine: notes/jiterator.md).
// So the cold figure is the median of three fresh processes after a first one, whose figures are
// printed apart with "_first_process" appended; the peers (bench/torch_jiterator_bench.py) are
// measured the same way.

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cudakit/core/detail/graph_launcher.hpp"
#include "cudakit/jiterator/detail/nvrtc_api.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/jit_reduction.hpp"
#include "cudakit/tensor/factories.hpp"
#include "jiterator/detail/kernel_store.hpp"
#include "jiterator/detail/programs.hpp"
#include "support/timing.hpp"

namespace {

namespace jit = cudakit::jiterator;
namespace ten = cudakit::tensor;
using Clock = std::chrono::steady_clock;
using ten::DType;
using ten::Tensor;

const ten::Device kCuda{ten::Device::Type::cuda, 0};
constexpr const char* kAxpy = "template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }";
constexpr const char* kDiskAxpy = "template <typename T> T axpy_disk(T x, T y, T alpha) { return alpha * x + y; }";

void emit(const char* name, double value, const char* unit, const char* impl = "cudakit") {
  std::printf("{\"bench\":\"jiterator\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":%.6g,\"unit\":\"%s\"}\n", impl, name,
              value, unit);
  std::fflush(stdout);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Milliseconds per call of f() on the default stream: CUDA events around `calls` back-to-back
// calls, median of 15 samples after 3 untimed ones.
template <class F>
double gpu_ms(int calls, F&& f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> samples;
  for (int s = 0; s < 15; ++s) {
    cudaEventRecord(start, nullptr);
    for (int i = 0; i < calls; ++i) f();
    cudaEventRecord(stop, nullptr);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    samples.push_back(ms / calls);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return cudakit::bench::median(samples);
}

// Device 0's architecture as NVRTC names it (90 for sm_90), asked of the runtime here rather than
// through the jiterator, whose own lookup a child's timed first call should still make.
int device0_arch() {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major * 10 + minor;
}

// What a disk-warm child process starts from (CUDAKIT_KERNEL_CACHE_PATH set first): its operands,
// made and finished before anything is timed, and the function, not yet called.
struct DiskWarmChild {
  Tensor x = ten::ones({1 << 20}, {.device = kCuda});
  Tensor y = ten::ones({1 << 20}, {.device = kCuda});
  Tensor out = ten::empty({1 << 20}, {.device = kCuda});
  cudaError_t synchronized = cudaDeviceSynchronize();
  jit::JitFunction fn = jit::create_jit_fn(kDiskAxpy, {{"alpha", 2.0f}});
};

// The disk-warm first call taken apart in a new process of its own: the source generated first
// (cold), then compile() (the source again, warm, and the entry's read and check, cold), then the
// call, which is left with the module's load, the dispatch and the launch. Their sum against the
// single first call of child() says what the parts cost when each is the first of its kind.
int split_child(const char* dir) {
  ::setenv("CUDAKIT_KERNEL_CACHE_PATH", dir, 1);
  const DiskWarmChild c;
  const Tensor &x = c.x, &y = c.y, &out = c.out;
  const jit::JitFunction& fn = c.fn;
  const int arch = device0_arch();
  const jit::KernelVariant variant = fn.variant_for({x, y}, {.out = {out}});
  auto start = Clock::now();
  const std::string source = fn.generated_source(variant);
  emit("disk_warm_split_source_cold_ms_one", ms_since(start), "ms");
  start = Clock::now();
  (void)fn.compile(variant, arch);
  emit("disk_warm_split_compile_cold_ms_one", ms_since(start), "ms");
  start = Clock::now();
  (void)fn.call({x, y}, {.out = {out}});
  emit("disk_warm_split_call_after_compile_ms_one", ms_since(start), "ms");
  cudaDeviceSynchronize();
  return static_cast<int>(source.empty());
}

int child(const char* dir) {
  ::setenv("CUDAKIT_KERNEL_CACHE_PATH", dir, 1);
  const DiskWarmChild c;
  const Tensor &x = c.x, &y = c.y, &out = c.out;
  const jit::JitFunction& fn = c.fn;
  const auto start = Clock::now();
  (void)fn.call({x, y}, {.out = {out}});
  const double call_ms = ms_since(start);
  cudaDeviceSynchronize();
  const double ms = ms_since(start);
  emit("disk_warm_first_call_ms_one", ms, "ms");
  // The call's host time and the wait for its kernel; then the same for a second call (warm).
  emit("disk_warm_part_call_host_ms_one", call_ms, "ms");
  emit("disk_warm_part_sync_ms_one", ms - call_ms, "ms");
  const auto again = Clock::now();
  (void)fn.call({x, y}, {.out = {out}});
  const double again_call_ms = ms_since(again);
  cudaDeviceSynchronize();
  emit("disk_warm_second_call_host_ms_one", again_call_ms, "ms");
  emit("disk_warm_second_call_sync_ms_one", ms_since(again) - again_call_ms, "ms");
  // The parts: the entry's read and verification and the module's load as the call measured them
  // (compile() finds the module in memory now and reports how it was produced), generating the
  // source (again: warm caches, so a lower bound), and the rest (launch, synchronization, key).
  const jit::KernelVariant variant = fn.variant_for({x, y}, {.out = {out}});
  const auto source_start = Clock::now();
  const std::string source = fn.generated_source(variant);
  const double source_ms = ms_since(source_start);
  const int arch = device0_arch();
  const jit::CompiledKernelInfo info = fn.compile(variant, arch);
  emit("disk_warm_part_read_verify_ms_one", info.disk_ms, "ms");
  emit("disk_warm_part_module_load_ms_one", info.load_ms, "ms");
  emit("disk_warm_part_source_ms_one", source_ms, "ms");
  emit("disk_warm_part_rest_ms_one", ms - info.disk_ms - info.load_ms - source_ms, "ms");
  // The same cubin loaded once more through the module API instead of the library API (a second
  // load: both warm), so that the two can be compared on this driver.
  const auto module = jit::detail::global_kernel_store().get(source, arch);
  const auto& driver = cudakit::detail::driver();
  auto load_start = Clock::now();
  CUmodule cu_module = nullptr;
  CUfunction cu_function = nullptr;
  if (driver.cuModuleLoadData != nullptr && driver.cuModuleLoadData(&cu_module, module->cubin().data()) == CUDA_SUCCESS &&
      driver.cuModuleGetFunction(&cu_function, cu_module, jit::detail::kElementwiseKernel) == CUDA_SUCCESS) {
    if (driver.cuFuncLoad != nullptr) (void)driver.cuFuncLoad(cu_function);
    emit("disk_warm_again_module_api_load_ms_one", ms_since(load_start), "ms");
  }
  load_start = Clock::now();
  CUlibrary library = nullptr;
  CUkernel kernel = nullptr;
  if (driver.cuLibraryLoadData(&library, module->cubin().data(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS &&
      driver.cuLibraryGetKernel(&kernel, library, jit::detail::kElementwiseKernel) == CUDA_SUCCESS &&
      driver.cuKernelGetFunction(&cu_function, kernel) == CUDA_SUCCESS) {
    if (driver.cuFuncLoad != nullptr) (void)driver.cuFuncLoad(cu_function);
    emit("disk_warm_again_library_api_load_ms_one", ms_since(load_start), "ms");
    // The first launch of that freshly loaded function, then a second: what a first call pays
    // for launching beyond a cached call (the vectorized path's parameters, as the call's).
    void* out_p = out.data_ptr();
    const void* x_p = x.data_ptr();
    const void* y_p = y.data_ptr();
    float alpha = 2.0f;
    unsigned n = 1u << 20;
    void* parameters[] = {&out_p, &x_p, &y_p, &alpha, &n};
    const unsigned grid = (n / 4 + 127) / 128;
    for (const char* which : {"disk_warm_again_first_launch_ms_one", "disk_warm_again_second_launch_ms_one"}) {
      const auto launch_start = Clock::now();
      (void)driver.cuLaunchKernel(cu_function, grid, 1, 1, 128, 1, 1, 0, nullptr, parameters, nullptr);
      emit(which, ms_since(launch_start), "ms");
      cudaDeviceSynchronize();
    }
  }
  return 0;
}

// Nanoseconds per call of f(): the median of 200 samples of 1000 back-to-back calls.
template <class F>
double host_ns(F&& f) {
  std::vector<double> samples;
  for (int s = 0; s < 200; ++s) {
    const auto start = Clock::now();
    for (int i = 0; i < 1000; ++i) f();
    samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / 1000);
  }
  return cudakit::bench::median(samples);
}

// The host part (Note [The hot path of a call] in src/jiterator/programs.cpp): what a cached call
// does before its launch, on host tensors (the plan needs no device; call() adds the devices'
// check, the current stream, the outputs' allocation when none are given, and the launch), and
// what a disk-warm first call does before its module load, with a store of its own per sample.
void host_part() {
  const jit::detail::ElementwiseProgram program(kAxpy, 1, {{"alpha", 2.0f}});
  const Tensor x = ten::ones({1024}), y = ten::ones({1024}), out = ten::empty({1024});
  const jit::JitArgument arguments[] = {x, y};
  const jit::JitCallOptions with_out{.out = {out}};
  const jit::JitCallOptions allocating{};
  emit("dispatch_plan_out_given_ns", host_ns([&] {
         jit::detail::ElementwisePlan plan;
         program.plan(arguments, with_out, plan);
         asm volatile("" : : "r"(plan.parameters.data()) : "memory");
       }), "ns");
  emit("dispatch_plan_allocating_ns", host_ns([&] {
         jit::detail::ElementwisePlan plan;
         program.plan(arguments, allocating, plan);
         asm volatile("" : : "r"(plan.parameters.data()) : "memory");
       }), "ns");
  const Tensor m = ten::ones({64, 32}), row = ten::ones({32});
  const jit::JitArgument broadcast[] = {m, row};
  emit("dispatch_plan_broadcast_ns", host_ns([&] {
         jit::detail::ElementwisePlan plan;
         program.plan(broadcast, allocating, plan);
         asm volatile("" : : "r"(plan.parameters.data()) : "memory");
       }), "ns");
  // The function table as a call meets it: its function found by the last-hit entry (the
  // function is a stand-in; nothing is launched).
  jit::detail::FunctionTable table;
  jit::detail::ElementwisePlan plan;
  program.plan(arguments, with_out, plan);
  (void)table.get(plan.key, [] { return reinterpret_cast<CUfunction>(std::uintptr_t{1}); });
  emit("dispatch_function_lookup_ns", host_ns([&] {
         const CUfunction f = table.get(plan.key, [] { return CUfunction{}; });
         asm volatile("" : : "r"(f) : "memory");
       }), "ns");

  // Disk-warm first call before the module load: the source, then a fresh store's disk hit.
  const std::string source = program.source(program.variant_of(plan));
  emit("disk_warm_source_us", host_ns([&] {
         const std::string s = program.source(program.variant_of(plan));
         asm volatile("" : : "r"(s.data()) : "memory");
       }) / 1000, "us");
  if (!cudakit::detail::nvrtc_api().status.loaded) {
    std::printf("no NVRTC: the disk-hit figure is skipped\n");
    return;
  }
  const std::filesystem::path dir = "/tmp/cudakit_jiterator_host_bench_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  const auto folder = [&]() -> std::optional<std::filesystem::path> { return dir; };
  constexpr int kArch = 90;
  (void)jit::detail::KernelStore(folder).get(source, kArch);  // compiles and writes the entry
  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) {
    jit::detail::KernelStore store(folder);
    samples.push_back(cudakit::bench::elapsed_us([&] { (void)store.get(source, kArch); }));
  }
  emit("disk_warm_read_verify_us", cudakit::bench::median(samples), "us");
  std::filesystem::remove_all(dir);
}

// The cold first call in a new process of its own (a fresh kernel cache DIR): NVRTC not yet
// loaded in the process, then a second kernel's first call with it loaded. See Note [What a
// cold first call measures].
int cold_child(const char* dir) {
  ::setenv("CUDAKIT_KERNEL_CACHE_PATH", dir, 1);
  const int arch = device0_arch();
  const Tensor small_x = ten::ones({1 << 20}, {.device = kCuda}), small_y = ten::ones({1 << 20}, {.device = kCuda});
  Tensor small_out = ten::empty({1 << 20}, {.device = kCuda});
  cudaDeviceSynchronize();
  // fn's first call, finished, in ms; and how its kernel was produced, as compile() reports it.
  const auto first_call = [&](const jit::JitFunction& fn) {
    const auto start = Clock::now();
    (void)fn.call({small_x, small_y}, {.out = {small_out}});
    cudaDeviceSynchronize();
    const double ms = ms_since(start);
    return std::pair{ms, fn.compile(fn.variant_for({small_x, small_y}, {.out = {small_out}}), arch)};
  };
  const auto [total, info] = first_call(jit::create_jit_fn(kAxpy, {{"alpha", 2.0f}}));
  emit("cold_first_call_ms_one", total, "ms");
  emit("cold_nvrtc_compile_ms_one", info.compile_ms, "ms");
  emit("cold_nvrtc_cubin_ms_one", info.cubin_ms, "ms");
  emit("cold_disk_write_ms_one", info.disk_ms, "ms");
  emit("cold_nvrtc_open_ms_one", info.nvrtc_open_ms, "ms");  // with its read-ahead (Note [Reading NVRTC ahead])
  emit("cold_nvrtc_read_ahead_mb_one", static_cast<double>(info.nvrtc_read_ahead_bytes) / 1e6, "MB");
  emit("cold_module_load_ms_one", info.load_ms, "ms");
  emit("cold_rest_ms_one", total - info.compile_ms - info.cubin_ms - info.disk_ms, "ms");  // NVRTC's load, module load, launch
  const auto [warm_nvrtc, info2] = first_call(jit::create_jit_fn(
      "template <typename T> T axpy2(T x, T y, T alpha) { return alpha * x + y; }", {{"alpha", 2.0f}}));
  emit("cold_first_call_nvrtc_loaded_ms_one", warm_nvrtc, "ms");
  emit("cold_nvrtc_loaded_compile_ms_one", info2.compile_ms, "ms");
  emit("cold_nvrtc_loaded_load_launch_ms_one", warm_nvrtc - info2.compile_ms - info2.cubin_ms - info2.disk_ms, "ms");
  std::filesystem::remove_all(dir);
  return 0;
}

// Runs `command` and gathers the figures of its JSON lines by case, "_one" taken off the names.
void gather_child(const std::string& command, std::map<std::string, std::vector<double>>& samples) {
  FILE* pipe = ::popen(command.c_str(), "r");
  char line[512];
  while (pipe && std::fgets(line, sizeof line, pipe)) {
    const std::string s(line);
    const auto name_at = s.find("\"case\":\"");
    const auto value_at = s.find("\"value\":");
    if (name_at == std::string::npos || value_at == std::string::npos) continue;
    const auto name_end = s.find('"', name_at + 8);
    std::string name = s.substr(name_at + 8, name_end - name_at - 8);
    if (name.ends_with("_one")) name.resize(name.size() - 4);
    samples[name].push_back(std::atof(s.c_str() + value_at + 8));
  }
  if (pipe) ::pclose(pipe);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--child") return child(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--split-child") return split_child(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--cold-child") return cold_child(argv[2]);
  // The host part compiles a kernel: run first, it would open and warm NVRTC before the cold
  // figures (an early run's "cold" figure was such a warm compile). So it runs last here.
  if (argc == 2 && std::string(argv[1]) == "--host") {
    host_part();
    return 0;
  }
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: GPU benchmarks skipped\n");
    host_part();
    return 0;
  }
  const int arch = device0_arch();  // the compile() figures are those of the call's kernel
  // A fresh disk cache: the cold figures must compile.
  const std::string dir = "/tmp/cudakit_jiterator_bench_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  ::setenv("CUDAKIT_KERNEL_CACHE_PATH", dir.c_str(), 1);
  const Tensor small_x = ten::ones({1 << 20}, {.device = kCuda}), small_y = ten::ones({1 << 20}, {.device = kCuda});
  Tensor small_out = ten::empty({1 << 20}, {.device = kCuda});
  cudaDeviceSynchronize();

  // --- cold first call, each in a new process with a fresh cache (Note [What a cold first call measures]) ---
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  {
    std::map<std::string, std::vector<double>> first, rest;
    for (int i = 0; i < 4; ++i) {
      const std::string cold_dir = dir + "_cold" + std::to_string(i);
      gather_child("'" + self + "' --cold-child '" + cold_dir + "'", i == 0 ? first : rest);
    }
    for (const auto& [name, values] : first) emit((name + "_first_process").c_str(), values.front(), "ms");
    for (const auto& [name, values] : rest) emit(name.c_str(), cudakit::bench::median(values), "ms");
  }
  // --- disk-warm first call, each in a new process ---
  {
    const jit::JitFunction fn = jit::create_jit_fn(kDiskAxpy, {{"alpha", 2.0f}});
    (void)fn.call({small_x, small_y}, {.out = {small_out}});  // fills the disk cache
    cudaDeviceSynchronize();
    // Each child's figures by case ("..._one"); the medians over the children without the suffix.
    std::map<std::string, std::vector<double>> samples;
    for (int i = 0; i < 18; ++i) {
      // The whole first call and its parts apart, in alternating processes.
      const std::string command = "'" + self + (i % 2 == 0 ? "' --child '" : "' --split-child '") + dir + "'";
      gather_child(command, samples);
    }
    for (const auto& [name, values] : samples) emit(name.c_str(), cudakit::bench::median(values), "ms");
  }
  // --- cached call, host time ---
  {
    const jit::JitFunction fn = jit::create_jit_fn(kAxpy, {{"alpha", 2.0f}});
    const Tensor x = ten::ones({1024}, {.device = kCuda}), y = ten::ones({1024}, {.device = kCuda});
    Tensor out = ten::empty({1024}, {.device = kCuda});
    const jit::JitCallOptions with_out{.out = {out}};
    (void)fn.call({x, y}, with_out);
    std::vector<double> given, allocating;
    for (int batch = 0; batch < 200; ++batch) {
      cudaDeviceSynchronize();
      given.push_back(cudakit::bench::elapsed_us([&] {
                        for (int i = 0; i < 50; ++i) (void)fn.call({x, y}, with_out);
                      }) / 50);
      cudaDeviceSynchronize();
      allocating.push_back(cudakit::bench::elapsed_us([&] {
                             for (int i = 0; i < 50; ++i) (void)fn(x, y);
                           }) / 50);
    }
    // cuLaunchKernel of the same kernel with the same parameters, timed alike: what the call would
    // cost launched that way (it goes through a graph: Note [Launching through a one-node graph]).
    const jit::KernelVariant variant = fn.variant_for({x, y}, with_out);
    if (variant.access != jit::OperandAccess::vectorized) std::fprintf(stderr, "the raw launch below assumes the vectorized path\n");
    const auto module = jit::detail::global_kernel_store().get(fn.generated_source(variant), arch);
    const CUfunction function = module->function(0, jit::detail::kElementwiseKernel);
    void* out_p = out.data_ptr();
    const void* x_p = x.data_ptr();
    const void* y_p = y.data_ptr();
    float alpha = 2.0f;
    unsigned n = 1024;
    void* parameters[] = {&out_p, &x_p, &y_p, &alpha, &n};
    const unsigned grid = (1024 / 4 + 127) / 128;  // the vectorized path: 4 floats a thread
    const auto& driver = cudakit::detail::driver();
    std::vector<double> raw;
    for (int batch = 0; batch < 200; ++batch) {
      cudaDeviceSynchronize();
      raw.push_back(cudakit::bench::elapsed_us([&] {
                      for (int i = 0; i < 50; ++i) driver.cuLaunchKernel(function, grid, 1, 1, 128, 1, 1, 0, nullptr, parameters, nullptr);
                    }) / 50);
    }
    cudaDeviceSynchronize();
    emit("cached_call_host_us", cudakit::bench::median(allocating), "us");
    emit("cached_call_out_given_host_us", cudakit::bench::median(given), "us");
    emit("raw_cuLaunchKernel_same_kernel_host_us", cudakit::bench::median(raw), "us");
    // Note [Launching through a one-node graph]: how the calls above were queued.
    const auto counters = cudakit::detail::graph_launch_counters();
    emit("cached_calls_through_graph", static_cast<double>(counters.launches), "launches");
    emit("cached_calls_declined_graph", static_cast<double>(counters.declined), "launches");
    // The same on a stream of its own (non-blocking): the legacy default stream may cost the
    // driver more per launch (its implicit ordering with the other blocking streams).
    const cudakit::Stream own(0);
    const jit::JitCallOptions on_own{.out = {out}, .stream = own.ref()};
    std::vector<double> own_given, own_raw;
    for (int batch = 0; batch < 200; ++batch) {
      cudaStreamSynchronize(own.handle());
      own_given.push_back(cudakit::bench::elapsed_us([&] {
                            for (int i = 0; i < 50; ++i) (void)fn.call({x, y}, on_own);
                          }) / 50);
      cudaStreamSynchronize(own.handle());
      own_raw.push_back(cudakit::bench::elapsed_us([&] {
                          for (int i = 0; i < 50; ++i) {
                            driver.cuLaunchKernel(function, grid, 1, 1, 128, 1, 1, 0, reinterpret_cast<CUstream>(own.handle()),
                                                  parameters, nullptr);
                          }
                        }) / 50);
    }
    cudaStreamSynchronize(own.handle());
    emit("cached_call_out_given_own_stream_host_us", cudakit::bench::median(own_given), "us");
    emit("raw_cuLaunchKernel_own_stream_host_us", cudakit::bench::median(own_raw), "us");
  }
  // --- bandwidth: copy, axpy, broadcast, strided, mixed dtypes, sum of squares ---
  {
    const std::int64_t n = std::int64_t{1} << 28;
    const Tensor x = ten::ones({n}, {.device = kCuda}), y = ten::ones({n}, {.device = kCuda});
    Tensor out = ten::empty({n}, {.device = kCuda});
    const double bytes = static_cast<double>(n) * 4;
    const double copy_ms = gpu_ms(10, [&] { cudaMemcpyAsync(out.data_ptr(), x.data_ptr(), bytes, cudaMemcpyDeviceToDevice, nullptr); });
    const double copy_gbps = 2 * bytes / copy_ms / 1e6;
    emit("copy_2^28_float32_GBps", copy_gbps, "GB/s");
    const jit::JitFunction axpy = jit::create_jit_fn(kAxpy, {{"alpha", 2.0f}});
    const jit::JitCallOptions into_out{.out = {out}};
    const double axpy_ms = gpu_ms(10, [&] { (void)axpy.call({x, y}, into_out); });
    emit("axpy_2^28_float32_GBps", 3 * bytes / axpy_ms / 1e6, "GB/s");
    emit("axpy_2^28_float32_of_copy", 3 * bytes / axpy_ms / 1e6 / copy_gbps, "ratio");

    const jit::JitFunction add = jit::create_jit_fn("template <typename T> T add(T a, T b) { return a + b; }");
    const Tensor m = x.view({16384, 16384}), row = ten::ones({16384}, {.device = kCuda});
    Tensor mout = out.view({16384, 16384});
    const jit::JitCallOptions into_m{.out = {mout}};
    double ms = gpu_ms(10, [&] { (void)add.call({m, row}, into_m); });
    emit("broadcast_add_16384x16384_GBps", 2 * bytes / ms / 1e6, "GB/s");
    ms = gpu_ms(10, [&] { (void)add.call({m.t(), m}, into_m); });
    emit("transposed_add_16384x16384_GBps", 3 * bytes / ms / 1e6, "GB/s");
    const Tensor h = ten::ones({n}, {.dtype = DType::float16, .device = kCuda});
    ms = gpu_ms(10, [&] { (void)add.call({h, y}, into_out); });
    emit("mixed_half_float_add_2^28_GBps", (2 + 4 + 4) * static_cast<double>(n) / ms / 1e6, "GB/s");

    const jit::JitReduction ssq = jit::create_jit_reduction("template <typename T> T square(T x) { return x * x; }",
                                                            "template <typename T> T add(T a, T b) { return a + b; }", "0");
    ms = gpu_ms(10, [&] { (void)ssq(x); });
    emit("sum_of_squares_2^28_float32_GBps", bytes / ms / 1e6, "GB/s");
    emit("sum_of_squares_2^28_float32_of_copy", bytes / ms / 1e6 / copy_gbps, "ratio");
    const double check = ssq(x).item();
    if (std::abs(check - static_cast<double>(n)) > 1e-3 * n) std::fprintf(stderr, "sum of squares of ones is %.0f, expected %lld\n", check, static_cast<long long>(n));
  }
  // --- axpy and the copy against size (2^16 to 2^28 float32), for the performance report's plot ---
  {
    const jit::JitFunction axpy = jit::create_jit_fn(kAxpy, {{"alpha", 2.0f}});
    for (int log2n = 16; log2n <= 28; log2n += 2) {
      const std::int64_t n = std::int64_t{1} << log2n;
      const Tensor x = ten::ones({n}, {.device = kCuda}), y = ten::ones({n}, {.device = kCuda});
      Tensor out = ten::empty({n}, {.device = kCuda});
      const double bytes = static_cast<double>(n) * 4;
      const jit::JitCallOptions into_out{.out = {out}};
      const double axpy_ms = gpu_ms(20, [&] { (void)axpy.call({x, y}, into_out); });
      const double copy_ms = gpu_ms(20, [&] {
        cudaMemcpyAsync(out.data_ptr(), x.data_ptr(), bytes, cudaMemcpyDeviceToDevice, nullptr);
      });
      for (const auto& [which, gbps] : {std::pair{"axpy_sweep_GBps", 3 * bytes / axpy_ms / 1e6},
                                        std::pair{"copy_sweep_GBps", 2 * bytes / copy_ms / 1e6}}) {
        std::printf("{\"bench\":\"jiterator\",\"impl\":\"cudakit\",\"case\":\"%s\",\"elements\":%lld,"
                    "\"value\":%.6g,\"unit\":\"GB/s\"}\n",
                    which, static_cast<long long>(n), gbps);
      }
    }
  }
  std::filesystem::remove_all(dir);
  host_part();
  return 0;
}
