#pragma once
// @brief Recorded allocation traces: one line per allocation or free, in program order, plain or
// gzip-compressed. A trace's first line may name its columns: `op,id,size,stream` (the default,
// also without a header) or `op,id,size,stream,thread`; every line then has exactly that many
// fields (op 'a' or 'f'; id, size and thread non-negative integers; stream any name).
// Replayed by `cudakit alloc-replay` and the allocator benchmarks. See Note [Reading traces] in
// src/memory/alloc_trace.cpp for the limits.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudakit::memory {

// One operation of a trace.
struct AllocTraceOp {
  bool is_alloc = true;  // 'a' (an allocation) or 'f' (a free)
  // Dense index of the allocation while it is live; a freed allocation's slot is reused, so the
  // slots number at most the allocations live at once.
  std::uint32_t slot = 0;
  std::uint32_t stream = 0;  // dense index of the stream id (0..num_streams-1)
  std::uint64_t size = 0;    // bytes (for frees: the size of the allocation being freed)
  std::uint64_t thread = 0;  // the trace's thread column (an opaque id); 0 when it has none
};

// A whole trace in memory.
struct AllocTrace {
  std::vector<AllocTraceOp> ops;  // every operation, in program order
  std::uint32_t num_ids = 0;  // slots: the most allocations live at once
  std::uint32_t num_streams = 0;  // distinct stream ids (dense indices 0..num_streams-1)
  // Peak of the sum of live requested sizes over the trace.
  std::uint64_t peak_requested_bytes = 0;
};

// Reads a trace a batch of operations at a time, in memory bounded by the batch, the line limit
// and the allocations live at once, however long the trace (`cudakit alloc-replay` streams). Not
// thread-safe. Every error is an InvalidArgumentError naming the trace and line, quoting at most
// 200 bytes of the line; a file that cannot be opened or read is a FileError.
class AllocTraceReader {
 public:
  // The longest line read, in bytes (a longer one is refused).
  static constexpr std::size_t kMaxLineBytes = 4096;
  static constexpr std::uint32_t kMaxStreams = 1u << 16;  // the most distinct streams a trace may name

  // A file (".gz" or not: the content decides); `path` names it in messages. Reads only the
  // first bytes now.
  // @param path the trace file.
  // @throws FileError when the file cannot be opened or read.
  explicit AllocTraceReader(const std::string& path);
  // Text in memory; `name` names it in messages. The text must outlive the reader.
  // @param text the trace (not compressed).
  // @param name the trace's name in messages.
  AllocTraceReader(std::string_view text, std::string name);
  // Closes the file.
  ~AllocTraceReader();
  // Moves the reader and its position; `other` may only be destroyed or assigned to.
  AllocTraceReader(AllocTraceReader&&) noexcept;
  // Moves the reader and its position; `other` may only be destroyed or assigned to.
  // @return this reader.
  AllocTraceReader& operator=(AllocTraceReader&&) noexcept;

  // Replaces `ops` with the next operations, at most `max_ops` (> 0); false when none is left,
  // after the whole input was read and checked (a compressed one to its end and checksum).
  // @param ops cleared, then filled with up to `max_ops` operations.
  // @param max_ops the most operations to read (0 reads nothing and returns false).
  // @return true when `ops` holds at least one operation.
  // @throws InvalidArgumentError for a malformed line (naming the trace and line), a limit
  // passed, or damaged compressed data.
  // @throws FileError when the file cannot be read.
  bool read(std::vector<AllocTraceOp>& ops, std::size_t max_ops);
  // The line of the last read's operation `index`.
  // @param index an index into the `ops` the last read() filled.
  // @return its line number, from 1.
  // @throws std::out_of_range for an index beyond the last read.
  [[nodiscard]] std::uint64_t line_of(std::size_t index) const;

  // @return the name messages use (the path, or the name given).
  [[nodiscard]] const std::string& name() const;
  // @return the operations read so far.
  [[nodiscard]] std::uint64_t ops_read() const;
  // @return the slots used so far: the most allocations live at once.
  [[nodiscard]] std::uint32_t num_slots() const;
  // @return the distinct streams seen so far.
  [[nodiscard]] std::uint32_t num_streams() const;
  // The stream name of dense index `stream` ("s0", "7").
  // @param stream a dense index below num_streams().
  // @return the name as the trace writes it.
  // @throws std::out_of_range for an index not seen yet.
  [[nodiscard]] const std::string& stream_name(std::uint32_t stream) const;
  // @return the peak of live requested bytes over the operations read so far.
  [[nodiscard]] std::uint64_t peak_requested_bytes() const;
  // @return whether the trace's header names the thread column.
  [[nodiscard]] bool has_thread_column() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A whole trace in memory (the benchmarks and tests replay one many times).
// @param path the trace file, plain or gzip-compressed.
// @return every operation, with the slot and stream counts.
// @throws InvalidArgumentError for a malformed trace, as AllocTraceReader::read().
// @throws FileError when the file cannot be opened or read.
[[nodiscard]] AllocTrace load_alloc_trace(const std::string& path);
// The same from text already in memory (`name` is used in error messages).
// @param text the trace (not compressed).
// @param name the trace's name in messages.
// @return every operation, with the slot and stream counts.
// @throws InvalidArgumentError for a malformed trace, as AllocTraceReader::read().
[[nodiscard]] AllocTrace parse_alloc_trace(const std::string& text, const std::string& name);

}  // namespace cudakit::memory
