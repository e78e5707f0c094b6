#include "jiterator/detail/entry_function.hpp"

#include <algorithm>
#include <cctype>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::detail::concat;

// Note [Reading the entry function]
// The kernel is generated around the last function of the user's code, so cudakit needs that
// function's name, template parameter and parameters — not a C++ parser. Comments, string and
// character literals are blanked first (same length, so positions stay), then the last
// top-level `{ ... }` preceded by `)` is the entry's body; its parameter list is the matching
// `( ... )`, its name the identifier before it, and the text since the previous top-level `;` or
// `}` its template header and return type. Anything the reading gets wrong is caught by NVRTC
// when the generated kernel calls the entry with the parameters read here.
std::string blank_comments_and_literals(std::string_view code) {
  std::string out(code);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      const std::size_t end = out.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? out.size() : end + 2;
      for (; i < stop; ++i) if (out[i] != '\n') out[i] = ' ';
      --i;
    } else if (out[i] == '"' || out[i] == '\'') {
      const char quote = out[i];
      out[i] = ' ';
      for (++i; i < out.size() && out[i] != quote; ++i) {
        if (out[i] == '\\' && i + 1 < out.size()) out[i++] = ' ';
        out[i] = ' ';
      }
      if (i < out.size()) out[i] = ' ';
    } else if (out[i] == '#') {
      // Preprocessor lines (#define, #pragma) hold no top-level braces of the entry.
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The identifier that ends at `end` (exclusive) in `s`, skipping spaces before it.
std::string_view identifier_before(std::string_view s, std::size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > 0 && is_identifier_char(s[begin - 1])) --begin;
  return s.substr(begin, end - begin);
}

// Splits at commas outside (), <>, [] and {}.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  const std::string_view last = trim(s.substr(start));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

// The words of a type, without cv-qualifiers: "const T &" -> {"T", "&"}.
std::string normalized_type(std::string_view type) {
  std::string out;
  std::size_t i = 0;
  while (i < type.size()) {
    if (std::isspace(static_cast<unsigned char>(type[i]))) { ++i; continue; }
    if (is_identifier_char(type[i])) {
      std::size_t j = i;
      while (j < type.size() && is_identifier_char(type[j])) ++j;
      const std::string_view word = type.substr(i, j - i);
      if (word != "const" && word != "volatile" && word != "__restrict__") {
        if (!out.empty()) out += ' ';
        out += word;
      }
      i = j;
    } else {
      out += type[i++];
    }
  }
  return out;
}

}  // namespace

