#include "cudakit/nccl/store/rendezvous.hpp"

#include <charconv>
#include <cstdlib>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/store/file_store.hpp"
#include "cudakit/nccl/store/tcp_store.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;

namespace {

std::optional<std::string> variable(const std::map<std::string, std::string>* environment, const char* name) {
  if (environment != nullptr) {
    const auto it = environment->find(name);
    return it == environment->end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

// `field` when set (>= 0), else the variable `name` read as an integer; -1 when neither is there
// and `required` is false.
int integer_from(int field, const std::map<std::string, std::string>* environment, const char* name, bool required) {
  if (field >= 0) return field;
  const auto text = variable(environment, name);
  if (!text) {
    if (!required) return -1;
    throw InvalidArgumentError("RendezvousOptions::resolved",
                               concat(name, " is not set and the option is not given"));
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty() || value < 0)
    throw InvalidArgumentError("RendezvousOptions::resolved",
                               concat(name, "='", *text, "' is not a non-negative integer"));
  return value;
}

}  // namespace

RendezvousOptions RendezvousOptions::resolved(const std::map<std::string, std::string>* environment) const {
  RendezvousOptions out = *this;
  out.world_size = integer_from(world_size, environment, "WORLD_SIZE", true);
  out.rank = integer_from(rank, environment, "RANK", true);
  if (out.world_size < 1)
    throw InvalidArgumentError("RendezvousOptions::resolved", concat("the world size is ", out.world_size, "; it must be at least 1"));
  if (out.rank >= out.world_size)
    throw InvalidArgumentError("RendezvousOptions::resolved",
                               concat("rank ", out.rank, " is outside 0..", out.world_size - 1, " (world size ", out.world_size, ")"));
  out.local_rank = integer_from(local_rank, environment, "LOCAL_RANK", false);
  if (out.local_rank < 0) out.local_rank = out.rank;
  if (out.store_path.empty()) {
    if (out.master_addr.empty()) {
      const auto addr = variable(environment, "MASTER_ADDR");
      if (!addr || addr->empty())
        throw InvalidArgumentError("RendezvousOptions::resolved",
                                   "MASTER_ADDR is not set and neither a master address nor a store path is given");
      out.master_addr = *addr;
    }
    out.master_port = integer_from(master_port, environment, "MASTER_PORT", true);
    if (out.master_port < 1 || out.master_port > 65535)
      throw InvalidArgumentError("RendezvousOptions::resolved", concat("the master port ", out.master_port, " is outside 1..65535"));
  }
  if (out.timeout.count() <= 0)
    throw InvalidArgumentError("RendezvousOptions::resolved", concat("the timeout is ", out.timeout.count(), " ms; it must be positive"));
  return out;
}

std::shared_ptr<Store> make_store(const RendezvousOptions& options) {
  if (!options.store_path.empty()) return std::make_shared<FileStore>(options.store_path, options.rank, options.timeout);
  std::shared_ptr<TcpStoreServer> server;
  if (options.rank == 0) server = std::make_shared<TcpStoreServer>("0.0.0.0", options.master_port);
  return std::make_shared<TcpStore>(options.master_addr, options.master_port, options.rank, options.timeout,
                                    std::move(server));
}

}  // namespace cudakit::nccl
