// Host tier: every dtype safetensors 0.8 writes, byte for byte; tensors of dtypes cudakit lacks
// refused by name or taken as bytes; conversions on load; sharded checkpoints; headers that are
// not UTF-8 refused with the bytes escaped.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/gds/safetensors_index.hpp"
#include "cudakit/tensor/factories.hpp"
#include "gds/detail/utf8.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::gds {
namespace {

using tensor::DType;

std::string with_length(const std::string& json) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xFF);
  return out + json;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& error) {
    return error.what();
  }
  return "no InvalidArgumentError";
}

GdsOptions host_options() {
  GdsOptions options;
  options.cufile = CuFileUse::never;
  options.io_threads = 2;
  options.chunk_bytes = 4096;
  return options;
}

std::string bytes_of(const tensor::Tensor& t) {
  const tensor::Tensor host = t.to_host();
  return std::string(static_cast<const char*>(host.data_ptr()), host.nbytes());
}

// A tensor of `dtype` whose bytes are a pattern (valid bools for bool).
tensor::Tensor patterned(DType dtype, const tensor::Shape& shape, unsigned seed) {
  tensor::Tensor t = tensor::empty(shape, {.dtype = dtype});
  auto* p = static_cast<unsigned char*>(t.data_ptr());
  for (std::size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<unsigned char>((i * 131 + seed * 7) >> (i % 3));
  if (dtype == DType::bool_) for (std::size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  return t;
}

TEST(SafetensorsDTypes, HeaderKnowsEveryDtypeOfSafetensors08) {
  struct Row {
    const char* name;
    int bits;
    std::optional<DType> dtype;
  };
  const Row rows[] = {{"BOOL", 8, DType::bool_}, {"F4", 4, DType::float4_e2m1fn_x2}, {"F6_E2M3", 6, std::nullopt},
                      {"F6_E3M2", 6, std::nullopt}, {"U8", 8, DType::uint8}, {"I8", 8, DType::int8},
                      {"F8_E5M2", 8, DType::float8_e5m2}, {"F8_E4M3", 8, DType::float8_e4m3fn},
                      {"F8_E8M0", 8, DType::float8_e8m0fnu}, {"F8_E4M3FNUZ", 8, std::nullopt},
                      {"F8_E5M2FNUZ", 8, std::nullopt}, {"I16", 16, DType::int16}, {"U16", 16, DType::uint16},
                      {"F16", 16, DType::float16}, {"BF16", 16, DType::bfloat16}, {"I32", 32, DType::int32},
                      {"U32", 32, DType::uint32}, {"F32", 32, DType::float32}, {"C64", 64, DType::complex64},
                      {"F64", 64, DType::float64}, {"I64", 64, DType::int64}, {"U64", 64, DType::uint64}};
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const int n = 8;  // whole bytes for every width
    const std::string bytes = with_length(std::string(R"({"t":{"dtype":")") + row.name + R"(","shape":[2,)" +
                                          std::to_string(n / 2) + R"(],"data_offsets":[0,)" +
                                          std::to_string(n * row.bits / 8) + "]}}");
    const SafetensorsHeader header = parse_safetensors_header(bytes);
    ASSERT_EQ(header.tensors.size(), 1u);
    EXPECT_EQ(header.tensors[0].bits, row.bits);
    EXPECT_EQ(header.tensors[0].cudakit_dtype, row.dtype);
  }
  const std::string odd = error_of([] {
    (void)parse_safetensors_header(with_length(R"({"t":{"dtype":"F6_E2M3","shape":[3],"data_offsets":[0,2]}})"));
  });
  EXPECT_NE(odd.find("18 bits, which is not a whole number of bytes"), std::string::npos) << odd;
}

TEST(SafetensorsDTypes, EveryDtypeRoundTripsByteForByteOnTheHost) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "all.safetensors";
  std::map<std::string, tensor::Tensor> tensors;
  unsigned seed = 1;
  for (const DType dtype : {DType::bool_, DType::uint8, DType::int8, DType::int16, DType::uint16, DType::float16,
                            DType::bfloat16, DType::int32, DType::uint32, DType::float32, DType::complex64,
                            DType::float64, DType::int64, DType::uint64, DType::float8_e4m3fn, DType::float8_e5m2,
                            DType::float8_e8m0fnu, DType::float4_e2m1fn_x2}) {
    tensors.emplace(std::string(tensor::dtype_name(dtype)), patterned(dtype, {3, 5}, seed++));
  }
  (void)save_safetensors(path, tensors, {}, {}, host_options());
  const std::string file = cudakit::testing::read_file(path);
  const SafetensorsHeader header = parse_safetensors_header(file, file.size());
  for (const SafetensorsEntry& e : header.tensors) {
    if (e.name == "float4_e2m1fn_x2") {
      EXPECT_EQ(e.dtype, "F4");
      EXPECT_EQ(e.shape, (std::vector<std::int64_t>{3, 10}));  // values, two per byte
    }
    if (e.name == "float8_e8m0fnu") EXPECT_EQ(e.dtype, "F8_E8M0");
    if (e.name == "complex64") EXPECT_EQ(e.dtype, "C64");
  }
  const SafetensorsLoad loaded = load_safetensors(path, tensor::Device::cpu(), host_options());
  ASSERT_EQ(loaded.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const tensor::Tensor& back = loaded.tensors.at(name);
    EXPECT_EQ(back.dtype(), t.dtype()) << name;
    EXPECT_EQ(back.sizes(), t.sizes()) << name;
    EXPECT_EQ(bytes_of(back), bytes_of(t)) << name;
  }
  const std::string complex128 = error_of([&] {
    (void)save_safetensors(dir.path() / "c.safetensors", {{"z", tensor::zeros({2}, {.dtype = DType::complex128})}});
  });
  EXPECT_NE(complex128.find("complex128, which safetensors has no dtype for"), std::string::npos) << complex128;
}

TEST(SafetensorsDTypes, UnknownDtypesAreRefusedByNameOrTakenAsBytes) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "f6.safetensors";
  cudakit::testing::write_file(path, with_length(R"({"a":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]},)"
                                                 R"("b":{"dtype":"I8","shape":[2],"data_offsets":[3,5]}})") +
                                         "\x01\x02\x03\xfe\x7f");
  const std::string refused = error_of([&] { (void)load_safetensors(path, tensor::Device::cpu(), host_options()); });
  EXPECT_NE(refused.find("tensor \"a\" has dtype F6_E3M2, which cudakit's tensor lacks"), std::string::npos) << refused;
  EXPECT_NE(refused.find("raw_unknown_dtypes"), std::string::npos) << refused;
  const SafetensorsLoad loaded =
      load_safetensors(path, tensor::Device::cpu(), SafetensorsReadOptions{.raw_unknown_dtypes = true}, host_options());
  EXPECT_EQ(bytes_of(loaded.tensors.at("a")), "\x01\x02\x03");
  EXPECT_EQ(loaded.tensors.at("a").dtype(), DType::uint8);
  ASSERT_EQ(loaded.raw.size(), 1u);
  EXPECT_EQ(loaded.raw[0].dtype, "F6_E3M2");
  EXPECT_EQ(loaded.tensors.at("b").to_vector<std::int64_t>(), (std::vector<std::int64_t>{-2, 127}));
}

