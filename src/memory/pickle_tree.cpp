#include "cudakit/memory/pickle_tree.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {

// Note [Reading pickles]
// torch.cuda.memory._dump_snapshot writes pickle.dump(_snapshot()): plain dicts, lists, tuples,
// strings, ints, floats, bools and None (torch's C++ pickler, used for the same data from C++,
// writes the same opcodes at protocol 2). A pickle is a program for a stack machine, and the
// general one runs code: GLOBAL imports any name, REDUCE calls it. This reader is a machine of
// its own that knows only the opcodes Python's pickler (protocols 2 to 5) writes for plain data;
// every other opcode is refused by name and offset, so a file can describe values and nothing
// else. It is a reader of outside input, so:
//  - no recursion: the machine is a loop over the bytes with an explicit stack and MARK stack,
//    and the tree it builds is an arena of nodes that refer to each other by index (values the
//    pickle shares through its memo stay one node, so a value referred to a million times costs
//    one node, and a list holding itself is no harm to anyone who does not walk it blindly);
//  - bounded memory: every opcode adds at most one node or one stack entry, lengths are checked
//    against the bytes that remain before anything is allocated, and the counts of nodes, stack
//    entries and open MARKs have limits (Limits) that fail with a clear error;
//  - every refusal says what was wrong, which opcode, and at which byte offset.
namespace {

// Every opcode of Python's pickle protocols 0 to 5, by name and byte: the ones this reader
// runs, and the ones it refuses by name.
#define CUDAKIT_PICKLE_OPCODES(X) X(MARK, '(') X(STOP, '.') X(POP, '0') X(POP_MARK, '1') \
  X(DUP, '2') X(FLOAT, 'F') X(INT, 'I') X(BININT, 'J') X(BININT1, 'K') X(LONG, 'L') \
  X(BININT2, 'M') X(NONE, 'N') X(PERSID, 'P') X(BINPERSID, 'Q') X(REDUCE, 'R') X(STRING, 'S') \
  X(BINSTRING, 'T') X(SHORT_BINSTRING, 'U') X(UNICODE, 'V') X(BINUNICODE, 'X') X(APPEND, 'a') \
  X(BUILD, 'b') X(GLOBAL, 'c') X(DICT, 'd') X(EMPTY_DICT, '}') X(APPENDS, 'e') X(GET, 'g') \
  X(BINGET, 'h') X(INST, 'i') X(LONG_BINGET, 'j') X(LIST, 'l') X(EMPTY_LIST, ']') X(OBJ, 'o') \
  X(PUT, 'p') X(BINPUT, 'q') X(LONG_BINPUT, 'r') X(SETITEM, 's') X(TUPLE, 't') X(EMPTY_TUPLE, ')') \
  X(SETITEMS, 'u') X(BINFLOAT, 'G') X(PROTO, 0x80) X(NEWOBJ, 0x81) X(EXT1, 0x82) X(EXT2, 0x83) \
  X(EXT4, 0x84) X(TUPLE1, 0x85) X(TUPLE2, 0x86) X(TUPLE3, 0x87) X(NEWTRUE, 0x88) X(NEWFALSE, 0x89) \
  X(LONG1, 0x8a) X(LONG4, 0x8b) X(BINBYTES, 'B') X(SHORT_BINBYTES, 'C') X(SHORT_BINUNICODE, 0x8c) \
  X(BINUNICODE8, 0x8d) X(BINBYTES8, 0x8e) X(EMPTY_SET, 0x8f) X(ADDITEMS, 0x90) X(FROZENSET, 0x91) \
  X(NEWOBJ_EX, 0x92) X(STACK_GLOBAL, 0x93) X(MEMOIZE, 0x94) X(FRAME, 0x95) X(BYTEARRAY8, 0x96) \
  X(NEXT_BUFFER, 0x97) X(READONLY_BUFFER, 0x98)

enum Op : unsigned char {
#define CUDAKIT_OPCODE(name, byte) name = byte,
  CUDAKIT_PICKLE_OPCODES(CUDAKIT_OPCODE)
#undef CUDAKIT_OPCODE
};

const char* op_name(unsigned char op) {
  switch (op) {
#define CUDAKIT_OPCODE(name, byte) \
  case name:                       \
    return #name;
    CUDAKIT_PICKLE_OPCODES(CUDAKIT_OPCODE)
#undef CUDAKIT_OPCODE
    default: return nullptr;
  }
}

// Opcodes that name Python code (a class, a function, an extension code, a persistent id) or
// call it: a snapshot has no use for them, and reading them could only mean running something.
bool names_or_calls_code(unsigned char op) {
  switch (op) {
    case GLOBAL: case STACK_GLOBAL: case REDUCE: case BUILD: case INST: case OBJ: case NEWOBJ:
    case NEWOBJ_EX: case EXT1: case EXT2: case EXT4: case PERSID: case BINPERSID: return true;
    default: return false;
  }
}

constexpr const char* kApi = "PickleTree::parse";

class Machine {
 public:
  Machine(std::string_view in, std::string_view name, const PickleTree::Limits& limits, PickleTree& tree)
      : in_(in), name_(name), limits_(limits), tree_(tree) {}

