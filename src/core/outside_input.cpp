#include "cudakit/core/detail/outside_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

// Note [Outside input]
// Every reader of a file a user names (the CLI's inputs, the library's loaders, the Python
// module's, which call the library's) follows the same rules, so that no file can crash a
// command, hang it or make it take memory without bound:
//  - a size limit or streaming: a text read whole is refused past input_size_limit() (checked
//    against a regular file's size before reading, and while reading for pipes and devices);
//    allocation traces, which can be of any size, are streamed in bounded memory instead;
//  - a NUL byte ends the read with an error: none of the text formats holds one;
//  - JSON is checked for its nesting depth before it is parsed, so that the parser and the
//    writers that recurse over a parsed value (nlohmann's dump) go at most kMaxJsonDepth deep;
//  - compressed input is read to its end and its checksum (a truncated file is an error);
//  - fields are counted exactly;
//  - a message names the file and line and quotes at most kQuotedInputBytes of the input,
//    escaped (quote_input), so that a 300 MB line or a NUL byte cannot swamp or cut it.
// The limits are in notes/hostile-input.md with the memory they were measured to take.

namespace cudakit::detail {
namespace {

constexpr std::uint64_t kDefaultInputLimit = std::uint64_t{1} << 30;

[[noreturn]] void refuse(const char* api, const std::string& path, std::string_view what) {
  throw InvalidArgumentError(api, concat(path, ": ", what));
}

}  // namespace

std::string quote_input(std::string_view text, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string_view shown = text.substr(0, max_bytes);
  std::string out = "'";
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default:
        if (byte >= 0x20 && byte < 0x7f) {
          out += c;
        } else {
          out += "\\x";
          out += kHex[byte >> 4];
          out += kHex[byte & 15];
        }
    }
  }
  out += "'";
  if (shown.size() < text.size()) out += concat("... (", text.size(), " bytes)");
  return out;
}

TextPosition position_of(std::string_view text, std::size_t offset) {
  TextPosition at;
  const std::string_view before = text.substr(0, std::min(offset, text.size()));
  at.line += static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t newline = before.rfind('\n');
  at.column = newline == std::string_view::npos ? before.size() + 1 : before.size() - newline;
  return at;
}

std::uint64_t input_size_limit() {
  const char* text = std::getenv("CUDAKIT_INPUT_MAX_BYTES");
  if (text == nullptr || *text == '\0') return kDefaultInputLimit;
  std::uint64_t limit = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, limit);
  if (error != std::errc() || stop != end || limit == 0) {
    throw InvalidArgumentError("CUDAKIT_INPUT_MAX_BYTES",
                               concat("takes a count of bytes from 1 up, not ", quote_input(text)));
  }
  return limit;
}

std::string read_input_file(const std::string& path, const char* api, std::uint64_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw FileError(error, api, concat("cannot read ", path, ": ", std::strerror(error)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse(api, path, "is a folder, not a file");
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limit) {
      refuse(api, path, concat("holds ", st.st_size, " bytes, more than the ", limit,
                               " this reader takes (CUDAKIT_INPUT_MAX_BYTES sets the limit)"));
    }
  }
  std::string text;
  if (S_ISREG(st.st_mode)) {
    text.reserve(static_cast<std::size_t>(st.st_size));
  } else {
    // A pipe's length is unknown: the limit is reserved as address space (a large allocation is
    // mapped, and untouched pages take no memory), so the text never moves and a stream takes
    // what it sent, not the two copies that growth by doubling holds at once.
    try {
      text.reserve(static_cast<std::size_t>(limit));
    } catch (const std::bad_alloc&) {  // `ulimit -v` below the limit: grow as it comes
    }
  }
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      throw FileError(error, api, concat("cannot read ", path, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    const std::string_view got(chunk, static_cast<std::size_t>(n));
    if (const std::size_t nul = got.find('\0'); nul != std::string_view::npos) {
      const std::size_t offset = text.size() + nul;
      text.append(got.substr(0, nul));
      const TextPosition at = position_of(text, offset);
      refuse(api, path, concat("line ", at.line, ": a NUL byte at byte ", offset,
                               " (not a text file; is it the right one?)"));
    }
    if (text.size() + got.size() > limit) {
      refuse(api, path, concat("holds more than the ", limit,
                               " bytes this reader takes (CUDAKIT_INPUT_MAX_BYTES sets the limit)"));
    }
    text.append(got);
  }
  return text;
}

void check_json_depth(std::string_view text, std::string_view source, const char* api,
                      std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        const TextPosition at = position_of(text, i);
        throw InvalidArgumentError(
            api, concat(source, ":", at.line, ": JSON nests deeper than ", max_depth,
                        " levels (byte ", i, ", column ", at.column, "); no file cudakit reads "
                        "nests that deep"));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

std::string json_error_message(std::string_view text, std::string_view source, std::size_t offset,
                               std::string_view parser_message) {
  std::string_view reason = parser_message;
  if (reason.starts_with("[json.exception.")) {
    if (const std::size_t close = reason.find("] "); close != std::string_view::npos)
      reason.remove_prefix(close + 2);
  }
  if (const std::size_t quoted = reason.find("; last read: "); quoted != std::string_view::npos)
    reason = reason.substr(0, quoted);
  // The parser's own "at line L, column C" repeats what the prefix says.
  if (reason.starts_with("parse error at line ")) {
    if (const std::size_t colon = reason.find(": "); colon != std::string_view::npos)
      reason.remove_prefix(colon + 2);
  }
  offset = std::min(offset, text.size());
  const TextPosition at = position_of(text, offset);
  // A little before the error and what follows it: the excerpt a reader needs to find the place.
  const std::size_t from = offset > 40 ? offset - 40 : 0;
  return concat(source, ":", at.line, ":", at.column, ": not valid JSON: ", reason, " (at ",
                quote_input(text.substr(from, 80), 80), ")");
}

}  // namespace cudakit::detail
