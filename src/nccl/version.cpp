#include "cudakit/nccl/version.hpp"

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/nccl/detail/nccl_api.hpp"
#include "cudakit/core/error.hpp"
#include "nccl/detail/nccl_call.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;

std::string NcclVersion::str() const { return concat(major, ".", minor, ".", patch, suffix); }

NcclVersion version_from_code(int code) {
  if (code <= 0) throw InvalidArgumentError("nccl::version_from_code", concat("version code ", code, " is not positive"));
  const int major_unit = code >= 10000 ? 10000 : 1000;
  return NcclVersion{code / major_unit, (code % major_unit) / 100, code % 100, {}};
}

bool library_loaded() noexcept { return cudakit::detail::nccl_api().status.loaded; }

NcclVersion version() {
  const auto& api = detail::loaded_nccl("nccl::version");
  int code = 0;
  detail::check_nccl(api.ncclGetVersion(&code), "ncclGetVersion", -1, "version");
  NcclVersion v = version_from_code(code);
  if (code == NCCL_VERSION_CODE) v.suffix = NCCL_SUFFIX;
  return v;
}

}  // namespace cudakit::nccl