TEST(SafetensorsDTypes, DtypeConvertsModelFloatsOnLoadAndDtypesSingleTensors) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "mixed.safetensors";
  const tensor::Tensor w = tensor::arange(-3.0, 3.0, 0.25, {.dtype = DType::float32});
  const tensor::Tensor q = w.to(DType::float8_e4m3fn);
  (void)save_safetensors(path, {{"w", w}, {"q", q}, {"ids", tensor::arange(5.0, {.dtype = DType::int64})}}, {}, {},
                         host_options());
  SafetensorsReadOptions read;
  read.dtype = DType::bfloat16;
  read.dtypes["q"] = DType::float32;
  const SafetensorsLoad loaded = load_safetensors(path, tensor::Device::cpu(), read, host_options());
  EXPECT_EQ(loaded.tensors.at("w").dtype(), DType::bfloat16);
  EXPECT_EQ(bytes_of(loaded.tensors.at("w")), bytes_of(w.to(DType::bfloat16)));
  EXPECT_EQ(loaded.tensors.at("q").dtype(), DType::float32);
  EXPECT_EQ(bytes_of(loaded.tensors.at("q")), bytes_of(q.to(DType::float32)));
  EXPECT_EQ(loaded.tensors.at("ids").dtype(), DType::int64);  // integers keep theirs
  read.dtypes["missing"] = DType::float16;
  const std::string unknown = error_of([&] { (void)load_safetensors(path, tensor::Device::cpu(), read, host_options()); });
  EXPECT_NE(unknown.find("dtypes names tensor \"missing\""), std::string::npos) << unknown;
}

