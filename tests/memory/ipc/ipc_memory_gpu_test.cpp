// GPU tier: a caching-allocator block shared with a second process (tests/memory/
// ipc_memory_child.cpp) on the same GPU, in both kinds: legacy (cudaMalloc segments,
// cudaIpcGetMemHandle) and expandable (cuMemCreate chunks as file descriptors over a socket).
// CUDA does not survive fork(), so the child is a program of its own, started with posix_spawn.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/ipc/ipc_memory.hpp"
#include "cudakit/memory/ipc/ipc_memory_export.hpp"
#include "cudakit/memory/ipc/ipc_socket.hpp"
#include "support/gpu_test.hpp"
#include "support/paths.hpp"

extern char** environ;

namespace cudakit::memory {
namespace {

constexpr std::size_t kBytes = std::size_t{4} << 20;
constexpr int kWritten = 0x5A;  // by this process, read by the child
constexpr int kAnswer = 0xA5;   // by the child, read back here

// The child, connected to this process by a socketpair.
class Child {
 public:
  Child() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    mine_ = fds[0];
    ::fcntl(mine_, F_SETFD, FD_CLOEXEC);  // only the child's end is inherited
    const std::string path = cudakit::testing::bin_dir() + "/cudakit_ipc_memory_child";
    std::vector<std::string> args = {path, std::to_string(fds[1]), std::to_string(kWritten), std::to_string(kAnswer)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(::posix_spawn(&pid_, path.c_str(), nullptr, nullptr, argv.data(), environ), 0) << path;
    ::close(fds[1]);
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      (void)wait();
    }
    ::close(mine_);
  }
  [[nodiscard]] int socket() const { return mine_; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  // The child's next answer byte; 0 when it closed the socket.
  char answer() const {
    char c = 0;
    return ::read(mine_, &c, 1) == 1 ? c : 0;
  }
  void command(char c) const { ASSERT_EQ(::write(mine_, &c, 1), 1); }
  int wait() {
    int status = 0;
    EXPECT_EQ(::waitpid(pid_, &status, 0), pid_);
    pid_ = -1;
    return status;
  }
  void kill() {
    ASSERT_EQ(::kill(pid_, SIGKILL), 0);
    const int status = wait();
    EXPECT_TRUE(WIFSIGNALED(status));
  }

 private:
  int mine_ = -1;
  pid_t pid_ = -1;
};

bool every_byte_is(const void* device_ptr, std::size_t bytes, int value) {
  std::vector<unsigned char> host(bytes);
  EXPECT_EQ(cudaMemcpy(host.data(), device_ptr, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned char b : host) {
    if (b != value) return false;
  }
  return true;
}

enum class Ending { closes, is_killed };

struct Case {
  bool expandable;
  Ending ending;
  bool anonymous;  // exported naming no importer (the receiver claims it)
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.expandable ? "Expandable" : "Legacy") +
         (info.param.ending == Ending::closes ? "ImporterCloses" : "ImporterIsKilled") +
         (info.param.anonymous ? "Anonymous" : "");
}

class IpcMemoryGpu : public ::testing::TestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(Kinds, IpcMemoryGpu,
                         ::testing::Values(Case{false, Ending::closes, false}, Case{true, Ending::closes, false},
                                           Case{false, Ending::is_killed, false},
                                           Case{true, Ending::is_killed, false},
                                           Case{true, Ending::closes, true}, Case{true, Ending::is_killed, true}),
                         case_name);

// The whole life of a shared block: the exporter writes and frees it at once; the child opens
// it, reads what was written and answers; the exporter's allocator does not reuse the block
// while the child holds it, and reuses it after the child closed it (or was killed) and
// ipc_collect() ran.
TEST_P(IpcMemoryGpu, ABlockOutlivesItsFreeUntilTheImporterLetsGo) {
  CUDAKIT_REQUIRE_GPU();
  const Case c = GetParam();
  auto provider = std::make_shared<CudaSegmentProvider>(0);
  if (c.expandable && (provider->page_size() == 0 || !provider->exports_file_descriptors())) {
    GTEST_SKIP() << "device 0 cannot export expandable memory as file descriptors";
  }
  AllocatorConfig config;
  config.expandable_segments = c.expandable;
  CachingAllocator allocator(0, provider, std::make_shared<CudaStreamEvents>(0), config);
  Stream stream(0);
  const auto key = reinterpret_cast<StreamKey>(stream.handle());
  void* block = allocator.allocate(kBytes, key);
  ASSERT_EQ(cudaMemsetAsync(block, kWritten, kBytes, stream.handle()), cudaSuccess);
  // Stream ordering: the writes are complete before the handle leaves.
  stream.synchronize();

  Child child;
  {
    IpcMemoryHandle handle = export_ipc_memory(allocator, block, c.anonymous ? 0 : child.pid());
    EXPECT_EQ(handle.kind, c.expandable ? IpcMemoryKind::expandable : IpcMemoryKind::legacy);
    EXPECT_EQ(handle.size, kBytes);
    send_ipc_handle(child.socket(), handle);
  }
  EXPECT_EQ(allocator.external_holds(block), 1u);
  allocator.deallocate(block);  // before the child even opened it
  void* meanwhile = allocator.allocate(kBytes, key);
  EXPECT_NE(meanwhile, block) << "a block held by another process was reused";

  ASSERT_EQ(child.answer(), 'k') << "the child could not open or read the block (see its stderr)";
  EXPECT_TRUE(every_byte_is(block, kBytes, kAnswer)) << "the child's writes are not visible here";
  EXPECT_EQ(ipc_collect(), 0u);  // the child holds it
  EXPECT_EQ(allocator.external_holds(block), 1u);
  void* still_meanwhile = allocator.allocate(kBytes, key);
  EXPECT_NE(still_meanwhile, block);

  if (c.ending == Ending::closes) {
    child.command('c');
    EXPECT_EQ(child.answer(), 'k');
    const int status = child.wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  } else {
    child.kill();  // dies holding the block open: its registration is never undone
  }
  EXPECT_EQ(ipc_collect(), 1u);
  EXPECT_EQ(allocator.external_holds(block), 0u);
  EXPECT_EQ(ipc_exported_blocks(), 0u);
  void* reused = allocator.allocate(kBytes, key);
  EXPECT_EQ(reused, block) << "the released block should serve the next request of its size";
  allocator.deallocate(reused);
  allocator.deallocate(meanwhile);
  allocator.deallocate(still_meanwhile);
  allocator.empty_cache();
}

// A block spanning several chunks of an expandable arena travels as several descriptors.
TEST(IpcMemoryGpuChunks, ABlockOverSeveralChunksIsMappedWhole) {
  CUDAKIT_REQUIRE_GPU();
  auto provider = std::make_shared<CudaSegmentProvider>(0);
  if (provider->page_size() == 0 || !provider->exports_file_descriptors()) {
    GTEST_SKIP() << "device 0 cannot export expandable memory as file descriptors";
  }
  CachingAllocator allocator(0, provider, std::make_shared<CudaStreamEvents>(0));
  Stream stream(0);
  const auto key = reinterpret_cast<StreamKey>(stream.handle());
  const std::size_t page = provider->page_size();
  // The first grows the arena by one page and leaves most of it free; the second takes that
  // free tail and one more growth: it lies across two chunks.
  void* first = allocator.allocate(page / 4, key);
  void* spanning = allocator.allocate(kBytes, key);
  ASSERT_GE(allocator.backing(spanning).ranges.size(), 2u);
  ASSERT_EQ(cudaMemsetAsync(spanning, kWritten, kBytes, stream.handle()), cudaSuccess);
  stream.synchronize();
  Child child;
  {
    IpcMemoryHandle handle = export_ipc_memory(allocator, spanning, child.pid());
    EXPECT_GE(handle.chunk_sizes.size(), 2u);
    EXPECT_EQ(handle.fds.size(), handle.chunk_sizes.size());
    send_ipc_handle(child.socket(), handle);
  }
  ASSERT_EQ(child.answer(), 'k') << "the child could not open or read the block (see its stderr)";
  EXPECT_TRUE(every_byte_is(spanning, kBytes, kAnswer));
  child.command('c');
  EXPECT_EQ(child.answer(), 'k');
  EXPECT_EQ(WEXITSTATUS(child.wait()), 0);
  allocator.deallocate(spanning);
  EXPECT_EQ(ipc_collect(), 1u);
  allocator.deallocate(first);
}

// Exporting from the default device allocator, and what is refused.
TEST(IpcMemoryGpuErrors, ExportRefusesWhatIsNotALiveAllocation) {
  CUDAKIT_REQUIRE_GPU();
  int on_host = 0;
  EXPECT_THROW((void)export_ipc_memory(&on_host), InvalidArgumentError);
  void* p = allocate(4096);
  EXPECT_THROW((void)export_ipc_memory(static_cast<char*>(p) + 512), InvalidArgumentError);  // not its start
  EXPECT_THROW((void)export_ipc_memory(p, ::getpid()), InvalidArgumentError);               // this process
  Child child;  // the handle is for it, but it is killed before it can open it
  {
    IpcMemoryHandle handle = export_ipc_memory(p, child.pid());
    EXPECT_EQ(handle.importer_pid, child.pid());
    // Opening one's own handle is refused before CUDA is asked.
    EXPECT_THROW((void)IpcMemory::open(std::move(handle)), InvalidArgumentError);
  }
  deallocate(p);
  EXPECT_EQ(ipc_collect(), 0u);  // reserved for a process that still runs
  child.kill();
  EXPECT_EQ(ipc_collect(), 1u);  // which died before opening it
  EXPECT_EQ(ipc_exported_blocks(), 0u);
}

}  // namespace
}  // namespace cudakit::memory
