#pragma once
// @brief DynamicLibrary: an optional shared library loaded at run time (cuFile, CUPTI, NCCL where a
// feature must not make the build or the start depend on it). cudakit's own optional libraries
// are reached through their tables, built on it (See Note [Optional library tables] in
// cudakit/core/detail/library_table.hpp).

#include <initializer_list>
#include <span>
#include <string>

namespace cudakit {

// A shared library opened with dlopen, owned and move-only; a library that could not be loaded is
// an empty object, not an error (is_loaded(), description()). Loading and symbol lookups are
// thread-safe, as dlopen and dlsym are.
class DynamicLibrary {
 public:
  // Tries each name in turn (e.g. {"libcufile.so.0", "libcufile.so"}); is_loaded() says whether
  // one succeeded. Never throws.
  // @param names the file names to try, in order (looked up as dlopen does).
  explicit DynamicLibrary(std::initializer_list<const char*> names) noexcept;
  // The same, from a span of names. Never throws.
  // @param names the file names to try, in order (looked up as dlopen does).
  explicit DynamicLibrary(std::span<const char* const> names) noexcept;
  // Leaves the library loaded: See Note [Libraries stay loaded].
  ~DynamicLibrary();
  // Not copyable: a DynamicLibrary has one owner.
  DynamicLibrary(const DynamicLibrary&) = delete;
  // Not copyable: a DynamicLibrary has one owner.
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  // @param other the library to take; it is left unloaded (is_loaded() false).
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  // @param other the library to take; it is left unloaded (is_loaded() false).
  // @return this object.
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;

  // @return true when one of the names was loaded.
  [[nodiscard]] bool is_loaded() const noexcept { return handle_ != nullptr; }
  // The name that loaded, or the last loader error when none did.
  // @return the loaded name, or the loader's last error message.
  [[nodiscard]] const std::string& description() const noexcept { return description_; }
  // A symbol's address (dlsym); nullptr when it is absent or no library is loaded.
  // @param name the symbol's name.
  // @return its address, or nullptr.
  [[nodiscard]] void* symbol(const char* name) const noexcept;
  // A function's address, as the pointer type the caller names.
  // @tparam Function the function pointer type, e.g. `CUptiResult (*)(uint32_t*)`.
  // @param name the function's symbol name.
  // @return the function, or nullptr when absent.
  template <class Function>
  [[nodiscard]] Function function(const char* name) const noexcept {
    return reinterpret_cast<Function>(symbol(name));
  }

 private:
  void* handle_ = nullptr;
  std::string description_;
};

}  // namespace cudakit
