// Host tier: the safetensors header parser, and whole checkpoints written and loaded on the host.
#include "cudakit/gds/safetensors.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>

#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/tensor/storage.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::gds {
namespace {

// A file's first bytes: the little-endian length, then the JSON.
std::string with_length(const std::string& json) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((json.size() >> (8 * i)) & 0xFF);
  return out + json;
}

std::string refusal(const std::string& bytes, std::optional<std::uint64_t> file_size = {}) {
  try {
    (void)parse_safetensors_header(bytes, file_size);
  } catch (const InvalidArgumentError& error) {
    return error.what();
  }
  ADD_FAILURE() << "accepted: " << bytes.substr(8);
  return {};
}

TEST(SafetensorsHeader, ParsesTensorsInDataOrderWithMetadata) {
  const std::string bytes = with_length(
      R"({"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[16,28]},)"
      R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
      R"("__metadata__":{"format":"pt"},"e":{"dtype":"I64","shape":[0],"data_offsets":[28,28]}})");
  const SafetensorsHeader header = parse_safetensors_header(bytes, bytes.size() + 28);
  EXPECT_EQ(header.data_offset, bytes.size());
  EXPECT_EQ(header.data_bytes, 28u);
  ASSERT_EQ(header.tensors.size(), 3u);
  EXPECT_EQ(header.tensors[0].name, "a");
  EXPECT_EQ(header.tensors[1].name, "b");
  EXPECT_EQ(header.tensors[1].cudakit_dtype, tensor::DType::bfloat16);
  EXPECT_EQ(header.tensors[1].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(header.tensors[2].end - header.tensors[2].begin, 0u);
  EXPECT_EQ(header.metadata.at("format"), "pt");
}

TEST(SafetensorsHeader, RefusesEachKindOfDamageSayingWhat) {
  EXPECT_NE(refusal("abc").find("only 3 bytes"), std::string::npos);
  std::string huge(8, '\xff');
  EXPECT_NE(refusal(huge).find("exceeds safetensors' limit"), std::string::npos);
  EXPECT_NE(refusal(with_length("{}").substr(0, 9)).find("header of 2 bytes, but only 1 follow"), std::string::npos);
  EXPECT_NE(refusal(with_length("{\"a\":")).find("the header:1:6: not valid JSON"), std::string::npos);
  EXPECT_NE(refusal(with_length("[1]")).find("not a JSON object"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"shape":[1],"data_offsets":[0,4]}})")).find("tensor \"a\" has no string \"dtype\""), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})")).find("unknown dtype \"F33\""), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})")).find("dimension is not a non-negative integer: -1"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}})")).find("no \"data_offsets\" pair"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})")).find("end before they begin"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})")).find("needs 12 bytes, but its data_offsets [0, 8] hold 8"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})")).find("more than 2^64"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})")).find("overlap"), std::string::npos);
  EXPECT_NE(refusal(with_length(R"({"__metadata__":{"k":1}})")).find("value of \"k\" is not a string"), std::string::npos);
  const std::string past = with_length(R"({"a":{"dtype":"U8","shape":[40],"data_offsets":[0,40]}})");
  EXPECT_NE(refusal(past, past.size() + 10).find("past the end of the file"), std::string::npos);
}

TEST(Safetensors, SavedCheckpointLoadsBackOnTheHost) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "model.safetensors";
  std::map<std::string, tensor::Tensor> tensors{
      {"weight", tensor::arange(0.0, 300.0, 0.5, {.dtype = tensor::DType::float32}).view({20, 30})},
      {"bias", tensor::arange(7.0, {.dtype = tensor::DType::int64})},
      {"empty", tensor::zeros({0, 4}, {.dtype = tensor::DType::float64})}};
  GdsOptions options;
  options.chunk_bytes = 4096;
  options.io_threads = 2;
  options.cufile = CuFileUse::never;
  (void)save_safetensors(path, tensors, {{"step", "42"}}, {.atomic = true}, options);
  // The layout the format prescribes: length, JSON padded to 8 bytes, tensors in name order.
  const std::string bytes = cudakit::testing::read_file(path);
  const SafetensorsHeader header = parse_safetensors_header(bytes, bytes.size());
  EXPECT_EQ(header.data_offset % 8, 0u);
  EXPECT_EQ(bytes.size(), header.data_offset + 2400 + 56);
  const SafetensorsLoad loaded = load_safetensors(path, tensor::Device::cpu(), options);
  EXPECT_EQ(loaded.metadata.at("step"), "42");
  ASSERT_EQ(loaded.tensors.size(), 3u);
  EXPECT_EQ(loaded.tensors.at("weight").sizes(), (tensor::Shape{20, 30}));
  EXPECT_EQ(loaded.tensors.at("weight").to_vector<float>(), tensors.at("weight").to_vector<float>());
  EXPECT_EQ(loaded.tensors.at("bias").to_vector<std::int64_t>(), tensors.at("bias").to_vector<std::int64_t>());
  EXPECT_EQ(loaded.tensors.at("empty").numel(), 0);
  EXPECT_EQ(loaded.report.bytes, 2456u);
}

