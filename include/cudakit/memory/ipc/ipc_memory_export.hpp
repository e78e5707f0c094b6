#pragma once
// @brief Sharing a block of cudakit's caching allocator with other processes of this machine: the
// exporter's side of torch's CUDA IPC (storage._share_cuda_(), torch.cuda.ipc_collect()). The
// importer opens the handle with IpcMemory::open() (memory/ipc/ipc_memory.hpp).
//
// Lifetime. Exporting a block puts an external hold on it (CachingAllocator::add_external_hold)
// and creates its ref-count record, in POSIX shared memory, where importers register as they
// open and unregister as they close. The exporter may free the block at any time: while held,
// the allocator does not reuse it. ipc_collect() releases the hold of every exported block
// that no process holds any more (every importer closed it, or exited or was killed: a process
// that no longer runs counts as closed) and for which no handle is still on its way (a handle
// reserved for a process that still runs, or an anonymous one no process has opened yet); the
// block is then reusable at once if the program freed it, and its record is removed, so that
// later opens of its handles fail clearly. export_ipc_memory() runs ipc_collect() first, as
// torch collects when it shares new memory. Nothing else releases a hold: a program that
// shares memory calls ipc_collect() from time to time (after its importers have closed).
//
// Stream ordering. Exporting queues nothing and waits for nothing: the importer sees whatever
// the memory holds when its own work runs. The exporter must make its writes complete first:
// synchronize the stream that wrote the block before sending the handle, or record an
// interprocess Event (Event(EventFlags{.interprocess = true}), core/event.hpp) on it after the
// writes and send its ipc_handle() along, for the importer to wait on (Event::from_ipc_handle,
// then StreamRef::wait or synchronize) before reading. The same holds the other way: the
// importer's IpcMemory::close() synchronizes its device before unregistering, so that the
// exporter never reuses memory the importer's queued work still touches.
//
// Kinds. A block of a classic segment (expandable_segments:False) is shared as its segment's
// cudaIpcGetMemHandle plus its offset; its handle's bytes are all the importer needs. A block
// of an expandable arena (the default) is shared as the physical chunks it overlaps, each a
// POSIX file descriptor (cuMemExportToShareableHandle), which must travel with the handle over
// a Unix-domain socket (send_ipc_handle, memory/ipc/ipc_socket.hpp).
//
// Thread safety: every function may be called from any thread.

#include <sys/types.h>

#include <cstddef>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/ipc/ipc_memory_handle.hpp"

namespace cudakit::memory {

// A handle for the live allocation that starts at `ptr`, of the device allocator that owns it.
// `importer`: the pid of the process the handle is for, so that the block is released should
// that process die before it opens the handle; 0 when it is not known (the handle then holds
// the block until some process opens it; receive_ipc_handle() ties it to the receiver).
// Exporting the same block again adds another handle to its record. Queues nothing and waits
// for nothing (see Stream ordering above).
// @param ptr the start of a live allocation.
// @param importer the pid the handle is reserved for; 0 when not known.
// @return the handle (with its descriptors for the expandable kind).
// @throws InvalidArgumentError when `ptr` is not the start of a live allocation of cudakit's
// device allocator, `importer` is negative or this process, or no process `importer` runs.
// @throws StateError when the block's memory cannot be shared (an expandable arena on a device
// that cannot export file descriptors: the message says so and names expandable_segments:False)
// or its record cannot be made.
// @throws CudaError when the runtime or driver refuses the export.
[[nodiscard]] IpcMemoryHandle export_ipc_memory(void* ptr, pid_t importer = 0);
// The same for an allocator of one's own, whose memory comes from the driver (its segments from
// cudaMalloc, its arenas' chunks from a CudaSegmentProvider); it must outlive the release of
// its exported blocks by ipc_collect().
// @param allocator the allocator that owns `ptr`.
// @param ptr the start of a live allocation of `allocator`.
// @param importer the pid the handle is reserved for; 0 when not known.
// @return the handle.
// @throws InvalidArgumentError when `ptr` is not the start of a live allocation of `allocator`,
// or for a bad `importer`, as above.
// @throws StateError when the allocator's memory does not come from the driver, or as above.
// @throws CudaError when the runtime or driver refuses the export.
[[nodiscard]] IpcMemoryHandle export_ipc_memory(CachingAllocator& allocator, void* ptr, pid_t importer = 0);

// torch.cuda.ipc_collect(): releases every exported block that no process holds any more (see
// above). Returns how many were released. Never waits for importers, nor for the device.
// @return the number of blocks released.
// @throws StateError when a record cannot be read (the other blocks are still collected).
std::size_t ipc_collect();

// Exported blocks not yet released by ipc_collect().
// @return their number.
[[nodiscard]] std::size_t ipc_exported_blocks();

}  // namespace cudakit::memory
