// Host tier: reading the entry function of jiterator code.

#include <gtest/gtest.h>

#include "cudakit/core/error.hpp"
#include "jiterator/detail/entry_function.hpp"
#include "support/expect_refused.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::testing::expect_refused;
using Kind = EntryParameter::Kind;

EntryFunction parse(std::string_view code, std::vector<std::string> scalars = {}, int outputs = 1) {
  return parse_entry_function(code, outputs, "test", scalars);
}

TEST(EntryFunction, ReadsTheLastFunctionAndItsParameters) {
  const EntryFunction e = parse(R"code(
    // helper { with a brace in a comment }
    template <typename T> T twice(T v) { return v + v; }
    /* a "block" comment ) { */
    template <typename scalar_t>
    scalar_t axpy(const scalar_t& x, scalar_t y, float alpha) {
      const char* s = "})";  // a string with a brace
      return alpha * twice(x) + y;
    }
  )code", {"alpha"});
  EXPECT_EQ(e.name, "axpy");
  EXPECT_EQ(e.template_parameter, "scalar_t");
  EXPECT_FALSE(e.returns_void);
  ASSERT_EQ(e.parameters.size(), 3u);
  EXPECT_EQ(e.parameters[0].kind, Kind::input);
  EXPECT_EQ(e.parameters[0].name, "x");
  EXPECT_EQ(e.parameters[1].kind, Kind::input);
  EXPECT_EQ(e.parameters[1].index, 1);
  EXPECT_EQ(e.parameters[2].kind, Kind::scalar);
  EXPECT_EQ(e.parameters[2].type, "float");
  EXPECT_EQ(e.inputs, 2);
  EXPECT_EQ(e.scalars, 1);
  EXPECT_EQ(e.outputs, 0);
}

TEST(EntryFunction, ScalarParametersMayBeInterleavedAndOfTypeT) {
  const EntryFunction e = parse("template <class T> T f(T beta, T a, T alpha, T b) { return alpha * a + beta * b; }",
                                {"alpha", "beta"});
  EXPECT_EQ(e.inputs, 2);
  EXPECT_EQ(e.scalars, 2);
  EXPECT_EQ(e.parameters[0].kind, Kind::scalar);
  EXPECT_EQ(e.parameters[0].index, 0);
  EXPECT_EQ(e.parameters[2].kind, Kind::scalar);
  EXPECT_EQ(e.parameters[2].index, 1);
  EXPECT_EQ(e.parameters[3].index, 1);  // second input
}

TEST(EntryFunction, MultiOutputFunctionsWriteToReferences) {
  const EntryFunction e = parse("template <typename T> void sincos(T x, T& s, T& c) { s = sin(x); c = cos(x); }", {}, 2);
  EXPECT_TRUE(e.returns_void);
  EXPECT_EQ(e.inputs, 1);
  EXPECT_EQ(e.outputs, 2);
  EXPECT_EQ(e.parameters[2].kind, Kind::output);
  EXPECT_EQ(e.parameters[2].index, 1);
}

TEST(EntryFunction, SixteenInputsAreTheLimit) {
  std::string params, body = "0";
  for (int i = 0; i < 17; ++i) {
    params += (i ? ", T x" : "T x") + std::to_string(i);
    body += " + x" + std::to_string(i);
  }
  expect_refused([&] { (void)parse("template <typename T> T f(" + params + ") { return " + body + "; }"); },
                 "takes 17 inputs; at most 16");
  const std::string sixteen = params.substr(0, params.rfind(", T x16"));
  EXPECT_EQ(parse("template <typename T> T f(" + sixteen + ") { return x0; }").inputs, 16);
}

TEST(EntryFunction, RefusesWhatItCannotUseWithTheReason) {
  expect_refused([] { (void)parse("int x = 3;"); }, "no function found");
  expect_refused([] { (void)parse("float f(float a) { return a; }"); }, "must be a template of one type");
  expect_refused([] { (void)parse("template <typename T, int N> T f(T a) { return a; }"); },
                 "exactly one template parameter");
  expect_refused([] { (void)parse("template <typename T> T f(T a, int n) { return a * n; }"); },
                 "parameter `n` of `f` has type `int`");
  expect_refused([] { (void)parse("template <typename T> T f(T a) { return a; }", {"alpha"}); },
                 "the defaults name `alpha`, which is no parameter of `f` (its parameters: a)");
  expect_refused([] { (void)parse("template <typename T> T f(T a, T b = 1) { return a; }"); }, "has a default in the code");
  expect_refused([] { (void)parse("template <typename T> T f(T a) { return a; "); }, "braces do not balance");
  expect_refused([] { (void)parse("template <typename T> void f(T a, T& o) { o = a; }", {}, 2); },
                 "has 1 output parameters (T&), but 2 outputs were asked for");
  expect_refused([] { (void)parse("template <typename T> T f(T a, T& o) { return a; }", {}, 2); }, "must return void");
  expect_refused([] { (void)parse("template <typename T> T f(T a, T& o) { return a; }"); }, "returns a value and also has output");
  expect_refused([] { (void)parse("template <typename T> T f(float s) { return s; }", {"s"}); }, "takes no input");
}

}  // namespace
}  // namespace cudakit::jiterator::detail
