// Host tier: the pickle reader of what-if replays, on pickles Python wrote (every protocol from 2
// to 5) and on hostile ones: code, unknown opcodes, truncation, deep nesting, huge lengths.

#include "cudakit/memory/pickle_tree.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cudakit/core/error.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

using Kind = PickleTree::Kind;
using namespace std::string_literals;

std::string fixture(const std::string& name) {
  std::ifstream in(cudakit::testing::test_data_dir() + "/memory/" + name, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

PickleTree::Id at(const PickleTree& t, PickleTree::Id dict, const char* key) {
  const auto v = t.find(dict, key);
  EXPECT_TRUE(v.has_value()) << key;
  return v.value_or(t.root());
}

// The message of the InvalidArgumentError `parse` throws (empty when it does not throw).
std::string refusal(const std::string& bytes, const PickleLimits& limits = {}) {
  try {
    (void)PickleTree::parse(bytes, "test.pickle", limits);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

void expect_refusal(const std::string& bytes, const std::string& part) {
  const std::string message = refusal(bytes);
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected: " << part;
  EXPECT_NE(message.find("test.pickle: "), std::string::npos) << message;
}

TEST(PickleTree, ReadsEveryValueKindInEveryProtocol) {
  for (int protocol : {2, 3, 4, 5}) {
    SCOPED_TRACE(protocol);
    const PickleTree t = PickleTree::parse(fixture("pickle_values_p" + std::to_string(protocol) + ".pickle"));
    const auto root = t.root();
    ASSERT_EQ(t.kind(root), Kind::dict);
    EXPECT_EQ(t.kind(at(t, root, "none")), Kind::none);
    EXPECT_TRUE(t.as_bool(at(t, root, "true")));
    EXPECT_FALSE(t.as_bool(at(t, root, "false")));
    EXPECT_EQ(t.as_int(at(t, root, "int1")), 7);
    EXPECT_EQ(t.as_int(at(t, root, "int2")), 300);
    EXPECT_EQ(t.as_int(at(t, root, "int4")), -70000);
    EXPECT_EQ(t.as_int(at(t, root, "long")), std::int64_t{1} << 40);
    EXPECT_EQ(t.as_int(at(t, root, "negative_long")), -(std::int64_t{1} << 40));
    EXPECT_EQ(t.as_int(at(t, root, "max_int64")), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(t.kind(at(t, root, "huge")), Kind::big_integer);
    EXPECT_EQ(t.kind(at(t, root, "max_uint64")), Kind::big_integer) << "past int64";
    EXPECT_EQ(t.as_float(at(t, root, "float")), 1.5);
    EXPECT_EQ(t.as_string(at(t, root, "short_str")), "ab");
    EXPECT_EQ(t.as_string(at(t, root, "long_str")), std::string(300, 'x'));
    EXPECT_EQ(t.items(at(t, root, "list")).size(), 3u);
    EXPECT_EQ(t.items(at(t, root, "list1")).size(), 1u);
    EXPECT_TRUE(t.items(at(t, root, "empty_list")).empty());
    for (const auto& [key, n] : {std::pair{"tuple0", 0u}, {"tuple1", 1u}, {"tuple2", 2u}, {"tuple3", 3u}, {"tuple5", 5u}}) {
      EXPECT_EQ(t.kind(at(t, root, key)), Kind::tuple) << key;
      EXPECT_EQ(t.items(at(t, root, key)).size(), n) << key;
    }
    EXPECT_EQ(at(t, root, "shared"), at(t, root, "shared_again")) << "a value the memo shares is one node";
    const auto lists = t.items(at(t, root, "lists"));
    ASSERT_EQ(lists.size(), 300u);
    EXPECT_EQ(lists.back(), at(t, root, "last_list_again")) << "memo entries past 255";
    const auto many = t.items(at(t, root, "many"));
    ASSERT_EQ(many.size(), 2500u);
    EXPECT_EQ(t.as_int(many[2499]), 2499) << "APPENDS in batches of 1000";
    const auto nested = at(t, at(t, at(t, root, "nested"), "a"), "b");
    EXPECT_EQ(t.kind(t.items(nested)[0]), Kind::dict);
    if (protocol >= 3) {
      EXPECT_EQ(t.kind(at(t, root, "bytes")), Kind::bytes);
      EXPECT_EQ(t.as_string(at(t, root, "bytes")), "\x00\x01"s);
      EXPECT_EQ(t.as_string(at(t, root, "long_bytes")), std::string(300, 'y'));
    }
  }
}

TEST(PickleTree, ReadsTheLongFormsOfLengthsAndIntegers) {
  // BINUNICODE8 and BINBYTES8 (8-byte lengths), LONG4, BININT with a negative value.
  const PickleTree t = PickleTree::parse(
      "\x80\x04("s + "\x8d\x02\0\0\0\0\0\0\0ab"s + "\x8e\x01\0\0\0\0\0\0\0z"s + "\x8b\x02\0\0\0\xff\x7f"s +
      "J\xfe\xff\xff\xff"s + "\x8a\x00"s + "\x8a\x01\xff"s + "t."s);
  const auto items = t.items(t.root());
  ASSERT_EQ(items.size(), 6u);
  EXPECT_EQ(t.as_string(items[0]), "ab");
  EXPECT_EQ(t.as_string(items[1]), "z");
  EXPECT_EQ(t.as_int(items[2]), 0x7fff);
  EXPECT_EQ(t.as_int(items[3]), -2);
  EXPECT_EQ(t.as_int(items[4]), 0);
  EXPECT_EQ(t.as_int(items[5]), -1);
}

TEST(PickleTree, RefusesCodeByNameAndOffset) {
  const std::string why = "it refers to Python code (a class or a function)";
  expect_refusal("\x80\x02" "c__builtin__\nprint\n)R."s, "pickle opcode GLOBAL (0x63) at offset 2: " + why);
  expect_refusal("\x80\x04\x8c\x08" "builtins\x8c\x05print\x93)R."s, "pickle opcode STACK_GLOBAL (0x93) at offset 19: " + why);
  expect_refusal("\x80\x02N)R."s, "pickle opcode REDUCE (0x52) at offset 4: " + why);
  expect_refusal("\x80\x02}}b."s, "pickle opcode BUILD (0x62) at offset 4: " + why);
  expect_refusal("\x80\x02(i__main__\nX\n."s, "pickle opcode INST (0x69) at offset 3: " + why);
  expect_refusal("\x80\x02(N)o."s, "pickle opcode OBJ (0x6f) at offset 5: " + why);
  expect_refusal("\x80\x02N)\x81."s, "pickle opcode NEWOBJ (0x81) at offset 4: " + why);
  expect_refusal("\x80\x02\x82\x01."s, "pickle opcode EXT1 (0x82) at offset 2: " + why);
  expect_refusal("\x80\x02N" "Q."s, "pickle opcode BINPERSID (0x51) at offset 3: " + why);
}

TEST(PickleTree, RefusesWhatItDoesNotTake) {
  expect_refusal("\x80\x02\xff."s, "unknown pickle opcode 0xff at offset 2: not a pickle, or a damaged one");
  expect_refusal("(lp0\n."s, "pickle opcode LIST (0x6c) at offset 1: not supported");
  expect_refusal("\x80\x04\x8f."s, "pickle opcode EMPTY_SET (0x8f) at offset 2: not supported");
  expect_refusal("\x80\x06N."s, "pickle opcode PROTO (0x80) at offset 0: protocol 6; this reader takes protocols 2 to 5");
  expect_refusal("\x80\x04" "a."s, "pickle opcode APPEND (0x61) at offset 2: it needs a value");
  expect_refusal("\x80\x04}K\x01" "a."s, "pickle opcode APPEND (0x61) at offset 5: it adds to a list, but the value under its items is a dict");
  expect_refusal("\x80\x04}(K\x01u."s, "pickle opcode SETITEMS (0x75) at offset 6: it has an odd number of values");
  expect_refusal("\x80\x04" "e."s, "pickle opcode APPENDS (0x65) at offset 2: there is no MARK before it");
  expect_refusal("\x80\x04h\x05."s, "pickle opcode BINGET (0x68) at offset 2: memo entry 5 was never stored");
  expect_refusal("\x80\x04."s, "pickle opcode STOP (0x2e) at offset 2: the stack is empty");
}

TEST(PickleTree, SaysATruncatedFileIsTruncated) {
  const std::string whole = fixture("whatif_small.pickle");
  for (std::size_t cut : {std::size_t{1}, std::size_t{3}, whole.size() / 2, whole.size() - 1}) {
    SCOPED_TRACE(cut);
    EXPECT_NE(refusal(whole.substr(0, cut)).find("the file is truncated"), std::string::npos) << refusal(whole.substr(0, cut));
  }
  expect_refusal("\x80\x04N"s, "the input ends at offset 3 without the STOP opcode: the file is truncated");
  expect_refusal("\x80\x04\x8c\x10" "ab"s, "pickle opcode SHORT_BINUNICODE (0x8c) at offset 2: it needs 16 more bytes");
  // A huge length is checked against what remains before anything is allocated.
  expect_refusal("\x80\x04\x8d\0\0\0\0\0\0\0\x40" "ab."s, "it needs 4611686018427387904 more bytes but the input ends");
  expect_refusal("\x80\x04\x95\0\0\0\x01\0\0\0\0N."s, "pickle opcode FRAME (0x95) at offset 2: its frame of 16777216 bytes runs past the end");
}

TEST(PickleTree, NestingCostsNoRecursionAndMarksHaveALimit) {
  // 200,000 lists, each appended into the one before it: no MARK, and no recursion anywhere.
  constexpr int kDepth = 200000;
  const PickleTree t = PickleTree::parse("\x80\x04"s + std::string(kDepth, ']') + std::string(kDepth - 1, 'a') + ".");
  PickleTree::Id node = t.root();
  int depth = 1;
  while (!t.items(node).empty()) {
    node = t.items(node)[0];
    ++depth;
  }
  EXPECT_EQ(depth, kDepth);
  expect_refusal("\x80\x04"s + std::string(1001, '('), "pickle opcode MARK (0x28) at offset 1002: more than 1000 nested MARKs");
  // A list that holds itself is a value like any other: nothing walks into it blindly.
  const PickleTree self = PickleTree::parse("\x80\x04]\x94h\x00" "a."s);
  EXPECT_EQ(self.items(self.root())[0], self.root());
}

TEST(PickleTree, LimitsBoundItsMemory) {
  PickleLimits few;
  few.max_nodes = 100;
  EXPECT_NE(refusal("\x80\x04("s + std::string(200, ']') + "l."s, few).find("more than 100 values"), std::string::npos);
  PickleLimits shallow;
  shallow.max_stack = 50;
  EXPECT_NE(refusal("\x80\x04"s + std::string(60, 'N') + "."s, shallow).find("more than 50 values on the stack"),
            std::string::npos);
}

}  // namespace
}  // namespace cudakit::memory
