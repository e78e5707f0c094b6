#include "cudakit/memory/alloc_trace.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"

// Note [Reading traces]
// A trace can be longer than memory (a server's day), so it is read a batch at a time and never
// whole: the reader holds one chunk of input (64 KiB), at most one line of kMaxLineBytes, the
// batch, and its renumbering of ids and streams. Ids are renumbered into slots that are reused
// once freed, so the map holds the allocations live at once, which the replay holds anyway;
// streams are few (at most kMaxStreams). A gzip file (told by its first two bytes, whatever its
// name) is inflated here rather than through gzread, which takes a stream cut short (its header
// alone, or cut after a flush, without its trailer) for an end and ignores bytes after the
// last member: every member must end with its checksum, and what follows one must be another,
// so a truncated or appended-to file is an error naming it, never a partial replay. The header decides the field count (4, or 5 with `thread`),
// and every line must have exactly that many.

namespace cudakit::memory {
namespace {

constexpr const char* kApi = "parse_alloc_trace";
constexpr std::size_t kChunkBytes = 1 << 16;
constexpr std::string_view kHeader4 = "op,id,size,stream";
constexpr std::string_view kHeader5 = "op,id,size,stream,thread";

template <class T>
bool parse_number(std::string_view field, T& out) {
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return !field.empty() && ec == std::errc() && end == field.data() + field.size();
}

}  // namespace

struct AllocTraceReader::State {
  std::string name;
  // A file's bytes as read, and the inflater when they are gzip.
  int fd = -1;
  std::string raw;
  std::size_t raw_pos = 0;
  bool compressed = false;
  bool member_ended = false;
  z_stream z{};
  bool inflating = false;
  std::string_view text;  // the in-memory source, consumed from the front
  std::string buffer;
  std::size_t pos = 0;
  bool at_end = false;
  std::uint64_t line = 0;
  int columns = 4;
  std::unordered_map<std::uint64_t, std::uint32_t> slot_of_id;  // live ids only
  std::vector<std::uint64_t> slot_size;
  std::vector<std::uint32_t> free_slots;
  std::unordered_map<std::string, std::uint32_t> stream_index;
  std::vector<std::string> stream_names;
  std::uint64_t current = 0;
  std::uint64_t peak = 0;
  std::uint64_t ops = 0;
  std::vector<std::uint64_t> lines;  // of the last batch

  ~State() {
    if (inflating) inflateEnd(&z);
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(std::string_view what) const {
    throw InvalidArgumentError(kApi, detail::concat(name, ":", line, ": ", what));
  }
  [[noreturn]] void fail(std::string_view what, std::string_view text_of_line) const {
    fail(detail::concat(what, " (line: ", detail::quote_input(text_of_line), ")"));
  }

  // Appends the next bytes of the file to `raw`; false at its end.
  bool read_raw() {
    if (raw_pos > 0) {
      raw.erase(0, raw_pos);
      raw_pos = 0;
    }
    char chunk[kChunkBytes];
    for (;;) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int error = errno;
        throw FileError(error, kApi, detail::concat("cannot read ", name, ": ", std::strerror(error)));
      }
      raw.append(chunk, static_cast<std::size_t>(n));
      return n > 0;
    }
  }

  [[noreturn]] void truncated() const {
    throw InvalidArgumentError(kApi, detail::concat(name, ": the compressed data ends early (a truncated gzip file, "
                                                          "cut after line ", line, "); nothing of it was replayed"));
  }

