#pragma once
// @brief torch.cuda.profiler: cudaProfilerStart / cudaProfilerStop, which tell an external profiler
// (Nsight Systems with --capture-range=cudaProfilerApi, Nsight Compute) where to record.
//
//   { cudakit::profiler::ProfileScope scope; train_step(); }   // torch.cuda.profiler.profile()
//
// In the profiler layer, not nvtx: it is torch.cuda.profiler's API, a CUDA runtime call of the
// profiler's family, and needs nothing of NVTX (ranges are nvtx's, capture windows are these).

namespace cudakit::profiler {

// cudaProfilerStart: an attached external profiler starts recording. Host-side; queues no work.
// @throws CudaError (no device, or the runtime refuses).
void start();
// cudaProfilerStop: an attached external profiler stops recording. It does not wait for queued
// work: synchronize first so that the work is inside the window.
// @throws CudaError (no device, or the runtime refuses).
void stop();

// start() for the scope's life; stop() at its end (a failure there is logged).
class [[nodiscard]] ProfileScope {
 public:
  // @throws CudaError as start() (no device, or the runtime refuses).
  ProfileScope();
  // stop(); a failure is logged, never thrown.
  ~ProfileScope();
  // Not copyable: the window is closed once.
  ProfileScope(const ProfileScope&) = delete;
  // Not copyable: the window is closed once.
  ProfileScope& operator=(const ProfileScope&) = delete;
};

}  // namespace cudakit::profiler
