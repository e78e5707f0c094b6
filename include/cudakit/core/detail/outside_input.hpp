#pragma once
// Reading input that comes from outside the program (files a user names, their contents): the
// limits every reader applies and the way their messages quote the input. See Note [Outside input]
// in src/core/outside_input.cpp.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::detail {

// The most bytes of the input a message quotes.
inline constexpr std::size_t kQuotedInputBytes = 200;
// The deepest nesting of arrays and objects a JSON reader accepts.
inline constexpr std::size_t kMaxJsonDepth = 256;

// `text` for a message: in single quotes, at most `max_bytes` of it, every byte that is not
// printable ASCII (NUL, newlines, quotes, UTF-8) escaped as \n, \t, \r, \\, \' or \xNN; a longer
// text ends in "... (N bytes)".
[[nodiscard]] std::string quote_input(std::string_view text, std::size_t max_bytes = kQuotedInputBytes);

// The 1-based line and column of byte `offset` of `text`.
struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;
};
[[nodiscard]] TextPosition position_of(std::string_view text, std::size_t offset);

// The most bytes a reader holds in memory at once: CUDAKIT_INPUT_MAX_BYTES (a count of bytes,
// read at each call), else 1 GiB. @throws InvalidArgumentError for a value that is no count.
[[nodiscard]] std::uint64_t input_size_limit();

// The whole text of `path`, refused when it holds more than `limit` bytes (a file's size is
// checked before reading; an endless stream stops at the limit) or a NUL byte (no text format
// cudakit reads has one; /dev/zero stops at its first byte).
// @throws InvalidArgumentError (api = `api`) "PATH: what is wrong"; FileError "cannot read PATH: reason".
[[nodiscard]] std::string read_input_file(const std::string& path, const char* api,
                                          std::uint64_t limit = input_size_limit());

// Refuses JSON text whose arrays and objects nest deeper than `max_depth` before a parser sees
// it, so that neither the parser nor a writer recursing over the parsed value goes deeper than
// that. Brackets inside strings do not count. Does not otherwise check the JSON.
// @throws InvalidArgumentError (api = `api`) "SOURCE:LINE: JSON nests deeper than N levels ...".
void check_json_depth(std::string_view text, std::string_view source, const char* api,
                      std::size_t max_depth = kMaxJsonDepth);

// "SOURCE:LINE:COLUMN: not valid JSON: REASON (at 'EXCERPT')" for a parser's error at byte
// `offset` of `text`, where `parser_message` is the parser's own text: its own quote of the input
// (nlohmann's "; last read: '...'", which can hold a whole long string) and its "[json....] "
// prefix are dropped.
[[nodiscard]] std::string json_error_message(std::string_view text, std::string_view source,
                                             std::size_t offset, std::string_view parser_message);

// Parses outside JSON text with `Json` (nlohmann::json; a template so that core needs no JSON
// library): the depth checked first, every parser error told by json_error_message, a number out
// of range (1e400) as "SOURCE: not valid JSON: ...".
// @throws InvalidArgumentError (api = `api`).
template <class Json>
[[nodiscard]] Json parse_outside_json(std::string_view text, std::string_view source, const char* api) {
  check_json_depth(text, source, api);
  try {
    return Json::parse(text);
  } catch (const typename Json::parse_error& e) {
    throw InvalidArgumentError(api, json_error_message(text, source, e.byte > 0 ? e.byte - 1 : 0, e.what()));
  } catch (const typename Json::exception& e) {
    std::string_view reason = e.what();
    if (const std::size_t close = reason.find("] "); reason.starts_with("[json.") && close != reason.npos)
      reason.remove_prefix(close + 2);
    // Its message quotes the token (a number of any length): cut to the quoting limit.
    const bool cut = reason.size() > kQuotedInputBytes;
    throw InvalidArgumentError(api, concat(source, ": not valid JSON: ", reason.substr(0, kQuotedInputBytes),
                                           cut ? "..." : ""));
  }
}

}  // namespace cudakit::detail
