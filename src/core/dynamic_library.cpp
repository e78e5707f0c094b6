#include "cudakit/core/dynamic_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace cudakit {

DynamicLibrary::DynamicLibrary(std::initializer_list<const char*> names) noexcept {
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

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), description_(std::move(other.description_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    description_ = std::move(other.description_);
  }
  return *this;
}

void* DynamicLibrary::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

}  // namespace cudakit
