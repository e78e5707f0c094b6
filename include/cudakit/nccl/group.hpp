#pragma once
// @brief Group: ncclGroupStart/ncclGroupEnd as a scope. Operations issued inside are launched
// together at end() — what point-to-point exchanges (all_to_all, a ring of send/recv) and
// single-process multi-GPU collectives (one call per device) need.

namespace cudakit::nccl {

class Group {
 public:
  // @throws StateError when NCCL is not available.
  Group();
  // Ends the group if end() was not called (errors are logged: a destructor does not throw).
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  // Launches the group's operations and waits until every communicator in it has taken them
  // (non-blocking communicators). @throws NcclError naming the communicators' ranks.
  void end();

 private:
  bool ended_ = false;
};

}  // namespace cudakit::nccl
