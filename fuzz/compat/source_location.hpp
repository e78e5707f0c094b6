#pragma once
// std::source_location for the fuzz build's clang 14, force-included (-include) into every file
// that build compiles. libstdc++ 12's <source_location> defines the class only when the compiler
// has __builtin_source_location, which clang gained in version 15; error.hpp names it in every
// error's constructor. With a compiler that has it, this header only includes the real one.
//
// current() is constexpr, not consteval as the standard's: clang 14 refuses a consteval function
// as a default argument ("cannot take address of consteval function"), the way error.hpp uses it.
// The builtins in its default arguments still name the caller's line, as the standard's does.

#include <source_location>

#if !defined(__cpp_lib_source_location)
#include <cstdint>

namespace std {

struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           uint_least32_t line = __builtin_LINE(),
                                           uint_least32_t column = __builtin_COLUMN()) noexcept {
    source_location location;
    location.file_ = file;
    location.function_ = function;
    location.line_ = line;
    location.column_ = column;
    return location;
  }
  constexpr source_location() noexcept = default;
  constexpr uint_least32_t line() const noexcept { return line_; }
  constexpr uint_least32_t column() const noexcept { return column_; }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  uint_least32_t line_ = 0;
  uint_least32_t column_ = 0;
};

}  // namespace std
#endif