// A file just written is in the page cache: a host load maps it (See Note [Host loads of cached
// files]), and writes to its tensors stay in the process.
TEST(Safetensors, ACachedFileLoadsOnTheHostAsItsPagesAndWritesStayPrivate) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "cached.safetensors";
  const std::map<std::string, tensor::Tensor> tensors{
      {"w", tensor::arange(0.0, 64.0, 1.0, {.dtype = tensor::DType::float32}).view({8, 8})},
      {"i", tensor::arange(5.0, {.dtype = tensor::DType::int64})}};
  (void)save_safetensors(path, tensors);
  const std::string before = cudakit::testing::read_file(path);
  {
    const SafetensorsLoad loaded = load_safetensors(path, tensor::Device::cpu());
    EXPECT_EQ(loaded.report.path, IoPath::mapped) << loaded.report.to_string();
    EXPECT_EQ(loaded.report.bytes, 256u + 40u);
    EXPECT_EQ(loaded.report.requests, 2u);
    EXPECT_TRUE(loaded.tensors.at("w").storage()->is_external());
    EXPECT_EQ(loaded.tensors.at("w").to_vector<float>(), tensors.at("w").to_vector<float>());
    EXPECT_EQ(loaded.tensors.at("i").to_vector<std::int64_t>(), tensors.at("i").to_vector<std::int64_t>());
    tensor::Tensor w = loaded.tensors.at("w");
    w.fill_(7.0);
    EXPECT_EQ(w.to_vector<float>(), std::vector<float>(64, 7.0f));
    EXPECT_EQ(cudakit::testing::read_file(path), before) << "a write to a mapped tensor reached the file";
    // Converted on load: read from the pages, the file untouched.
    SafetensorsReadOptions to_double;
    to_double.dtype = tensor::DType::float64;
    const SafetensorsLoad converted = load_safetensors(path, tensor::Device::cpu(), to_double);
    EXPECT_EQ(converted.tensors.at("w").dtype(), tensor::DType::float64);
    EXPECT_EQ(converted.tensors.at("w").to_vector<double>()[63], 63.0);
  }
  SafetensorsReadOptions copy;
  copy.map_cached_host_file = false;
  const SafetensorsLoad read = load_safetensors(path, tensor::Device::cpu(), copy);
  EXPECT_NE(read.report.path, IoPath::mapped) << read.report.to_string();
  EXPECT_FALSE(read.tensors.at("w").storage()->is_external());
  EXPECT_EQ(read.tensors.at("w").to_vector<float>(), tensors.at("w").to_vector<float>());
}

// A tensor whose bytes sit off its element size's alignment in the file is read, the others mapped.
TEST(Safetensors, AMisalignedTensorOfACachedFileIsRead) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "odd.safetensors";
  std::string json = R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"F32","shape":[2],"data_offsets":[3,11]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  const float values[2] = {1.5f, -2.25f};
  std::string data = "xyz" + std::string(reinterpret_cast<const char*>(values), sizeof values);
  cudakit::testing::write_file(path, with_length(json) + data);
  const SafetensorsLoad loaded = load_safetensors(path, tensor::Device::cpu());
  EXPECT_TRUE(loaded.tensors.at("a").storage()->is_external());
  EXPECT_FALSE(loaded.tensors.at("b").storage()->is_external());
  EXPECT_EQ(loaded.tensors.at("b").to_vector<float>(), (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(loaded.tensors.at("a").to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{'x', 'y', 'z'}));
  EXPECT_EQ(loaded.report.bytes, 11u);
  EXPECT_NE(loaded.report.note.find("1 tensor(s), 3 bytes, mapped"), std::string::npos) << loaded.report.note;
}

// While host tensors map a file, cudakit never truncates it: a save replaces it (the tensors keep
// the old bytes), and GdsFile refuses O_TRUNC; once they are gone, both are as before.
TEST(Safetensors, AMappedFileIsReplacedNeverTruncated) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "live.safetensors";
  (void)save_safetensors(path, {{"x", tensor::full({1024}, 1.0, {.dtype = tensor::DType::float32})}});
  {
    const SafetensorsLoad old = load_safetensors(path, tensor::Device::cpu());
    ASSERT_EQ(old.report.path, IoPath::mapped);
    (void)save_safetensors(path, {{"y", tensor::full({4}, 2.0, {.dtype = tensor::DType::float32})}});
    EXPECT_EQ(old.tensors.at("x").to_vector<float>(), std::vector<float>(1024, 1.0f)) << "the old pages stay";
    EXPECT_EQ(load_safetensors(path, tensor::Device::cpu()).tensors.at("y").to_vector<float>(),
              std::vector<float>(4, 2.0f));
    const SafetensorsLoad again = load_safetensors(path, tensor::Device::cpu());
    try {
      GdsFile truncating(path, O_RDWR | O_TRUNC);
      ADD_FAILURE() << "truncated a mapped file";
    } catch (const InvalidArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find("will not truncate"), std::string::npos) << error.what();
    }
  }
  GdsFile truncating(path, O_RDWR | O_TRUNC);  // nothing maps it now
  EXPECT_EQ(truncating.size(), 0u);
}

TEST(Safetensors, TruncatedCheckpointIsRefusedNamingThePath) {
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "cut.safetensors";
  cudakit::testing::write_file(path, with_length(R"({"a":{"dtype":"F32","shape":[100],"data_offsets":[0,400]}})") + std::string(100, 'x'));
  try {
    (void)load_safetensors(path, tensor::Device::cpu());
    ADD_FAILURE() << "loaded a truncated file";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("cut.safetensors"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("past the end of the file"), std::string::npos) << error.what();
  }
  cudakit::testing::write_file(path, "abc");
  EXPECT_THROW((void)load_safetensors(path, tensor::Device::cpu()), InvalidArgumentError);
}

}  // namespace
}  // namespace cudakit::gds
