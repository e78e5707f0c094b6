#pragma once
// The entry function of a jiterator program: the last function in the user's code, read far
// enough to generate the kernel around it (its name, its template parameter, and what each
// parameter is). See Note [Reading the entry function].

#include <string>
#include <string_view>
#include <vector>

namespace cudakit::jiterator::detail {

struct EntryParameter {
  enum class Kind { input, scalar, output };
  Kind kind = Kind::input;
  std::string name;
  std::string type;  // as written, e.g. "T", "const T&", "float"
  int index = 0;     // among the parameters of its kind
};

struct EntryFunction {
  std::string name;
  std::string template_parameter;  // "T"
  bool returns_void = false;
  std::vector<EntryParameter> parameters;  // in declaration order
  int inputs = 0, scalars = 0, outputs = 0;
};

// Reads the last function defined in `code`. Parameters named in `scalar_names` are scalar
// parameters; `T&` parameters are outputs (for a void function of `expected_outputs` > 1
// outputs); the rest are inputs. outputs is 0 for a function that returns its one result.
// @throws InvalidArgumentError naming `api` and what is wrong (no function, not a template of one
//   type parameter, an input parameter not of type T, too many inputs, a wrong number of outputs,
//   a scalar name that is no parameter).
EntryFunction parse_entry_function(std::string_view code, int expected_outputs, const char* api,
                                   const std::vector<std::string>& scalar_names);

inline constexpr int kMaxInputs = 16;
inline constexpr int kMaxOutputs = 8;

}  // namespace cudakit::jiterator::detail
