#pragma once
// @brief Group: ncclGroupStart/ncclGroupEnd as a scope. Operations issued inside are launched
// together at end() — what point-to-point exchanges (all_to_all, a ring of send/recv) and
// single-process multi-GPU collectives (one call per device) need.

namespace cudakit::nccl {

// An NCCL group on the calling thread. Groups nest; the outermost one's end() launches every
// operation issued on this thread since the first was opened. Each operation stays ordered on
// the stream it was issued on; the host does not wait for the work, only for NCCL to take it.
// A Group belongs to the thread that made it.
class Group {
 public:
  // Opens the group (ncclGroupStart).
  // @throws StateError when NCCL is not available.
  // @throws NcclError when ncclGroupStart fails.
  Group();
  // Ends the group if end() was not called (errors are logged: a destructor does not throw).
  ~Group();
  // Not copyable: a group is ended once.
  Group(const Group&) = delete;
  // Not assignable: a group is ended once.
  Group& operator=(const Group&) = delete;
  // Launches the group's operations and waits until every communicator in it has taken them
  // (non-blocking communicators), then hands them to their communicators' watchdogs. Returns
  // before the operations complete on their streams. An inner group's end() only closes it.
  // @throws NcclError naming the communicators' ranks, when NCCL fails or a communicator does
  //   not take its operations within its timeout (the communicator is then failed).
  // @throws StateError when the group has already ended.
  void end();

 private:
  bool ended_ = false;
};

}  // namespace cudakit::nccl
