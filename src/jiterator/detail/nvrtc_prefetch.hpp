#pragma once
// Reading libnvrtc ahead of its first use (See Note [Reading NVRTC ahead]).

#include <cstddef>

namespace cudakit::jiterator::detail {

struct NvrtcPrefetch {
  double ms = 0;               // what the check and the read-ahead request cost the caller
  std::size_t bytes = 0;       // bytes asked to be read ahead (0: none needed or none found)
};

// Once per process, before NVRTC is first opened: where libnvrtc and its builtins are mostly
// absent from the page cache, asks the kernel to read them whole, in large sequential reads,
// rather than page by page as the loader and the first compile touch them. Later calls do
// nothing and return zeros. Never throws; CUDAKIT_JITERATOR_PREFETCH=0 turns it off.
NvrtcPrefetch prefetch_nvrtc() noexcept;

}  // namespace cudakit::jiterator::detail
