#include "cudakit/nvtx/domain.hpp"

#include <string>

#include "cudakit/core/error.hpp"

namespace cudakit::nvtx {

void name_category(std::uint32_t id, const char* name) {
  if (id == 0) throw InvalidArgumentError("nvtx::name_category", "category 0 means \"no category\" and has no name");
  if (name == nullptr) {
    throw InvalidArgumentError("nvtx::name_category", "the name of category " + std::to_string(id) + " is null");
  }
  nvtxDomainNameCategoryA(domain(), id, name);
}

}  // namespace cudakit::nvtx
