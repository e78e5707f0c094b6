// ElfSymbolTable: the symbol tables of a module's file, read to name stack frames in reports
// (the file on disk may be truncated, replaced or not ELF at all). It must never throw, and must
// never read outside the bytes it is given.
#include <span>

#include "cudakit/core/detail/elf_symbol_table.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    const auto table = cudakit::detail::ElfSymbolTable::parse(std::as_bytes(std::span(text)));
    for (std::uint64_t address : {std::uint64_t{0}, std::uint64_t{0x40}, std::uint64_t{0x1000}, ~std::uint64_t{0}}) {
      (void)table.find(address);
    }
  });
}