TEST(SafetensorsDTypes, HeaderThatIsNotUtf8IsRefusedWithTheBytesEscaped) {
  for (const std::string& json : {std::string("{\"w\xff\xfe\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}"),
                                  std::string("{\"__metadata__\":{\"k\":\"\xc0\xaf\"}}"),
                                  std::string("{\"\xed\xa0\x80\":1}"), std::string("{}  \x80")}) {
    const std::string message = error_of([&] { (void)parse_safetensors_header(with_length(json)); });
    EXPECT_NE(message.find("not valid UTF-8"), std::string::npos) << message;
    EXPECT_NE(message.find("\\x"), std::string::npos) << message;
    EXPECT_EQ(detail::first_invalid_utf8(message), std::string_view::npos) << message;
  }
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "bad\xff.safetensors";  // the path is quoted too
  cudakit::testing::write_file(path, with_length("{\"\xff\":1}"));
  const std::string message = error_of([&] { (void)load_safetensors(path, tensor::Device::cpu(), host_options()); });
  EXPECT_NE(message.find("bad\\xff.safetensors"), std::string::npos) << message;
  EXPECT_EQ(detail::first_invalid_utf8(message), std::string_view::npos) << message;
}

TEST(SafetensorsDTypes, Utf8CheckFollowsRfc3629) {
  EXPECT_EQ(detail::first_invalid_utf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(detail::first_invalid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(detail::first_invalid_utf8("ab\xc0\xaf"), 2u);     // overlong
  EXPECT_EQ(detail::first_invalid_utf8("\xed\xa0\x80"), 0u);   // surrogate
  EXPECT_EQ(detail::first_invalid_utf8("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(detail::first_invalid_utf8("x\xe2\x82"), 1u);      // cut short
  EXPECT_EQ(detail::escape_invalid_utf8("a\xff\xc3\xa9"), "a\\xff\xc3\xa9");
}

TEST(SafetensorsDTypes, ShardedCheckpointLoadsAsOne) {
  cudakit::testing::ScratchDir dir;
  const tensor::Tensor a = patterned(DType::float8_e4m3fn, {4, 4}, 3);
  const tensor::Tensor b = patterned(DType::bfloat16, {6}, 4);
  const tensor::Tensor s = tensor::full({}, 0.5, {.dtype = DType::float32});
  (void)save_safetensors(dir.path() / "model-00001-of-00002.safetensors", {{"a", a}, {"a_scale", s}},
                         {{"format", "pt"}}, {}, host_options());
  (void)save_safetensors(dir.path() / "model-00002-of-00002.safetensors", {{"b", b}}, {{"format", "pt"}}, {},
                         host_options());
  const auto index = dir.path() / "model.safetensors.index.json";
  cudakit::testing::write_file(index, R"({"metadata":{"total_size":46},"weight_map":{)"
                                      R"("a":"model-00001-of-00002.safetensors","a_scale":"model-00001-of-00002.safetensors",)"
                                      R"("b":"model-00002-of-00002.safetensors"}})");
  const SafetensorsLoad loaded = load_safetensors_index(index, tensor::Device::cpu(), {}, host_options());
  ASSERT_EQ(loaded.tensors.size(), 3u);
  EXPECT_EQ(bytes_of(loaded.tensors.at("a")), bytes_of(a));
  EXPECT_EQ(bytes_of(loaded.tensors.at("b")), bytes_of(b));
  EXPECT_EQ(loaded.metadata.at("total_size"), "46");
  EXPECT_EQ(loaded.metadata.at("format"), "pt");
  EXPECT_EQ(loaded.report.bytes, a.nbytes() + b.nbytes() + s.nbytes());

  cudakit::testing::write_file(index, R"({"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors"}})");
  std::string message = error_of([&] { (void)load_safetensors_index(index, tensor::Device::cpu(), {}, host_options()); });
  EXPECT_NE(message.find("puts tensor \"b\" in model-00001-of-00002.safetensors, which does not hold it"), std::string::npos)
      << message;
  (void)save_safetensors(dir.path() / "again.safetensors", {{"a", a}}, {}, {}, host_options());
  cudakit::testing::write_file(index, R"({"weight_map":{"a":"model-00001-of-00002.safetensors","z":"again.safetensors"}})");
  message = error_of([&] { (void)load_safetensors_index(index, tensor::Device::cpu(), {}, host_options()); });
  EXPECT_NE(message.find("tensor \"a\" is in both"), std::string::npos) << message;
  message = error_of([] { (void)parse_safetensors_index(R"({"weight_map":{"a":"../x.safetensors"}})"); });
  EXPECT_NE(message.find("not a file in the index's folder"), std::string::npos) << message;
  message = error_of([] { (void)parse_safetensors_index(R"({"weight_map":{"a":3}})"); });
  EXPECT_NE(message.find("mapped to 3, not a file name"), std::string::npos) << message;
  message = error_of([] { (void)parse_safetensors_index("{\"weight_map\":{\"\xff\":\"x\"}}"); });
  EXPECT_NE(message.find("not valid UTF-8 at byte offset 16"), std::string::npos) << message;
}

}  // namespace
}  // namespace cudakit::gds
