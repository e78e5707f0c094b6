// GPU tier of the GDS layer: loads into and saves from device memory, tensors, safetensors, the
// asynchronous forms, and which path ran (cuFile where nvidia-fs takes the file, else cudakit's
// engine: the report must say so either way).
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/gds/gds_file.hpp"
#include "cudakit/gds/io_error.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/gpu_test.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::gds {
namespace {

std::string pattern(std::size_t bytes, unsigned seed = 1) { return cudakit::testing::patterned_bytes(bytes, seed); }

GdsOptions engine_options() {
  GdsOptions options;
  options.chunk_bytes = 65536;
  options.io_threads = 4;
  options.page_cache_check = false;  // the file was just written: read it with O_DIRECT anyway
  options.cold_reads = ColdReads::direct;  // and not through the page cache, whatever was measured
  return options;
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&memory_, bytes), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(memory_); }
  [[nodiscard]] void* get() const { return memory_; }
  [[nodiscard]] std::string read(std::size_t bytes) const {
    std::string out(bytes, '\0');
    EXPECT_EQ(cudaMemcpy(out.data(), memory_, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* memory_ = nullptr;
};

// Which path a device transfer must report on this machine.
void expect_device_path(const GdsFile& file, const IoReport& report) {
  if (file.handle_registered()) {
    EXPECT_EQ(report.path, nvidia_fs_version().empty() ? IoPath::cufile_compat : IoPath::cufile_direct)
        << report.to_string();
  } else {
    EXPECT_EQ(report.path, file.o_direct() ? IoPath::cudakit_odirect : IoPath::buffered) << report.to_string();
    EXPECT_NE(report.note.find("cuFile: " + file.cufile_status()), std::string::npos) << report.to_string();
  }
  if (nvidia_fs_version().empty()) EXPECT_NE(report.path, IoPath::cufile_direct);
}

TEST(GdsFileGpu, LoadsIntoDeviceMemoryAndSaysWhichPathRan) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::testing::ScratchDir dir;
  const std::string bytes = pattern((3u << 20) + 123, 1);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, engine_options());
  DeviceBuffer device(bytes.size());
  const IoReport report = file.load(device.get(), bytes.size(), 0);
  EXPECT_EQ(device.read(bytes.size()), bytes);
  EXPECT_EQ(report.bytes, bytes.size());
  expect_device_path(file, report);
  // An unaligned piece from the middle.
  const IoReport piece = file.load(device.get(), 100001, 4097);
  EXPECT_EQ(device.read(100001), bytes.substr(4097, 100001));
  expect_device_path(file, piece);
  std::printf("cudakit: %s\ncuFile: %s\n", report.to_string().c_str(), file.cufile_status().c_str());
}

TEST(GdsFileGpu, SavesFromDeviceMemoryAtUnalignedOffsets) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::testing::ScratchDir dir;
  const std::string bytes = pattern((1u << 20) + 77, 2);
  DeviceBuffer device(bytes.size());
  ASSERT_EQ(cudaMemcpy(device.get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  {
    GdsFile file(dir.path() / "out.bin", O_RDWR | O_CREAT, engine_options());
    const IoReport report = file.save(device.get(), bytes.size(), 513);
    EXPECT_EQ(report.bytes, bytes.size());
    expect_device_path(file, report);
  }
  EXPECT_EQ(cudakit::testing::read_file(dir.path() / "out.bin"), std::string(513, '\0') + bytes);
}

TEST(GdsFileGpu, TensorsLoadAsynchronouslyOnAStream) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::testing::ScratchDir dir;
  const tensor::Tensor source = tensor::arange(0.0, 250000.0, 1.0, {.dtype = tensor::DType::float32, .device = tensor::Device::cuda(0)});
  Stream stream(0);
  stream.wait_stream(current_stream(0));  // arange ran there: the save's copies come after it
  {
    GdsFile file(dir.path() / "t.bin", O_RDWR | O_CREAT, engine_options());
    IoTicket saving = file.save_async(source, 0, stream.ref());
    EXPECT_EQ(saving.wait().bytes, source.nbytes());
  }
  GdsFile file(dir.path() / "t.bin", O_RDONLY, engine_options());
  const tensor::Tensor loaded = tensor::zeros({250000}, {.dtype = tensor::DType::float32, .device = tensor::Device::cuda(0)}, stream.ref());
  IoTicket loading = file.load_async(loaded, 0, stream.ref());
  const IoReport report = loading.wait();
  stream.synchronize();
  EXPECT_EQ(report.bytes, source.nbytes());
  EXPECT_EQ(loaded.to_vector<float>(stream.ref()), source.to_vector<float>());
}

