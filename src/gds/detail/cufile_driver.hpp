#pragma once
// cuFile's driver, opened once per process on first use and left open (cuFileDriverClose at exit
// would race other users' handles; the process's end releases it).

#include <string>

namespace cudakit::gds::detail {

struct CuFileDriverState {
  bool open = false;
  std::string reason;  // why not open: the library's load error or cuFileDriverOpen's status
};

// Thread-safe; never throws.
[[nodiscard]] const CuFileDriverState& cufile_driver() noexcept;

}  // namespace cudakit::gds::detail
