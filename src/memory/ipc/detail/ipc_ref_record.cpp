#include "memory/ipc/detail/ipc_ref_record.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/file_descriptor.hpp"

namespace cudakit::memory::detail {
using cudakit::detail::concat;

namespace {
constexpr char kMagic[8] = {'C', 'K', 'I', 'P', 'C', 'R', 'E', 'F'};
constexpr std::uint32_t kRecordVersion = 1;
}  // namespace

struct IpcRefRecord::Shared {
  char magic[8];
  std::uint32_t version;
  std::uint32_t slot_count;
  pthread_mutex_t mutex;  // robust, process-shared: See Note [IPC ref-count records]
  std::int32_t exporter_pid;
  std::uint32_t released;
  std::uint64_t exporter_start;
  std::uint32_t anonymous;
  std::uint32_t unused;
  struct Slot {
    std::int32_t pid;  // 0: free
    std::uint32_t opened;
    std::uint32_t reserved;
    std::uint32_t unused;
    std::uint64_t start_time;
  } slots[kSlots];
};

// Locks a record's robust mutex; a holder that died leaves it to us (EOWNERDEAD).
class IpcRefRecord::Lock {
 public:
  explicit Lock(Shared& s) : mutex_(&s.mutex) {
    const int r = pthread_mutex_lock(mutex_);
    if (r == EOWNERDEAD) {
      pthread_mutex_consistent(mutex_);
    } else if (r != 0) {
      throw StateError("IPC memory", concat("cannot lock an IPC ref-count record: ", std::strerror(r)));
    }
  }
  ~Lock() { pthread_mutex_unlock(mutex_); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  pthread_mutex_t* mutex_;
};

namespace {
// The slot of `self`, or a free one made its own; nullptr when all are taken (record locked).
template <class Shared>
auto* slot_of(Shared& s, const ProcessId& self) {
  decltype(&s.slots[0]) free_slot = nullptr;
  for (auto& slot : s.slots) {
    if (slot.pid == self.pid && slot.start_time == self.start_time) return &slot;
    if (slot.pid == 0 && !free_slot) free_slot = &slot;
  }
  if (free_slot) {
    free_slot->start_time = self.start_time;
    free_slot->opened = 0;
    free_slot->reserved = 0;
    free_slot->pid = self.pid;
  }
  return free_slot;
}
}  // namespace

bool IpcRefRecord::valid_name(std::string_view name) noexcept {
  if (!name.starts_with(kNamePrefix) || name.size() > kNamePrefix.size() + 200) return false;
  for (char c : name.substr(kNamePrefix.size())) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return name.size() > kNamePrefix.size();
}

IpcRefRecord IpcRefRecord::create(const ProcessId& exporter) {
  static std::atomic<std::uint64_t> counter{0};
  for (;;) {
    std::string name = concat(kNamePrefix, exporter.pid, "_", exporter.start_time, "_", counter.fetch_add(1));
    FileDescriptor fd(::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) {
      if (errno == EEXIST) continue;  // left by an earlier process of this pid and start time
      throw StateError("export_ipc_memory", concat("cannot create the IPC ref-count record ", name,
                                                   " in POSIX shared memory: ", std::strerror(errno)));
    }
    void* p = nullptr;
    if (::ftruncate(fd.get(), sizeof(Shared)) != 0 ||
        (p = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0)) == MAP_FAILED) {
      const int error = errno;
      ::shm_unlink(name.c_str());
      throw StateError("export_ipc_memory", concat("cannot size or map the IPC ref-count record ", name, ": ",
                                                   std::strerror(error)));
    }
    // ftruncate zero-filled it: every slot is free, nothing is reserved.
    auto* shared = static_cast<Shared*>(p);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&shared->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    shared->version = kRecordVersion;
    shared->slot_count = kSlots;
    shared->exporter_pid = exporter.pid;
    shared->exporter_start = exporter.start_time;
    // The magic last: a record with it is whole (importers learn the name only afterwards,
    // from a handle, but a stray open must not see half a record).
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(shared->magic, kMagic, sizeof kMagic);
    return IpcRefRecord(std::move(name), shared);
  }
}

IpcRefRecord IpcRefRecord::open(const std::string& name, const char* api) {
  if (!valid_name(name)) {
    throw InvalidArgumentError(api, concat("'", name, "' is not the name of an IPC ref-count record"));
  }
  FileDescriptor fd(::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0));
  if (!fd) {
    if (errno == ENOENT) {
      throw StateError(api, concat("the exporter has already released this memory: its ref-count record ", name,
                                   " no longer exists (the exporter freed the block and every importer closed "
                                   "it, or the exporter exited)"));
    }
    throw StateError(api, concat("cannot open the IPC ref-count record ", name, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || static_cast<std::size_t>(st.st_size) != sizeof(Shared)) {
    throw InvalidArgumentError(api, concat(name, " is not a cudakit IPC ref-count record: its size is ",
                                           st.st_size, " bytes, not ", sizeof(Shared)));
  }
  void* p = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) {
    throw StateError(api, concat("cannot map the IPC ref-count record ", name, ": ", std::strerror(errno)));
  }
  auto* shared = static_cast<Shared*>(p);
  if (std::memcmp(shared->magic, kMagic, sizeof kMagic) != 0 || shared->version != kRecordVersion ||
      shared->slot_count != kSlots) {
    ::munmap(p, sizeof(Shared));
    throw InvalidArgumentError(api, concat(name, " is not a version ", kRecordVersion,
                                           " cudakit IPC ref-count record (wrong magic, version or slot count)"));
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return IpcRefRecord(name, shared);
}

IpcRefRecord::~IpcRefRecord() {
  if (shared_) ::munmap(shared_, sizeof(Shared));
}

IpcRefRecord::IpcRefRecord(IpcRefRecord&& other) noexcept
    : name_(std::move(other.name_)), shared_(std::exchange(other.shared_, nullptr)) {}

IpcRefRecord& IpcRefRecord::operator=(IpcRefRecord&& other) noexcept {
  if (this != &other) {
    if (shared_) ::munmap(shared_, sizeof(Shared));
    name_ = std::move(other.name_);
    shared_ = std::exchange(other.shared_, nullptr);
  }
  return *this;
}

IpcRefRecord::Shared& IpcRefRecord::shared(const char* api) const {
  if (!shared_) throw StateError(api, "this IPC ref-count record was moved from");
  return *shared_;
}

ProcessId IpcRefRecord::exporter() const {
  const Shared& s = shared("IpcRefRecord::exporter");
  return {s.exporter_pid, s.exporter_start};
}

void IpcRefRecord::reserve(pid_t importer) {
  Shared& s = shared("export_ipc_memory");
  if (importer == 0) {
    Lock lock(s);
    ++s.anonymous;
    return;
  }
  const std::optional<ProcessId> process = find_process(importer);
  if (!process) {
    throw InvalidArgumentError("export_ipc_memory", concat("importer pid ", importer, " is not a running process"));
  }
  Lock lock(s);
  auto* slot = slot_of(s, *process);
  if (!slot) {
    throw StateError("export_ipc_memory", concat("the block is shared with ", kSlots,
                                                 " processes already, the most one record holds"));
  }
  ++slot->reserved;
}


bool IpcRefRecord::claim(const ProcessId& self) noexcept {
  if (!shared_) return false;
  try {
    Lock lock(*shared_);
    if (shared_->anonymous == 0 || shared_->released) return false;
    auto* mine = slot_of(*shared_, self);
    if (!mine) return false;
    --shared_->anonymous;
    ++mine->reserved;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void IpcRefRecord::register_open(const ProcessId& self, bool reserved_for_self, const char* api) {
  Shared& s = shared(api);
  Lock lock(s);
  if (s.released) {
    throw StateError(api, concat("the exporter has already released this memory (ref-count record ", name_, ")"));
  }
  auto* mine = slot_of(s, self);
  if (!mine) {
    throw StateError(api, concat("the block is open in ", kSlots, " processes already, the most one record holds"));
  }
  // The open takes the reservation its handle stands for: this process's, or an anonymous one.
  if (reserved_for_self && mine->reserved > 0) --mine->reserved;
  else if (!reserved_for_self && s.anonymous > 0) --s.anonymous;
  ++mine->opened;
}

bool IpcRefRecord::unregister_open(const ProcessId& self) noexcept {
  if (!shared_) return false;
  Shared& s = *shared_;
  try {
    Lock lock(s);
    bool any = s.anonymous > 0;
    for (Shared::Slot& slot : s.slots) {
      if (slot.pid == self.pid && slot.start_time == self.start_time) {
        if (slot.opened > 0) --slot.opened;
        if (slot.opened == 0 && slot.reserved == 0) slot.pid = 0;
      }
      if (slot.pid != 0) any = true;
    }
    return !any && !process_alive({s.exporter_pid, s.exporter_start});
  } catch (const std::exception&) {
    return false;
  }
}

bool IpcRefRecord::collect() {
  Shared& s = shared("ipc_collect");
  // Which processes run is read from /proc outside the lock, then rechecked against the slot.
  ProcessId listed[kSlots];
  {
    Lock lock(s);
    for (std::uint32_t i = 0; i < kSlots; ++i) listed[i] = {s.slots[i].pid, s.slots[i].start_time};
  }
  bool dead[kSlots] = {};
  for (std::uint32_t i = 0; i < kSlots; ++i) dead[i] = listed[i].pid != 0 && !process_alive(listed[i]);
  Lock lock(s);
  bool any = s.anonymous > 0;
  for (std::uint32_t i = 0; i < kSlots; ++i) {
    Shared::Slot& slot = s.slots[i];
    if (slot.pid == 0) continue;
    if (dead[i] && slot.pid == listed[i].pid && slot.start_time == listed[i].start_time) {
      slot.pid = 0;
      continue;
    }
    any = true;
  }
  if (!any) s.released = 1;
  return !any;
}

IpcRefRecord::Counts IpcRefRecord::counts() const {
  Shared& s = shared("IpcRefRecord::counts");
  Lock lock(s);
  Counts c;
  c.anonymous = s.anonymous;
  c.released = s.released != 0;
  for (const Shared::Slot& slot : s.slots) {
    if (slot.pid == 0) continue;
    ++c.processes;
    c.opened += slot.opened;
    c.reserved += slot.reserved;
  }
  return c;
}

void IpcRefRecord::unlink() noexcept {
  if (!name_.empty()) ::shm_unlink(name_.c_str());
}

}  // namespace cudakit::memory::detail
