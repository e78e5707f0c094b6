#pragma once
// @brief DynamicLibrary: an optional shared library loaded at run time (cuFile, CUPTI, NCCL where a
// feature must not make the build or the start depend on it). cudakit's own optional libraries
// are reached through their tables, built on it (See Note [Optional library tables] in
// cudakit/core/detail/library_table.hpp).

#include <initializer_list>
#include <span>
#include <string>

namespace cudakit {

class DynamicLibrary {
 public:
  // Tries each name in turn (e.g. {"libcufile.so.0", "libcufile.so"}); is_loaded() says whether
  // one succeeded. Never throws.
  explicit DynamicLibrary(std::initializer_list<const char*> names) noexcept;
  explicit DynamicLibrary(std::span<const char* const> names) noexcept;
  // Leaves the library loaded: See Note [Libraries stay loaded].
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;

  [[nodiscard]] bool is_loaded() const noexcept { return handle_ != nullptr; }
  // The name that loaded, or the last loader error when none did.
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  // A symbol's address, or nullptr.
  [[nodiscard]] void* symbol(const char* name) const noexcept;
  template <class Function>
  [[nodiscard]] Function function(const char* name) const noexcept {
    return reinterpret_cast<Function>(symbol(name));
  }

 private:
  void* handle_ = nullptr;
  std::string description_;
};

}  // namespace cudakit