  // Appends the next chunk of input to the buffer; false at the end of the input.
  bool fill() {
    if (fd < 0) {
      if (text.empty()) return false;
      const std::size_t n = std::min(text.size(), kChunkBytes);
      buffer.append(text.substr(0, n));
      text.remove_prefix(n);
      return true;
    }
    if (!compressed) {
      if (raw_pos == raw.size() && !read_raw()) return false;
      buffer.append(raw, raw_pos);
      raw_pos = raw.size();
      return true;
    }
    char out[kChunkBytes];
    for (;;) {
      if (member_ended) {
        // Only another member may follow one: two bytes decide.
        while (raw.size() - raw_pos < 2 && read_raw()) {
        }
        if (raw_pos == raw.size()) return false;
        if (raw.size() - raw_pos < 2 || raw[raw_pos] != '\x1f' || raw[raw_pos + 1] != '\x8b') {
          throw InvalidArgumentError(
              kApi, detail::concat(name, ": ", raw.size() - raw_pos, "+ bytes follow the compressed data (",
                                   detail::quote_input(std::string_view(raw).substr(raw_pos, 16)),
                                   "...): not a gzip file as written, or one with something appended"));
        }
        inflateReset(&z);
        member_ended = false;
      }
      if (raw_pos == raw.size() && !read_raw()) truncated();
      z.next_in = reinterpret_cast<Bytef*>(raw.data() + raw_pos);
      z.avail_in = static_cast<uInt>(raw.size() - raw_pos);
      z.next_out = reinterpret_cast<Bytef*>(out);
      z.avail_out = sizeof out;
      const int status = inflate(&z, Z_NO_FLUSH);
      raw_pos = raw.size() - z.avail_in;
      const std::size_t produced = sizeof out - z.avail_out;
      if (status == Z_STREAM_END) {
        member_ended = true;
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        throw InvalidArgumentError(kApi, detail::concat(name, ": cannot read: ", z.msg != nullptr ? z.msg : "corrupt gzip data",
                                                        " (a damaged gzip file)"));
      }
      if (produced > 0) {
        buffer.append(out, produced);
        return true;
      }
    }
  }

  // The next line without its end, or false at the end of the input.
  bool next_line(std::string_view& out) {
    for (;;) {
      const std::size_t newline = buffer.find('\n', pos);
      const std::size_t length = (newline == std::string::npos ? buffer.size() : newline) - pos;
      if (length > kMaxLineBytes) {
        ++line;
        fail(detail::concat("the line is longer than ", kMaxLineBytes, " bytes, which no trace line is (it starts ",
                            detail::quote_input(std::string_view(buffer).substr(pos, detail::kQuotedInputBytes)),
                            ")"));
      }
      if (newline != std::string::npos || (at_end && pos < buffer.size())) {
        out = std::string_view(buffer).substr(pos, length);
        pos += length + (newline != std::string::npos ? 1 : 0);
        ++line;
        return true;
      }
      if (at_end) return false;
      buffer.erase(0, pos);
      pos = 0;
      at_end = !fill();
    }
  }

  std::uint32_t stream_of(std::string_view name_of_stream, std::string_view text_of_line) {
    if (name_of_stream.empty()) fail("the stream is empty", text_of_line);
    const auto it = stream_index.find(std::string(name_of_stream));
    if (it != stream_index.end()) return it->second;
    if (stream_names.size() >= kMaxStreams)
      fail(detail::concat("more than ", kMaxStreams, " distinct streams"), text_of_line);
    const auto index = static_cast<std::uint32_t>(stream_names.size());
    stream_index.emplace(name_of_stream, index);
    stream_names.emplace_back(name_of_stream);
    return index;
  }

  // Parses one non-empty line that is no header into `op`.
  void parse(std::string_view text_of_line, AllocTraceOp& op) {
    if (text_of_line.find('\0') != std::string_view::npos)
      fail("the line holds a NUL byte (not a text trace)", text_of_line);
    std::string_view fields[5];
    const auto found = static_cast<std::size_t>(std::count(text_of_line.begin(), text_of_line.end(), ',')) + 1;
    if (found != static_cast<std::size_t>(columns)) {
      fail(detail::concat("expected ", columns, " comma-separated fields (",
                          columns == 5 ? kHeader5 : kHeader4, "), found ", found),
           text_of_line);
    }
    std::size_t start = 0;
    for (int f = 0; f < columns; ++f) {
      const std::size_t comma = f + 1 < columns ? text_of_line.find(',', start) : text_of_line.size();
      fields[f] = text_of_line.substr(start, comma - start);
      start = comma + 1;
    }
    if (fields[0] != "a" && fields[0] != "f") fail("op must be 'a' or 'f'", text_of_line);
    std::uint64_t id = 0, size = 0;
    if (!parse_number(fields[1], id)) fail("id is not a non-negative integer", text_of_line);
    if (!parse_number(fields[2], size)) fail("size is not a non-negative integer", text_of_line);
    op = AllocTraceOp{};
    if (columns == 5 && !parse_number(fields[4], op.thread))
      fail("thread is not a non-negative integer", text_of_line);
    op.is_alloc = fields[0] == "a";
    op.stream = stream_of(fields[3], text_of_line);
    if (op.is_alloc) {
      if (slot_of_id.contains(id)) fail("allocation of an id that is still live", text_of_line);
      if (size > std::numeric_limits<std::uint64_t>::max() - current)
        fail("the live sizes add up to more than 2^64 bytes", text_of_line);
      if (free_slots.empty()) {
        if (slot_size.size() > std::numeric_limits<std::uint32_t>::max())
          fail("more than 2^32 allocations live at once", text_of_line);
        free_slots.push_back(static_cast<std::uint32_t>(slot_size.size()));
        slot_size.push_back(0);
      }
      op.slot = free_slots.back();
      free_slots.pop_back();
      slot_of_id.emplace(id, op.slot);
      slot_size[op.slot] = size;
      op.size = size;
      current += size;
      peak = std::max(peak, current);
    } else {
      const auto it = slot_of_id.find(id);
      if (it == slot_of_id.end()) fail("free of an id that is not live", text_of_line);
      op.slot = it->second;
      op.size = slot_size[op.slot];
      slot_of_id.erase(it);
      free_slots.push_back(op.slot);
      current -= op.size;
    }
  }
};

