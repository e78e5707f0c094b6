// Host tier: IPC memory handles (their bytes, and the refusal of bad ones), the ref-count record
// that keeps an exported block alive (dead importers included), and descriptor passing over a
// Unix socket. Opening real device memory across processes is in ipc_memory_gpu_test.cpp.

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <thread>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/ipc/ipc_memory.hpp"
#include "cudakit/memory/ipc/ipc_memory_handle.hpp"
#include "cudakit/memory/ipc/ipc_socket.hpp"
#include "memory/ipc/detail/fd_passing.hpp"
#include "memory/ipc/detail/ipc_ref_record.hpp"
#include "memory/ipc/detail/process_identity.hpp"
#include "support/expect_refused.hpp"

namespace cudakit::memory {
namespace {
using cudakit::testing::expect_refused;
using detail::IpcRefRecord;
using detail::ProcessId;

IpcMemoryHandle sample(IpcMemoryKind kind) {
  IpcMemoryHandle h;
  h.kind = kind;
  h.boot_id = detail::boot_id();
  h.exporter_pid = 4242;
  h.exporter_start_time = 987654321;
  h.importer_pid = 77;
  h.device_uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  h.ref_record = "/cudakit_ipc_4242_987654321_0";
  h.size = 3u << 20;
  h.offset = 1u << 20;
  if (kind == IpcMemoryKind::legacy) {
    h.mapped_size = 20u << 20;
    for (std::size_t i = 0; i < h.legacy_handle.size(); ++i) h.legacy_handle[i] = static_cast<unsigned char>(i * 7);
  } else {
    h.chunk_sizes = {2u << 20, 4u << 20};
    h.mapped_size = 6u << 20;
  }
  return h;
}

void expect_same(const IpcMemoryHandle& a, const IpcMemoryHandle& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.boot_id, b.boot_id);
  EXPECT_EQ(a.exporter_pid, b.exporter_pid);
  EXPECT_EQ(a.exporter_start_time, b.exporter_start_time);
  EXPECT_EQ(a.importer_pid, b.importer_pid);
  EXPECT_EQ(a.device_uuid, b.device_uuid);
  EXPECT_EQ(a.ref_record, b.ref_record);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.mapped_size, b.mapped_size);
  EXPECT_EQ(a.legacy_handle, b.legacy_handle);
  EXPECT_EQ(a.chunk_sizes, b.chunk_sizes);
}

// Byte positions in the handle's layout (Note [IPC memory handle bytes]).
constexpr std::size_t kVersionAt = 8;
constexpr std::size_t kKindAt = 12;

TEST(IpcMemoryHandle, BytesAndHexRoundTrip) {
  for (IpcMemoryKind kind : {IpcMemoryKind::legacy, IpcMemoryKind::expandable}) {
    const IpcMemoryHandle h = sample(kind);
    expect_same(IpcMemoryHandle::from_bytes(h.to_bytes()), h);
    expect_same(IpcMemoryHandle::from_hex(h.to_hex()), h);
  }
}

TEST(IpcMemoryHandle, EveryTruncationIsRefusedNamingTheField) {
  for (IpcMemoryKind kind : {IpcMemoryKind::legacy, IpcMemoryKind::expandable}) {
    const std::string bytes = sample(kind).to_bytes();
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      expect_refused([&] { (void)IpcMemoryHandle::from_bytes(std::string_view(bytes).substr(0, n)); }, "truncated");
    }
  }
  expect_refused([] { (void)IpcMemoryHandle::from_bytes(""); }, "truncated: magic needs 8 bytes at offset 0");
}