  void run() {
    while (true) {
      if (pos_ >= in_.size()) {
        fail_plain(detail::concat("the input ends at offset ", in_.size(),
                                  " without the STOP opcode: the file is truncated"));
      }
      at_ = pos_;
      op_ = static_cast<unsigned char>(in_[pos_++]);
      if (step()) return;
    }
  }

 private:
  using Id = PickleTree::Id;
  using Kind = PickleTree::Kind;

  [[noreturn]] void fail_plain(std::string_view what) const {
    throw InvalidArgumentError(kApi, detail::concat(name_, ": ", what));
  }
  [[noreturn]] void fail(std::string_view what) const {
    const char* name = op_name(op_);
    fail_plain(detail::concat("pickle opcode ", name, " (0x", hex(op_), ") at offset ", at_, ": ", what));
  }
  static std::string hex(unsigned value) {
    static const char* digits = "0123456789abcdef";
    return {digits[(value >> 4) & 15], digits[value & 15]};
  }

  // The next n bytes of the opcode's argument.
  std::string_view take(std::uint64_t n) {
    if (n > in_.size() - pos_) {
      fail(detail::concat("it needs ", n, " more bytes but the input ends at offset ", in_.size(),
                          ": the file is truncated"));
    }
    const std::string_view out = in_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::uint64_t little_endian(std::size_t n) {
    const std::string_view b = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    return v;
  }

  void push(Id id) {
    if (stack_.size() >= limits_.max_stack) {
      fail(detail::concat("more than ", limits_.max_stack, " values on the stack at once"));
    }
    stack_.push_back(id);
  }
  Id pop() {
    if (stack_.size() <= floor()) fail("it needs a value, and the stack (above the last MARK) is empty");
    const Id id = stack_.back();
    stack_.pop_back();
    return id;
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  Id top() const {
    if (stack_.size() <= floor()) fail("it needs a value, and the stack (above the last MARK) is empty");
    return stack_.back();
  }
  // The stack's values above the last MARK, which is removed.
  std::size_t pop_mark() {
    if (marks_.empty()) fail("there is no MARK before it");
    const std::size_t at = marks_.back();
    marks_.pop_back();
    return at;
  }
  Id add(Id id) {
    if (tree_.size() > limits_.max_nodes) fail(detail::concat("more than ", limits_.max_nodes, " values"));
    return id;
  }
  // The container `kind` that items are added to: the value at stack_[at - 1], above the last MARK.
  Id container_below(std::size_t at, Kind kind) {
    if (at <= floor()) fail("it needs the container to add to, and the stack (above the last MARK) has none");
    const Id target = stack_[at - 1];
    if (tree_.kind(target) != kind) {
      fail(detail::concat("it adds to ", PickleTree::describe(kind), ", but the value under its items is ",
                          PickleTree::describe(tree_.kind(target))));
    }
    return target;
  }
  void memo_put(std::uint64_t index) { memo_[index] = top(); }
  void memo_get(std::uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) fail(detail::concat("memo entry ", index, " was never stored"));
    push(it->second);
  }
  void push_string(std::uint64_t length, Kind kind) {
    const std::string_view text = take(length);
    if (length > std::numeric_limits<std::uint32_t>::max()) {
      fail(detail::concat("a string of ", length, " bytes is longer than this reader takes (4 GiB)"));
    }
    push(add(tree_.add_string(text, kind)));
  }
  // LONG1/LONG4: a little-endian two's-complement integer of n bytes.
  void push_long(std::uint64_t n) {
    const std::string_view b = take(n);
    if (n == 0) return push(add(tree_.add_int(0)));
    const bool negative = (static_cast<unsigned char>(b[n - 1]) & 0x80) != 0;
    // Bytes beyond the eighth must only extend the sign for the value to fit in 64 bits.
    for (std::size_t i = 8; i < n; ++i) {
      if (static_cast<unsigned char>(b[i]) != (negative ? 0xff : 0x00)) return push(add(tree_.add_big_int()));
    }
    std::uint64_t v = negative ? ~std::uint64_t{0} : 0;
    for (std::size_t i = std::min<std::size_t>(n, 8); i-- > 0;) {
      v = (v << 8) | static_cast<unsigned char>(b[i]);
    }
    if (n < 8 && negative) v |= ~std::uint64_t{0} << (8 * n);
    // A value whose sign differs from its low eight bytes' (2^63 and up, below -2^63) is past int64.
    if (negative != ((v >> 63) != 0)) return push(add(tree_.add_big_int()));
    push(add(tree_.add_int(static_cast<std::int64_t>(v))));
  }
  void make_tuple(std::size_t from) {
    const Id t = add(tree_.add_container(Kind::tuple));
    for (std::size_t i = from; i < stack_.size(); ++i) tree_.append(t, stack_[i]);
    stack_.resize(from);
    push(t);
  }

  // Runs the opcode op_; true at STOP.
  bool step() {
    if (names_or_calls_code(op_)) {
      fail("it refers to Python code (a class or a function); a memory snapshot holds only dicts, "
           "lists, strings and numbers, and this reader never imports or calls anything");
    }
    switch (op_) {
      case PROTO: {
        const auto version = little_endian(1);
        if (version < 2 || version > 5) fail(detail::concat("protocol ", version, "; this reader takes protocols 2 to 5"));
        return false;
      }
      case FRAME: {  // a frame only groups the bytes that follow
        const std::uint64_t length = little_endian(8);
        if (length > in_.size() - pos_) {
          fail(detail::concat("its frame of ", length, " bytes runs past the end of the input at offset ",
                              in_.size(), ": the file is truncated"));
        }
        return false;
      }
      case STOP:
        if (stack_.empty()) fail("the stack is empty: there is no value to return");
        tree_.set_root(stack_.back());
        return true;
      case MARK:
        if (marks_.size() >= limits_.max_marks) fail(detail::concat("more than ", limits_.max_marks, " nested MARKs"));
        marks_.push_back(stack_.size());
        return false;
      case NONE: push(tree_.add_none()); return false;
      case NEWTRUE: push(tree_.add_bool(true)); return false;
      case NEWFALSE: push(tree_.add_bool(false)); return false;
      case BININT1: push(add(tree_.add_int(static_cast<std::int64_t>(little_endian(1))))); return false;
      case BININT2: push(add(tree_.add_int(static_cast<std::int64_t>(little_endian(2))))); return false;
      case BININT:
        push(add(tree_.add_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(little_endian(4))))));
        return false;
      case LONG1: push_long(little_endian(1)); return false;
      case LONG4: {
        const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(little_endian(4)));
        if (n < 0) fail(detail::concat("negative length ", n));
        push_long(static_cast<std::uint64_t>(n));
        return false;
      }
      case BINFLOAT: {
        const std::string_view b = take(8);
        std::uint64_t bits = 0;
        for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);  // big-endian
        push(add(tree_.add_float(std::bit_cast<double>(bits))));
        return false;
      }
      case SHORT_BINUNICODE: push_string(little_endian(1), Kind::string); return false;
      case BINUNICODE: push_string(little_endian(4), Kind::string); return false;
      case BINUNICODE8: push_string(little_endian(8), Kind::string); return false;
      case SHORT_BINBYTES: push_string(little_endian(1), Kind::bytes); return false;
      case BINBYTES: push_string(little_endian(4), Kind::bytes); return false;
      case BINBYTES8: push_string(little_endian(8), Kind::bytes); return false;
      case EMPTY_LIST: push(add(tree_.add_container(Kind::list))); return false;
      case EMPTY_DICT: push(add(tree_.add_container(Kind::dict))); return false;
      case EMPTY_TUPLE: push(add(tree_.add_container(Kind::tuple))); return false;
      case TUPLE1: case TUPLE2: case TUPLE3: {
        const std::size_t n = op_ - TUPLE1 + 1u;
        if (stack_.size() < floor() + n) fail(detail::concat("it needs ", n, " values above the last MARK"));
        make_tuple(stack_.size() - n);
        return false;
      }
      case TUPLE: make_tuple(pop_mark()); return false;
      case APPEND: {
        const Id value = pop();
        tree_.append(container_below(stack_.size(), Kind::list), value);
        return false;
      }
      case APPENDS: {
        const std::size_t from = pop_mark();
        const Id list = container_below(from, Kind::list);
        for (std::size_t i = from; i < stack_.size(); ++i) tree_.append(list, stack_[i]);
        stack_.resize(from);
        return false;
      }
      case SETITEM: {
        const Id value = pop();
        const Id key = pop();
        const Id dict = container_below(stack_.size(), Kind::dict);
        tree_.append(dict, key);
        tree_.append(dict, value);
        return false;
      }
      case SETITEMS: {
        const std::size_t from = pop_mark();
        if ((stack_.size() - from) % 2 != 0) fail("it has an odd number of values: a key without its value");
        const Id dict = container_below(from, Kind::dict);
        for (std::size_t i = from; i < stack_.size(); ++i) tree_.append(dict, stack_[i]);
        stack_.resize(from);
        return false;
      }
      case MEMOIZE: memo_put(memo_.size()); return false;
      case BINPUT: memo_put(little_endian(1)); return false;
      case LONG_BINPUT: memo_put(little_endian(4)); return false;
      case BINGET: memo_get(little_endian(1)); return false;
      case LONG_BINGET: memo_get(little_endian(4)); return false;
      default: break;
    }
    if (op_name(op_) == nullptr) {
      fail_plain(detail::concat("unknown pickle opcode 0x", hex(op_), " at offset ", at_,
                                ": not a pickle, or a damaged one"));
    }
    fail("not supported: this reader takes the opcodes Python's pickle (protocols 2 to 5) writes for "
         "dicts, lists, tuples, strings, bytes, numbers, booleans and None");
  }

  std::string_view in_;
  std::string_view name_;
  const PickleTree::Limits& limits_;
  PickleTree& tree_;
  std::size_t pos_ = 0;
  std::size_t at_ = 0;
  unsigned char op_ = 0;
  std::vector<Id> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Id> memo_;
};

}  // namespace