AllocTraceReader::AllocTraceReader(const std::string& path) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.name = path;
  s.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) {
    const int error = errno;
    throw FileError(error, kApi, detail::concat("cannot read ", path, ": ", std::strerror(error)));
  }
  // gzip's magic bytes decide, not the name: a plain trace named .gz is read as it is.
  while (s.raw.size() < 2 && s.read_raw()) {
  }
  s.compressed = s.raw.size() >= 2 && s.raw[0] == '\x1f' && s.raw[1] == '\x8b';
  if (s.compressed) {
    if (inflateInit2(&s.z, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();  // 16: gzip only
    s.inflating = true;
  }
}

AllocTraceReader::AllocTraceReader(std::string_view text, std::string name)
    : state_(std::make_unique<State>()) {
  state_->name = std::move(name);
  state_->text = text;
}

AllocTraceReader::~AllocTraceReader() = default;
AllocTraceReader::AllocTraceReader(AllocTraceReader&&) noexcept = default;
AllocTraceReader& AllocTraceReader::operator=(AllocTraceReader&&) noexcept = default;

bool AllocTraceReader::read(std::vector<AllocTraceOp>& ops, std::size_t max_ops) {
  State& s = *state_;
  ops.clear();
  s.lines.clear();
  std::string_view text_of_line;
  while (ops.size() < max_ops && s.next_line(text_of_line)) {
    if (!text_of_line.empty() && text_of_line.back() == '\r') text_of_line.remove_suffix(1);
    if (text_of_line.empty()) continue;
    if (s.line == 1 && text_of_line.starts_with("op,")) {
      if (text_of_line == kHeader5) s.columns = 5;
      else if (text_of_line != kHeader4)
        s.fail(detail::concat("a header names the columns ", kHeader4, " or ", kHeader5), text_of_line);
      continue;
    }
    s.parse(text_of_line, ops.emplace_back());
    s.lines.push_back(s.line);
    ++s.ops;
  }
  return !ops.empty();
}

std::uint64_t AllocTraceReader::line_of(std::size_t index) const { return state_->lines.at(index); }
const std::string& AllocTraceReader::name() const { return state_->name; }
std::uint64_t AllocTraceReader::ops_read() const { return state_->ops; }
std::uint32_t AllocTraceReader::num_slots() const { return static_cast<std::uint32_t>(state_->slot_size.size()); }
std::uint32_t AllocTraceReader::num_streams() const {
  return static_cast<std::uint32_t>(state_->stream_names.size());
}
const std::string& AllocTraceReader::stream_name(std::uint32_t stream) const {
  return state_->stream_names.at(stream);
}
std::uint64_t AllocTraceReader::peak_requested_bytes() const { return state_->peak; }
bool AllocTraceReader::has_thread_column() const { return state_->columns == 5; }

namespace {

AllocTrace read_whole(AllocTraceReader& reader) {
  AllocTrace trace;
  std::vector<AllocTraceOp> batch;
  while (reader.read(batch, 1 << 16)) trace.ops.insert(trace.ops.end(), batch.begin(), batch.end());
  trace.num_ids = reader.num_slots();
  trace.num_streams = reader.num_streams();
  trace.peak_requested_bytes = reader.peak_requested_bytes();
  return trace;
}

}  // namespace

AllocTrace parse_alloc_trace(const std::string& text, const std::string& name) {
  AllocTraceReader reader(text, name);
  return read_whole(reader);
}

AllocTrace load_alloc_trace(const std::string& path) {
  AllocTraceReader reader(path);
  return read_whole(reader);
}

}  // namespace cudakit::memory