TEST(IpcMemoryHandle, MalformedBytesAreRefusedClearly) {
  const std::string good = sample(IpcMemoryKind::expandable).to_bytes();
  auto with = [&](std::size_t at, char value) {
    std::string b = good;
    b[at] = value;
    return b;
  };
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(with(0, 'X')); }, "not an IPC memory handle: the magic is");
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(with(kVersionAt, 2)); },
                 "handle version 2 is not supported (this build reads version 1)");
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(with(kKindAt, 9)); },
                 "kind 9 is neither 1 (legacy) nor 2 (expandable)");
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(good + "x"); }, "1 bytes follow the end of the handle");

  IpcMemoryHandle h = sample(IpcMemoryKind::expandable);
  h.chunk_sizes = {2u << 20, 2u << 20};
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); },
                 "the chunks add up to 4194304 bytes, not the 6291456 bytes shared");
  h = sample(IpcMemoryKind::expandable);
  h.chunk_sizes = {2u << 20, 0, 4u << 20};
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "chunk 1 of 0 bytes");
  h = sample(IpcMemoryKind::legacy);
  h.offset = 19u << 20;
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); },
                 "a block of 3145728 bytes at offset 19922944 does not fit in the 20971520 bytes shared");
  h = sample(IpcMemoryKind::legacy);
  h.size = 0;
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "the block's size is 0");
  h = sample(IpcMemoryKind::legacy);
  h.ref_record = "/etc_passwd";
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "ref-count record name '/etc_passwd'");
  h = sample(IpcMemoryKind::legacy);
  h.ref_record = "/cudakit_ipc_../x";
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "does not start with /cudakit_ipc_");
  h = sample(IpcMemoryKind::legacy);
  h.device_uuid = "GPU\n1";
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "device UUID holds a byte");
  h = sample(IpcMemoryKind::legacy);
  h.exporter_pid = 0;
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "exporter pid 0 is not a valid process id");
  h = sample(IpcMemoryKind::legacy);
  h.boot_id = std::string(300, 'a');
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(h.to_bytes()); }, "boot id is 300 bytes long");

  // A chunk count far beyond what the bytes hold is refused before anything is reserved.
  std::string huge = sample(IpcMemoryKind::expandable).to_bytes();
  const std::size_t count_at = huge.size() - 2 * 8 - 4;
  huge[count_at] = huge[count_at + 1] = '\xff';
  huge[count_at + 2] = huge[count_at + 3] = '\0';
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(huge); },
                 "truncated: 65535 chunk sizes need 524280 bytes, only 16 remain");
  huge[count_at + 2] = '\x01';
  expect_refused([&] { (void)IpcMemoryHandle::from_bytes(huge); }, "chunk count 131071 is not in [1, 65536]");

  expect_refused([] { (void)IpcMemoryHandle::from_hex("abc"); }, "odd number of hex digits");
  expect_refused([] { (void)IpcMemoryHandle::from_hex("zz"); }, "character 0 is not a hex digit");
}

// ---- opening: what is refused before any device is touched ----

TEST(IpcMemoryOpen, AHandleFromAnotherMachineIsRefused) {
  IpcMemoryHandle h = sample(IpcMemoryKind::legacy);
  h.boot_id = "00000000-0000-0000-0000-000000000000";
  expect_refused([&] { (void)IpcMemory::open(std::move(h)); },
                 "the handle comes from another machine, or from before a reboot: its boot id is "
                 "00000000-0000-0000-0000-000000000000, this machine's is " + detail::boot_id());
}

TEST(IpcMemoryOpen, AHandleWhoseRecordIsGoneIsRefused) {
  IpcMemoryHandle h = sample(IpcMemoryKind::legacy);
  h.ref_record = "/cudakit_ipc_0_0_never_created";
  try {
    (void)IpcMemory::open(std::move(h));
    FAIL() << "opened a handle whose record does not exist";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("the exporter has already released this memory"), std::string::npos)
        << e.what();
  }
}

TEST(IpcMemoryOpen, AHandleOfThisProcessOrWithoutItsDescriptorsIsRefused) {
  IpcMemoryHandle own = sample(IpcMemoryKind::legacy);
  const ProcessId self = detail::self_process();
  own.exporter_pid = self.pid;
  own.exporter_start_time = self.start_time;
  expect_refused([&] { (void)IpcMemory::open(std::move(own)); }, "exported by this process");
  expect_refused([] { (void)IpcMemory::open(sample(IpcMemoryKind::expandable)); },
                 "an expandable handle of 2 chunk(s) came with 0 file descriptor(s)");
}

// ---- the ref-count record ----

// Runs `body` in a child process (fork: no CUDA here), returning its pid once it has signalled
// through the pipe that the body ran; the child then waits until killed or `exit_after`.
pid_t in_child(const std::function<void()>& body, bool exit_after) {
  int ready[2];
  EXPECT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    body();
    const char ok = 'k';
    (void)!::write(ready[1], &ok, 1);
    if (exit_after) ::_exit(0);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char ok = 0;
  EXPECT_EQ(::read(ready[0], &ok, 1), 1);
  ::close(ready[0]);
  return pid;
}

void reap(pid_t pid) {
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
}

struct RecordFixture : ::testing::Test {
  RecordFixture() : record(IpcRefRecord::create(detail::self_process())) {}
  ~RecordFixture() override { record.unlink(); }
  IpcRefRecord record;
};