TEST(GdsFileGpu, SafetensorsCheckpointLoadsStraightIntoDeviceMemory) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::testing::ScratchDir dir;
  const auto cuda = tensor::Device::cuda(0);
  const std::map<std::string, tensor::Tensor> tensors{
      {"layer.0.weight", tensor::arange(0.0, 65536.0, 1.0, {.dtype = tensor::DType::float32, .device = cuda}).view({256, 256})},
      {"layer.0.bias", tensor::arange(0.0, 256.0, 1.0, {.dtype = tensor::DType::bfloat16, .device = cuda})},
      {"step", tensor::full({1}, 7.0, {.dtype = tensor::DType::int64, .device = cuda})}};
  const auto path = dir.path() / "model.safetensors";
  (void)save_safetensors(path, tensors, {{"format", "pt"}}, {.atomic = true}, engine_options());
  const SafetensorsLoad loaded = load_safetensors(path, cuda, engine_options());
  ASSERT_EQ(loaded.tensors.size(), 3u);
  for (const auto& [name, t] : tensors) {
    const tensor::Tensor& got = loaded.tensors.at(name);
    EXPECT_EQ(got.device(), cuda) << name;
    EXPECT_EQ(got.sizes(), t.sizes()) << name;
    EXPECT_EQ(got.to(tensor::DType::float64).to_vector<double>(), t.to(tensor::DType::float64).to_vector<double>()) << name;
  }
  EXPECT_EQ(loaded.metadata.at("format"), "pt");
}

TEST(GdsFileGpu, RequiringCuFileEitherRegistersOrSaysWhyNot) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::testing::ScratchDir dir;
  cudakit::testing::write_file(dir.path() / "data.bin", pattern(1u << 20, 3));
  GdsOptions options = engine_options();
  options.cufile = CuFileUse::required;
  try {
    GdsFile file(dir.path() / "data.bin", O_RDONLY, options);
    ASSERT_TRUE(file.handle_registered());
    DeviceBuffer device(1u << 20);
    const IoReport report = file.load(device.get(), 1u << 20, 0);
    EXPECT_EQ(device.read(1u << 20), pattern(1u << 20, 3));
    EXPECT_TRUE(report.path == IoPath::cufile_direct || report.path == IoPath::cufile_compat) << report.to_string();
    std::printf("cuFile took the file: %s\n", report.to_string().c_str());
  } catch (const CuFileError& error) {
    EXPECT_NE(std::string(error.what()).find("register_handle"), std::string::npos) << error.what();
    std::printf("cuFile refused, as reported: %s\n", error.what());
  }
}

TEST(GdsFileGpu, PinnedHostMemoryTakesTheHostPath) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::testing::ScratchDir dir;
  const std::string bytes = pattern(200000, 4);
  cudakit::testing::write_file(dir.path() / "data.bin", bytes);
  GdsFile file(dir.path() / "data.bin", O_RDONLY, engine_options());
  void* pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned, bytes.size(), cudaHostAllocDefault), cudaSuccess);
  const IoReport report = file.load(pinned, bytes.size(), 0);
  EXPECT_EQ(std::string(static_cast<char*>(pinned), bytes.size()), bytes);
  EXPECT_NE(report.path, IoPath::cufile_direct);
  EXPECT_NE(report.path, IoPath::cufile_compat);
  cudaFreeHost(pinned);
}

}  // namespace
}  // namespace cudakit::gds
