#pragma once
// JsonBuffer: appends JSON tokens to a string by hand. Trace export writes hundreds of
// thousands of events; building a DOM first costs several times the writing itself (see
// bench/profiler_bench.cpp), so the exporter writes text directly.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace cudakit::profiler::detail {

class JsonBuffer {
 public:
  explicit JsonBuffer(std::string& out) : out_(out) {}

  void raw(std::string_view text) { out_.append(text); }
  void raw(char c) { out_.push_back(c); }

  // A JSON string literal, escaped.
  void string(std::string_view text) {
    out_.push_back('"');
    std::size_t plain = 0;  // start of the run of characters that need no escape
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out_.append(text.data() + plain, i - plain);
      plain = i + 1;
      switch (c) {
        case '"': out_.append("\\\""); break;
        case '\\': out_.append("\\\\"); break;
        case '\n': out_.append("\\n"); break;
        case '\t': out_.append("\\t"); break;
        case '\r': out_.append("\\r"); break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
          out_.append(escaped, sizeof escaped);
        }
      }
    }
    out_.append(text.data() + plain, text.size() - plain);
    out_.push_back('"');
  }

  template <class Integer>
    requires std::is_integral_v<Integer>
  void number(Integer value) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    out_.append(digits, end);
  }

  // The shortest text that reads back as `value`, always with a '.' or exponent so that it
  // reads back as a floating-point number; null for NaN and infinities (JSON has neither).
  void number(double value) {
    if (!std::isfinite(value)) {
      out_.append("null");
      return;
    }
    char digits[32];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    const std::string_view text(digits, static_cast<std::size_t>(end - digits));
    out_.append(text);
    if (text.find_first_of(".eEn") == std::string_view::npos) out_.append(".0");
  }

  // Nanoseconds as microseconds with three decimals ("1234.567"): exact, unlike a double.
  void microseconds(std::uint64_t ns) {
    number(ns / 1000);
    const auto fraction = static_cast<unsigned>(ns % 1000);
    const char decimals[] = {'.', static_cast<char>('0' + fraction / 100),
                             static_cast<char>('0' + fraction / 10 % 10),
                             static_cast<char>('0' + fraction % 10)};
    out_.append(decimals, sizeof decimals);
  }

  // `"key":` — keys are written through string(), so any text is safe.
  void key(std::string_view name) {
    string(name);
    out_.push_back(':');
  }

 private:
  std::string& out_;
};

}  // namespace cudakit::profiler::detail