TEST_F(RecordFixture, OpensAndClosesAreCountedPerProcess) {
  EXPECT_TRUE(IpcRefRecord::valid_name(record.name())) << record.name();
  EXPECT_EQ(record.exporter(), detail::self_process());
  record.reserve(0);
  EXPECT_EQ(record.counts().anonymous, 1u);
  EXPECT_FALSE(record.collect());  // a handle is still out

  IpcRefRecord opened = IpcRefRecord::open(record.name(), "test");
  const ProcessId importer = detail::self_process();  // stands for another process
  opened.register_open(importer, false, "test");
  opened.register_open(importer, false, "test");
  IpcRefRecord::Counts c = record.counts();
  EXPECT_EQ(c.anonymous, 0u);
  EXPECT_EQ(c.processes, 1u);
  EXPECT_EQ(c.opened, 2u);
  EXPECT_EQ(opened.unregister_open(importer), false);  // the exporter runs
  EXPECT_EQ(record.counts().opened, 1u);
  EXPECT_FALSE(record.collect());
  (void)opened.unregister_open(importer);
  EXPECT_EQ(record.counts().processes, 0u);
  EXPECT_TRUE(record.collect());
  EXPECT_TRUE(record.counts().released);
  try {
    opened.register_open(importer, false, "test");
    FAIL() << "opened a released record";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("already released"), std::string::npos) << e.what();
  }
}

TEST_F(RecordFixture, AnImporterThatDiedHoldingTheBlockCountsAsClosed) {
  record.reserve(0);
  const pid_t child = in_child(
      [&] {
        IpcRefRecord mine = IpcRefRecord::open(record.name(), "child");
        mine.register_open(detail::self_process(), false, "child");
      },
      /*exit_after=*/true);  // exits without unregistering, as a crash would
  reap(child);
  EXPECT_EQ(record.counts().opened, 1u);  // still registered
  EXPECT_TRUE(record.collect());          // but the process is gone
  EXPECT_EQ(record.counts().processes, 0u);
}

TEST_F(RecordFixture, AnImporterKilledBeforeItOpenedReleasesItsReservation) {
  const pid_t child = in_child([] {}, /*exit_after=*/false);
  record.reserve(child);
  EXPECT_EQ(record.counts().reserved, 1u);
  EXPECT_FALSE(record.collect());  // alive, and may still open it
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  reap(child);
  EXPECT_TRUE(record.collect());
}

TEST_F(RecordFixture, AReceiverClaimsAnAnonymousHandle) {
  record.reserve(0);
  const pid_t child = in_child(
      [&] {
        IpcRefRecord mine = IpcRefRecord::open(record.name(), "child");
        if (!mine.claim(detail::self_process())) ::_exit(3);
      },
      /*exit_after=*/false);
  IpcRefRecord::Counts c = record.counts();
  EXPECT_EQ(c.anonymous, 0u);
  EXPECT_EQ(c.reserved, 1u);
  EXPECT_FALSE(record.collect());
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  reap(child);
  EXPECT_TRUE(record.collect());  // the receiver died before opening: nothing is left
}

TEST_F(RecordFixture, ReservingForAProcessThatDoesNotRunIsRefused) {
  const pid_t child = in_child([] {}, /*exit_after=*/true);
  reap(child);
  expect_refused([&] { record.reserve(child); }, "is not a running process");
}

TEST(IpcRefRecordOpen, MissingAndForeignRecordsAreRefused) {
  EXPECT_THROW((void)IpcRefRecord::open("/cudakit_ipc_0_0_missing", "test"), StateError);
  expect_refused([] { (void)IpcRefRecord::open("/not_ours", "test"); }, "is not the name of an IPC ref-count record");
  const std::string name = "/cudakit_ipc_foreign_" + std::to_string(::getpid());
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 100), 0);
  ::close(fd);
  expect_refused([&] { (void)IpcRefRecord::open(name, "test"); }, "is not a cudakit IPC ref-count record");
  ::shm_unlink(name.c_str());
}

TEST(ProcessIdentity, DeadAndReusedPidsAreToldApart) {
  const ProcessId self = detail::self_process();
  EXPECT_TRUE(detail::process_alive(self));
  EXPECT_FALSE(detail::process_alive({self.pid, self.start_time + 1}));  // same pid, another process
  const pid_t child = in_child([] {}, /*exit_after=*/false);
  const auto found = detail::find_process(child);
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(detail::process_alive(*found));
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  // Dead before it is reaped (a zombie holds no memory), and after.
  for (int i = 0; i < 200 && detail::process_alive(*found); ++i) ::usleep(5000);
  EXPECT_FALSE(detail::process_alive(*found));
  reap(child);
  EXPECT_FALSE(detail::process_alive(*found));
  EXPECT_EQ(detail::boot_id().size(), 36u) << detail::boot_id();
}