EntryFunction parse_entry_function(std::string_view code, int expected_outputs, const char* api,
                                   const std::vector<std::string>& scalar_names) {
  const std::string text = blank_comments_and_literals(code);
  // The last top-level brace block whose opening brace follows `)`.
  std::size_t body = std::string::npos, decl_start = 0, last_boundary = 0;
  {
    int depth = 0;
    std::size_t open = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '{') {
        if (depth++ == 0) open = i;
      } else if (c == '}') {
        if (--depth == 0) {
          std::size_t k = open;
          while (k > 0 && std::isspace(static_cast<unsigned char>(text[k - 1]))) --k;
          if (k > 0 && text[k - 1] == ')') {
            body = open;
            decl_start = last_boundary;
          }
          last_boundary = i + 1;
        }
        if (depth < 0) break;
      } else if (c == ';' && depth == 0) {
        last_boundary = i + 1;
      }
    }
    if (depth != 0) {
      throw InvalidArgumentError(api, "the code's braces do not balance: is a '}' missing?");
    }
  }
  if (body == std::string::npos) {
    throw InvalidArgumentError(api, concat("no function found in the code: expected "
                                           "`template <typename T> T name(T a, ...) { ... }`, got:\n",
                                           code));
  }
  std::size_t close = body;
  while (text[close - 1] != ')') --close;
  --close;  // at ')'
  int depth = 0;
  std::size_t open = close;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (text[i] == ')') ++depth;
    else if (text[i] == '(' && --depth == 0) { open = i; break; }
  }
  if (depth != 0) throw InvalidArgumentError(api, "the entry function's parentheses do not balance");

  EntryFunction entry;
  entry.name = std::string(identifier_before(text, open));
  const std::string_view head = trim(std::string_view(text).substr(decl_start, open - decl_start));
  // head: "template <typename T> [__device__] [inline] T name"
  if (entry.name.empty() || head.substr(0, 8) != "template") {
    throw InvalidArgumentError(
        api, concat("the entry (the code's last function",
                    entry.name.empty() ? "" : concat(", `", entry.name, "`"),
                    ") must be a template of one type: `template <typename T> T ",
                    entry.name.empty() ? "name" : entry.name, "(T a, ...)`"));
  }
  const std::size_t lt = head.find('<'), gt = head.find('>');
  if (lt == std::string_view::npos || gt == std::string_view::npos || gt < lt) {
    throw InvalidArgumentError(api, concat("cannot read the template header of `", entry.name, "`"));
  }
  const std::vector<std::string_view> template_parameters = split_top_level(head.substr(lt + 1, gt - lt - 1));
  if (template_parameters.size() != 1) {
    throw InvalidArgumentError(api, concat("the entry `", entry.name, "` must have exactly one template "
                                           "parameter (the computation type), it has ",
                                           template_parameters.size()));
  }
  entry.template_parameter = std::string(identifier_before(template_parameters[0], template_parameters[0].size()));
  const std::string_view declarator = head.substr(gt + 1, head.size() - gt - 1 - entry.name.size());
  entry.returns_void = normalized_type(declarator).ends_with("void");
  const std::string& T = entry.template_parameter;

  for (std::string_view parameter : split_top_level(std::string_view(text).substr(open + 1, close - open - 1))) {
    if (parameter.empty() || parameter == "void") continue;
    if (parameter.find('=') != std::string_view::npos) {
      throw InvalidArgumentError(api, concat("parameter `", parameter, "` of `", entry.name,
                                             "` has a default in the code: give defaults in the "
                                             "defaults map instead"));
    }
    EntryParameter p;
    p.name = std::string(identifier_before(parameter, parameter.size()));
    p.type = std::string(trim(parameter.substr(0, parameter.size() - p.name.size())));
    if (p.name.empty() || p.type.empty()) {
      throw InvalidArgumentError(api, concat("cannot read parameter `", parameter, "` of `", entry.name,
                                             "`: write each as `type name`"));
    }
    const std::string type = normalized_type(p.type);
    const bool is_const = (" " + p.type + " ").find(" const ") != std::string::npos;
    if (std::find(scalar_names.begin(), scalar_names.end(), p.name) != scalar_names.end()) {
      p.kind = EntryParameter::Kind::scalar;
      p.index = entry.scalars++;
    } else if (type == T + "&" && !is_const) {
      p.kind = EntryParameter::Kind::output;
      p.index = entry.outputs++;
    } else if (type == T || type == T + "&") {
      p.kind = EntryParameter::Kind::input;
      p.index = entry.inputs++;
    } else {
      throw InvalidArgumentError(
          api, concat("parameter `", p.name, "` of `", entry.name, "` has type `", p.type,
                      "`: an input must be of type ", T, " (or `const ", T, "&`), an output `", T,
                      "&`, and a parameter of another type needs a default in the defaults map"));
    }
    entry.parameters.push_back(std::move(p));
  }
  for (const std::string& name : scalar_names) {
    const bool found = std::any_of(entry.parameters.begin(), entry.parameters.end(),
                                   [&](const EntryParameter& p) { return p.name == name; });
    if (!found) {
      std::string names;
      for (const EntryParameter& p : entry.parameters) names += concat(names.empty() ? "" : ", ", p.name);
      throw InvalidArgumentError(api, concat("the defaults name `", name, "`, which is no parameter of `",
                                             entry.name, "` (its parameters: ", names, ")"));
    }
  }
  if (entry.inputs == 0) {
    throw InvalidArgumentError(api, concat("`", entry.name, "` takes no input (a parameter of type ", T, ")"));
  }
  if (entry.inputs > kMaxInputs) {
    throw InvalidArgumentError(api, concat("`", entry.name, "` takes ", entry.inputs,
                                           " inputs; at most ", kMaxInputs, " are supported"));
  }
  if (expected_outputs == 1 && !entry.returns_void) {
    if (entry.outputs != 0) {
      throw InvalidArgumentError(api, concat("`", entry.name, "` returns a value and also has output "
                                             "parameters (", T, "&): use create_multi_output_jit_fn "
                                             "with a void function"));
    }
    entry.outputs = 0;  // the return value
  } else {
    if (!entry.returns_void) {
      throw InvalidArgumentError(api, concat("a function of ", expected_outputs, " outputs must return "
                                             "void and write them to ", T, "& parameters; `",
                                             entry.name, "` returns a value"));
    }
    if (entry.outputs != expected_outputs) {
      throw InvalidArgumentError(api, concat("`", entry.name, "` has ", entry.outputs, " output parameters (",
                                             T, "&), but ", expected_outputs, " outputs were asked for"));
    }
    if (entry.outputs > kMaxOutputs) {
      throw InvalidArgumentError(api, concat("at most ", kMaxOutputs, " outputs are supported"));
    }
  }
  return entry;
}

}  // namespace cudakit::jiterator::detail
