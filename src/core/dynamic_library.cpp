#include "cudakit/core/dynamic_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace cudakit {

DynamicLibrary::DynamicLibrary(std::initializer_list<const char*> names) noexcept
    : DynamicLibrary(std::span<const char* const>(names.begin(), names.size())) {}

DynamicLibrary::DynamicLibrary(std::span<const char* const> names) noexcept {
  for (const char* name : names) {
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      description_ = name;
      return;
    }
    const char* error = dlerror();
    description_ = error ? error : name;
  }
}

// Note [Libraries stay loaded]
// dlclose is never called: NCCL, CUPTI and cuFile set up process-wide state when they load
// (threads, atexit handlers, driver registrations) and are not safe to unload; unloading also
// turns their one-time allocations into leaks of an "unknown module" that no sanitizer
// suppression can name. The loader keeps one reference per library however often it is opened.
DynamicLibrary::~DynamicLibrary() = default;

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), description_(std::move(other.description_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    handle_ = std::exchange(other.handle_, nullptr);
    description_ = std::move(other.description_);
  }
  return *this;
}

void* DynamicLibrary::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

}  // namespace cudakit