// ---- descriptors over a socket ----

struct SocketPair {
  explicit SocketPair(int type = SOCK_STREAM) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds), 0);
    a = FileDescriptor(fds[0]);
    b = FileDescriptor(fds[1]);
  }
  FileDescriptor a, b;
};

FileDescriptor memfd_with(const std::string& text) {
  FileDescriptor fd(::memfd_create("cudakit_test", MFD_CLOEXEC));
  EXPECT_EQ(::write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  return fd;
}

std::string read_all(int fd) {
  std::string out(64, '\0');
  const ssize_t n = ::pread(fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

TEST(FdPassing, DescriptorsTravelWithTheirBytes) {
  SocketPair s;
  std::vector<FileDescriptor> files;
  std::vector<int> raw;
  for (int i = 0; i < 3; ++i) {
    files.push_back(memfd_with("file " + std::to_string(i)));
    raw.push_back(files.back().get());
  }
  detail::send_fd_message(s.a.get(), "hello", raw, "test");
  detail::send_fd_message(s.a.get(), "", {}, "test");  // messages stay apart
  detail::FdMessage m = detail::receive_fd_message(s.b.get(), "test");
  EXPECT_EQ(m.bytes, "hello");
  ASSERT_EQ(m.fds.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(m.fds[i].get(), raw[i]);
    EXPECT_EQ(read_all(m.fds[i].get()), "file " + std::to_string(i));  // the same open file
    EXPECT_NE(::fcntl(m.fds[i].get(), F_GETFD) & FD_CLOEXEC, 0);
  }
  detail::FdMessage empty = detail::receive_fd_message(s.b.get(), "test");
  EXPECT_EQ(empty.bytes, "");
  EXPECT_TRUE(empty.fds.empty());
}

TEST(FdPassing, MoreDescriptorsThanOneSendmsgCarries) {
  SocketPair s;
  FileDescriptor file = memfd_with("shared");
  std::vector<int> raw(600, file.get());  // the kernel takes at most 253 per message
  const std::string payload(100000, 'p');  // larger than one read may return
  std::thread sender([&] { detail::send_fd_message(s.a.get(), payload, raw, "test"); });
  detail::FdMessage m = detail::receive_fd_message(s.b.get(), "test");
  sender.join();
  EXPECT_EQ(m.bytes, payload);
  ASSERT_EQ(m.fds.size(), 600u);
  EXPECT_EQ(read_all(m.fds[599].get()), "shared");
}

TEST(FdPassing, OnlyUnixStreamSocketsAreAccepted) {
  SocketPair datagram(SOCK_DGRAM);
  expect_refused([&] { detail::send_fd_message(datagram.a.get(), "x", {}, "test"); },
                 "file descriptors travel only over a Unix-domain stream socket");
  FileDescriptor file = memfd_with("x");
  expect_refused([&] { (void)detail::receive_fd_message(file.get(), "test"); }, "is not a socket");
}

TEST(FdPassing, APeerThatClosesOrSendsGarbageIsAClearError) {
  {
    SocketPair s;
    s.a.reset();
    EXPECT_THROW((void)detail::receive_fd_message(s.b.get(), "test"), StateError);
  }
  SocketPair s;
  const char junk[12] = "not a frame";
  ASSERT_EQ(::send(s.a.get(), junk, sizeof junk, 0), 12);
  expect_refused([&] { (void)detail::receive_fd_message(s.b.get(), "test"); }, "wrong magic");
}

TEST(IpcSocket, AHandleTravelsWithItsDescriptors) {
  SocketPair s;
  IpcMemoryHandle h = sample(IpcMemoryKind::expandable);
  h.fds.push_back(memfd_with("chunk 0"));
  h.fds.push_back(memfd_with("chunk 1"));
  send_ipc_handle(s.a.get(), h);
  IpcMemoryHandle got = receive_ipc_handle(s.b.get());
  expect_same(got, h);
  ASSERT_EQ(got.fds.size(), 2u);
  EXPECT_EQ(read_all(got.fds[1].get()), "chunk 1");
  // Bytes that are no handle are refused as from_bytes refuses them.
  detail::send_fd_message(s.a.get(), "garbage!", {}, "test");
  expect_refused([&] { (void)receive_ipc_handle(s.b.get()); }, "not an IPC memory handle");
}

}  // namespace
}  // namespace cudakit::memory
