#pragma once
// @brief torch.cuda.profiler: cudaProfilerStart / cudaProfilerStop, which tell an external profiler
// (Nsight Systems with --capture-range=cudaProfilerApi, Nsight Compute) where to record.
//
//   { cudakit::profiler::ProfileScope scope; train_step(); }   // torch.cuda.profiler.profile()
//
// In the profiler layer, not nvtx: it is torch.cuda.profiler's API, a CUDA runtime call of the
// profiler's family, and needs nothing of NVTX (ranges are nvtx's, capture windows are these).

namespace cudakit::profiler {

// cudaProfilerStart. @throws CudaError (no device, or the runtime refuses).
void start();
// cudaProfilerStop. @throws CudaError.
void stop();

// start() for the scope's life; stop() at its end (a failure there is logged).
class [[nodiscard]] ProfileScope {
 public:
  // @throws as start().
  ProfileScope();
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;
};

}  // namespace cudakit::profiler
