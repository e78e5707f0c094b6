#pragma once
// IpcRefRecord: the record, in POSIX shared memory, of which processes hold an exported block
// open, so that the exporter keeps the block until every importer has closed it (See Note [IPC
// ref-count records]).

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/ipc/detail/process_identity.hpp"

namespace cudakit::memory::detail {

// Note [IPC ref-count records]
// torch shares a CUDA block with a counter in a shared-memory file (CudaIPCSentData): the
// producer counts each send, a consumer decrements when its tensor dies, and the producer's
// ipc_collect() frees blocks whose counter reached zero. A consumer that crashes never
// decrements, and the block leaks until the producer exits. Our record keeps, instead of one
// counter, a slot per importing process: its identity (pid and start time, See Note [Process
// identity]), how many opens it holds and how many handles were sent to it and not yet opened.
// collect() forgets the slots of processes that no longer run, so a crashed importer, one
// killed before it could even open its handle included, releases the block at the exporter's
// next ipc_collect(). A handle exported without naming its importer (the bytes may go anywhere)
// counts in `anonymous` until some process opens it: that reservation cannot be tied to a
// process, so it lasts until an open takes it.
//
// Several processes update the record: a process-shared robust mutex guards it, so that a
// process killed while holding the lock does not stop the others (the next locker gets
// EOWNERDEAD and goes on; every update leaves the slots valid at each step). Once collect()
// finds nothing left it marks the record released under that lock, so an open racing with the
// release either registers first (and the block stays) or sees `released` and fails.
class IpcRefRecord {
 public:
  static constexpr std::uint32_t kSlots = 128;
  static constexpr std::string_view kNamePrefix = "/cudakit_ipc_";

  struct Counts {
    std::uint32_t processes = 0;  // slots in use
    std::uint32_t opened = 0;     // opens, over all processes
    std::uint32_t reserved = 0;   // handles sent to a named process, not yet opened
    std::uint32_t anonymous = 0;  // handles exported to no named process, not yet opened
    bool released = false;
  };

  // A new record of `exporter`, with a fresh name. @throws StateError when it cannot be made.
  static IpcRefRecord create(const ProcessId& exporter);
  // An existing record. @throws StateError when it no longer exists (its block was released),
  // InvalidArgumentError when `name` is no cudakit record.
  static IpcRefRecord open(const std::string& name, const char* api);
  // Unmaps the record; the name stays until unlink().
  ~IpcRefRecord();
  IpcRefRecord(IpcRefRecord&& other) noexcept;
  IpcRefRecord& operator=(IpcRefRecord&& other) noexcept;
  IpcRefRecord(const IpcRefRecord&) = delete;
  IpcRefRecord& operator=(const IpcRefRecord&) = delete;

  // True for names create() makes: the prefix, then at most 200 of [A-Za-z0-9_].
  static bool valid_name(std::string_view name) noexcept;

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] ProcessId exporter() const;

  // Exporter: one more handle is out, to process `importer` (0: to no process in particular).
  // @throws InvalidArgumentError when no process `importer` runs; StateError when every slot
  // is taken.
  void reserve(pid_t importer);
  // Importer, on receiving an anonymous handle: it is now reserved for `self`, so that the
  // block is released if `self` dies before opening it. False (nothing done) when no anonymous
  // handle is out or no slot is free.
  bool claim(const ProcessId& self) noexcept;
  // Importer: `self` opened the block, from a handle reserved for it (`reserved_for_self`) or
  // an anonymous one. @throws StateError once the record is released, or when every slot is
  // taken.
  void register_open(const ProcessId& self, bool reserved_for_self, const char* api);
  // Importer: `self` closed it. True when nothing is left and the exporter no longer runs, so
  // the caller should unlink() the record (no one else will).
  bool unregister_open(const ProcessId& self) noexcept;
  // Exporter: forgets processes that no longer run; when nothing is left, marks the record
  // released and returns true (the block may be reused; unlink() the record).
  bool collect();
  [[nodiscard]] Counts counts() const;
  // Removes the name; processes that have the record mapped keep it.
  void unlink() noexcept;

 private:
  struct Shared;
  class Lock;
  IpcRefRecord(std::string name, Shared* shared) noexcept : name_(std::move(name)), shared_(shared) {}
  Shared& shared(const char* api) const;

  std::string name_;
  Shared* shared_ = nullptr;
};

}  // namespace cudakit::memory::detail
