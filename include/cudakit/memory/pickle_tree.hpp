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

// A parsed pickle: a tree of plain values, each a node named by its Id. Readers look values up
// by Id and ask for them by kind; the as_* accessors check the kind. The add_* members build a
// tree (the pickle reader, and readers of other formats such as JSON). Not thread-safe to build;
// reading a finished tree from several threads is safe. Accessors given an id beyond size()
// throw std::out_of_range.
class PickleTree {
 public:
  // A value's index in the tree. Values shared in the pickle (its memo) are one node, referred
  // to from every place they occur.
  using Id = std::uint32_t;
  // A value's Python type: None, bool, int (int64; big_integer: beyond 64 bits, value not kept),
  // float, str, bytes, list, tuple, dict.
  enum class Kind : std::uint8_t { none, boolean, integer, big_integer, floating, string, bytes, list, tuple, dict };

  // The limits parse() takes (PickleLimits).
  using Limits = PickleLimits;

  // Reads a whole pickle (its first STOP ends it); `name` (the file) starts every message. Every
  // refusal is an InvalidArgumentError naming the opcode and its byte offset: an opcode that
  // would import or call Python code (GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, ...), one this
  // reader does not take, a truncated input, a malformed stack, a limit passed.
  // @param bytes the pickle (not compressed); bytes after its STOP are ignored.
  // @param name the input's name in messages.
  // @param limits the most nodes, open MARKs and stack values accepted.
  // @return the tree; root() is the pickled value.
  // @throws InvalidArgumentError for any refusal, as above.
  [[nodiscard]] static PickleTree parse(std::string_view bytes, std::string_view name = "pickle",
                                        const Limits& limits = Limits{});

  // An empty tree: None, True and False only, the root None.
  PickleTree();

  // @return the Id of the top-level value.
  [[nodiscard]] Id root() const noexcept { return root_; }
  // @return the number of nodes.
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
  // The type of a node.
  // @param id a node of this tree.
  // @return the node's type.
  // @throws std::out_of_range for an id beyond size().
  [[nodiscard]] Kind kind(Id id) const { return nodes_.at(id).kind; }
  // "a dict", "an int", ...: for messages.
  // @param kind a type.
  // @return a static string with its article.
  [[nodiscard]] static const char* describe(Kind kind) noexcept;

  // The value of a bool.
  // @param id the node.
  // @return the value.
  // @throws InvalidArgumentError when the node is not a bool.
  [[nodiscard]] bool as_bool(Id id) const;
  // The value of an int that fits in 64 bits.
  // @param id the node.
  // @return the value.
  // @throws InvalidArgumentError when the node is not such an int (a big_integer neither).
  [[nodiscard]] std::int64_t as_int(Id id) const;
  // The value of a float (ints are not converted).
  // @param id the node.
  // @return the value.
  // @throws InvalidArgumentError when the node is not a float.
  [[nodiscard]] double as_float(Id id) const;
  // The text of a str (UTF-8, as pickled) or the raw bytes of bytes.
  // @param id the node.
  // @return a view valid while the tree lives and is not added to.
  // @throws InvalidArgumentError when the node is neither a str nor bytes.
  [[nodiscard]] std::string_view as_string(Id id) const;
  // The elements of a list or a tuple.
  // @param id the node.
  // @return the elements' ids, in order; valid until the container is appended to.
  // @throws InvalidArgumentError when the node is neither a list nor a tuple.
  [[nodiscard]] std::span<const Id> items(Id id) const;
  // A dict's keys and values, alternating (key0, value0, key1, value1, ...), in insertion order.
  // @param id the node.
  // @return the ids, keys at even positions.
  // @throws InvalidArgumentError when the node is not a dict.
  [[nodiscard]] std::span<const Id> dict_items(Id id) const;
  // The value of the string key `key` of a dict (the last one set, as Python keeps it).
  // @param dict the dict's node.
  // @param key the str key to look for (keys of other types never match).
  // @return the value's id, or nullopt when the key is absent.
  // @throws InvalidArgumentError when `dict` is not a dict.
  [[nodiscard]] std::optional<Id> find(Id dict, std::string_view key) const;

  // A None value.
  // @return the shared None node.
  Id add_none() const noexcept { return kNone; }
  // A bool value.
  // @param value the bool.
  // @return the shared True or False node.
  Id add_bool(bool value) const noexcept { return value ? kTrue : kFalse; }
  // An int value that fits in 64 bits.
  // @param value the int.
  // @return a new int node.
  Id add_int(std::int64_t value);
  // An int beyond 64 bits, kept without its value (no reader needs one).
  // @return a new big_integer node.
  Id add_big_int();
  // A float value.
  // @param value the float.
  // @return a new float node.
  Id add_float(double value);
  // A str or bytes value.
  // @param text the text, copied into the tree.
  // @param kind Kind::string or Kind::bytes.
  // @return a new node of `kind`.
  Id add_string(std::string_view text, Kind kind = Kind::string);
  // An empty container; append() fills it.
  // @param kind Kind::list, Kind::tuple or Kind::dict.
  // @return a new empty container node.
  Id add_container(Kind kind);  // list, tuple or dict
  // Appends `item` to a container (for a dict: a key, then its value).
  // @param container a node from add_container().
  // @param item the node to append.
  void append(Id container, Id item);
  // Makes `id` the tree's top-level value.
  // @param id a node of this tree.
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
