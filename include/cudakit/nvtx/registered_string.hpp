#pragma once
// @brief RegisteredString: a name registered once with the cudakit domain
// (nvtxDomainRegisterStringA), so a hot range passes a handle instead of a string the tool would
// copy or hash at every call.
//
//   static const cudakit::nvtx::RegisteredString kStep("train.step");
//   cudakit::nvtx::ScopedRange range(kStep);

#include "cudakit/nvtx/domain.hpp"

namespace cudakit::nvtx {

// A name registered once with the cudakit NVTX domain, for ranges that are opened often. Immutable,
// so safe to share between threads.
class RegisteredString {
 public:
  // `text` must outlive the object (a literal, typically): the trace hooks report it by pointer.
  // @param text the name.
  explicit RegisteredString(const char* text) noexcept
      : text_(text), handle_(nvtxDomainRegisterStringA(domain(), text)) {}

  // @return the name, as given.
  [[nodiscard]] const char* text() const noexcept { return text_; }
  // Null where no tool is attached (the stub registers nothing); ranges then pass the text.
  // @return NVTX's handle of the string, or null.
  [[nodiscard]] nvtxStringHandle_t handle() const noexcept { return handle_; }

 private:
  const char* text_;
  nvtxStringHandle_t handle_;
};

}  // namespace cudakit::nvtx
