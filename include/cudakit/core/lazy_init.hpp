#pragma once
// @brief CUDA's initialization in this process (torch.cuda.init, torch.cuda.is_initialized).
//
// Like torch, cudakit initializes CUDA lazily: the first call that needs a device creates the
// current device's primary context (the runtime's per-device context, shared with every other
// runtime user of the process). These two let a program do it up front, or ask whether it is
// done, without doing it.

namespace cudakit {

// Initializes CUDA for the calling thread's current device: the runtime and the device's
// primary context. Does nothing when that is done. Thread-safe.
// @throws CudaError when no device is available (cudaErrorNoDevice) or the driver refuses.
void init();

// Whether CUDA's primary context is active on any visible device of this process (made by
// cudakit, by init(), or by the program's own CUDA calls). Never initializes anything, never
// throws: false without a device or driver, and false in a child forked from a process where
// cudakit saw CUDA initialized (CUDA cannot be used in such a child; torch answers false there
// too).
// @return true when a primary context is active on some visible device.
[[nodiscard]] bool is_initialized() noexcept;

}  // namespace cudakit
