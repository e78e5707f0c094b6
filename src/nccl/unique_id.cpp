#include "cudakit/nccl/unique_id.hpp"

#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "nccl/detail/nccl_call.hpp"

namespace cudakit::nccl {

static_assert(UniqueId::kBytes == NCCL_UNIQUE_ID_BYTES);

UniqueId UniqueId::from_bytes(std::string_view data) {
  if (data.size() != kBytes)
    throw InvalidArgumentError("UniqueId::from_bytes",
                               cudakit::detail::concat("an NCCL unique id has ", kBytes, " bytes, this one ", data.size()));
  UniqueId id;
  std::memcpy(id.bytes.data(), data.data(), kBytes);
  return id;
}

UniqueId unique_id() {
  const auto& api = detail::loaded_nccl("nccl::unique_id");
  ncclUniqueId raw;
  detail::check_nccl(api.ncclGetUniqueId(&raw), "ncclGetUniqueId", -1, "unique_id");
  UniqueId id;
  std::memcpy(id.bytes.data(), raw.internal, UniqueId::kBytes);
  return id;
}

}  // namespace cudakit::nccl