PickleTree::PickleTree() {
  nodes_.push_back({Kind::none});
  nodes_.push_back({Kind::boolean, 0, 1});
  nodes_.push_back({Kind::boolean, 0, 0});
}

PickleTree PickleTree::parse(std::string_view bytes, std::string_view name, const Limits& limits) {
  PickleTree tree;
  Machine(bytes, name, limits, tree).run();
  return tree;
}

const char* PickleTree::describe(Kind kind) noexcept {
  switch (kind) {
    case Kind::none: return "None";
    case Kind::boolean: return "a bool";
    case Kind::integer: return "an int";
    case Kind::big_integer: return "an int beyond 64 bits";
    case Kind::floating: return "a float";
    case Kind::string: return "a str";
    case Kind::bytes: return "bytes";
    case Kind::list: return "a list";
    case Kind::tuple: return "a tuple";
    case Kind::dict: return "a dict";
  }
  return "a value";
}

const PickleTree::Node& PickleTree::node(Id id, Kind a, Kind b, const char* what) const {
  const Node& n = nodes_.at(id);
  if (n.kind != a && n.kind != b) {
    throw InvalidArgumentError("PickleTree", detail::concat(describe(n.kind), " is not ", what));
  }
  return n;
}

bool PickleTree::as_bool(Id id) const { return node(id, Kind::boolean, Kind::boolean, "a bool").payload != 0; }
std::int64_t PickleTree::as_int(Id id) const {
  return static_cast<std::int64_t>(node(id, Kind::integer, Kind::integer, "an int").payload);
}
double PickleTree::as_float(Id id) const {
  return std::bit_cast<double>(node(id, Kind::floating, Kind::floating, "a float").payload);
}
std::string_view PickleTree::as_string(Id id) const {
  const Node& n = node(id, Kind::string, Kind::bytes, "a str");
  return std::string_view(text_).substr(n.payload, n.length);
}
std::span<const PickleTree::Id> PickleTree::items(Id id) const {
  return containers_[node(id, Kind::list, Kind::tuple, "a list").payload];
}
std::span<const PickleTree::Id> PickleTree::dict_items(Id id) const {
  return containers_[node(id, Kind::dict, Kind::dict, "a dict").payload];
}

