#pragma once
// @brief PickleTree: the plain Python values (None, bool, int, float, str, bytes, list, tuple, dict) of a
// pickle that Python's pickle module (protocols 2 to 5) or torch's C++ pickler wrote, read without
// running anything: torch.cuda.memory._dump_snapshot's file is such a pickle. See Note [Reading
// pickles] in src/memory/pickle_tree.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudakit::memory {

// What PickleTree::parse takes at most (See Note [Reading pickles]).
struct PickleLimits {
  // Nodes in all (each opcode makes at most one, so the input's size bounds them anyway).
  std::size_t max_nodes = std::size_t{1} << 28;
  // MARKs open at once: Python's own pickler never nests deeper than its recursion limit.
  std::size_t max_marks = 1000;
  // Values on the unpickler's stack at once.
  std::size_t max_stack = std::size_t{1} << 24;
};

class PickleTree {
 public:
  // A value's index in the tree. Values shared in the pickle (its memo) are one node, referred
  // to from every place they occur.
  using Id = std::uint32_t;
  enum class Kind : std::uint8_t { none, boolean, integer, big_integer, floating, string, bytes, list, tuple, dict };

  using Limits = PickleLimits;

  // Reads a whole pickle (its first STOP ends it); `name` (the file) starts every message. Every
  // refusal is an InvalidArgumentError naming the opcode and its byte offset: an opcode that
  // would import or call Python code (GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, ...), one this
  // reader does not take, a truncated input, a malformed stack, a limit passed.
  // @throws InvalidArgumentError
  [[nodiscard]] static PickleTree parse(std::string_view bytes, std::string_view name = "pickle",
                                        const Limits& limits = Limits{});

  PickleTree();

  [[nodiscard]] Id root() const noexcept { return root_; }
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
  [[nodiscard]] Kind kind(Id id) const { return nodes_.at(id).kind; }
  // "a dict", "an int", ...: for messages.
  [[nodiscard]] static const char* describe(Kind kind) noexcept;

  // The value of a boolean, an integer (int64), a float, a string or bytes (raw bytes).
  [[nodiscard]] bool as_bool(Id id) const;
  [[nodiscard]] std::int64_t as_int(Id id) const;
  [[nodiscard]] double as_float(Id id) const;
  [[nodiscard]] std::string_view as_string(Id id) const;
  // The elements of a list or a tuple.
  [[nodiscard]] std::span<const Id> items(Id id) const;
  // A dict's keys and values, alternating (key0, value0, key1, value1, ...), in insertion order.
  [[nodiscard]] std::span<const Id> dict_items(Id id) const;
  // The value of the string key `key` of a dict (the last one set, as Python keeps it).
  [[nodiscard]] std::optional<Id> find(Id dict, std::string_view key) const;

  // Building a tree (the pickle reader, and readers of other formats such as JSON).
  Id add_none() const noexcept { return kNone; }
  Id add_bool(bool value) const noexcept { return value ? kTrue : kFalse; }
  Id add_int(std::int64_t value);
  Id add_big_int();
  Id add_float(double value);
  Id add_string(std::string_view text, Kind kind = Kind::string);
  Id add_container(Kind kind);  // list, tuple or dict
  void append(Id container, Id item);
  void set_root(Id id) { root_ = id; }

 private:
  static constexpr Id kNone = 0, kTrue = 1, kFalse = 2;
  struct Node {
    Kind kind;
    std::uint32_t length = 0;   // strings: bytes
    std::uint64_t payload = 0;  // int64 / double bits / text offset / container index
  };
  const Node& node(Id id, Kind a, Kind b, const char* what) const;
  std::vector<Node> nodes_;
  std::string text_;
  std::vector<std::vector<Id>> containers_;
  Id root_ = kNone;
};

}  // namespace cudakit::memory
