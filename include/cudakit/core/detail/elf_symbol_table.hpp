#pragma once
// ElfSymbolTable: the functions an ELF64 file's symbol tables (.symtab, and .dynsym) name, by
// address, for naming stack frames that dladdr cannot: dladdr reads the dynamic symbol table
// only, which holds neither an executable's functions (unless linked with -rdynamic) nor
// anyone's local ones (static functions, anonymous namespaces, lambdas). A binary that is not
// stripped keeps them all in .symtab (See Note [Naming stack frames] in stack_trace.cpp).
//
//   ElfSymbolTable table = ElfSymbolTable::read_file("/proc/self/exe");
//   if (const auto* s = table.find(address - load_bias)) std::puts(s->name.c_str());

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace cudakit::detail {

class ElfSymbolTable {
 public:
  struct Symbol {
    std::uint64_t begin = 0;  // the address the file gives (before the load bias)
    std::uint64_t size = 0;
    std::string name;         // as the file holds it (mangled)
  };

  // Fills `out` from the file's bytes at `offset` (only asked for ranges inside the file's size);
  // false where that fails.
  using ReadAt = std::function<bool(std::uint64_t offset, std::span<std::byte> out)>;

  // The function symbols of the ELF64 file (of this machine's byte order) of `file_size` bytes
  // that `read_at` reads; an empty table for anything else (not ELF, another class or byte order,
  // no symbol tables, offsets or sizes that point outside the file): a table is a help for
  // reports, never an error. Reads at most `max_bytes` of tables (the rest is left out).
  [[nodiscard]] static ElfSymbolTable read(const ReadAt& read_at, std::uint64_t file_size,
                                           std::uint64_t max_bytes = std::uint64_t{1} << 28);
  // The same for a file's bytes in memory, and for a file by path (empty where it cannot be read).
  [[nodiscard]] static ElfSymbolTable parse(std::span<const std::byte> image);
  [[nodiscard]] static ElfSymbolTable read_file(const std::string& path);

  // The function whose [begin, begin + size) holds `address` (a file address); null for none.
  [[nodiscard]] const Symbol* find(std::uint64_t address) const;
  [[nodiscard]] std::size_t size() const noexcept { return symbols_.size(); }

 private:
  std::vector<Symbol> symbols_;  // by begin
};

}  // namespace cudakit::detail