std::optional<PickleTree::Id> PickleTree::find(Id dict, std::string_view key) const {
  const std::span<const Id> kv = dict_items(dict);
  for (std::size_t i = kv.size(); i >= 2; i -= 2) {
    const Node& k = nodes_[kv[i - 2]];
    if (k.kind == Kind::string && std::string_view(text_).substr(k.payload, k.length) == key) return kv[i - 1];
  }
  return std::nullopt;
}

PickleTree::Id PickleTree::add_int(std::int64_t value) {
  nodes_.push_back({Kind::integer, 0, static_cast<std::uint64_t>(value)});
  return static_cast<Id>(nodes_.size() - 1);
}
PickleTree::Id PickleTree::add_big_int() {
  nodes_.push_back({Kind::big_integer});
  return static_cast<Id>(nodes_.size() - 1);
}
PickleTree::Id PickleTree::add_float(double value) {
  nodes_.push_back({Kind::floating, 0, std::bit_cast<std::uint64_t>(value)});
  return static_cast<Id>(nodes_.size() - 1);
}
PickleTree::Id PickleTree::add_string(std::string_view text, Kind kind) {
  nodes_.push_back({kind, static_cast<std::uint32_t>(text.size()), text_.size()});
  text_.append(text);
  return static_cast<Id>(nodes_.size() - 1);
}
PickleTree::Id PickleTree::add_container(Kind kind) {
  nodes_.push_back({kind, 0, containers_.size()});
  containers_.emplace_back();
  return static_cast<Id>(nodes_.size() - 1);
}
void PickleTree::append(Id container, Id item) { containers_[nodes_.at(container).payload].push_back(item); }

}  // namespace cudakit::memory
