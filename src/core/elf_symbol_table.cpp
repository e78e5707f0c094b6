#include "cudakit/core/detail/elf_symbol_table.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace cudakit::detail {
namespace {

// [offset, offset + bytes) lies inside a file of `file_size` bytes (no overflow).
bool inside(std::uint64_t offset, std::uint64_t bytes, std::uint64_t file_size) {
  return offset <= file_size && bytes <= file_size - offset;
}

template <class T>
bool read_object(const ElfSymbolTable::ReadAt& read_at, std::uint64_t offset, std::uint64_t file_size, T& out) {
  return inside(offset, sizeof(T), file_size) &&
         read_at(offset, std::as_writable_bytes(std::span<T, 1>(&out, 1)));
}

template <class T>
bool read_array(const ElfSymbolTable::ReadAt& read_at, std::uint64_t offset, std::uint64_t count,
                std::uint64_t file_size, std::vector<T>& out) {
  if (count > file_size / sizeof(T) || !inside(offset, count * sizeof(T), file_size)) return false;
  out.resize(count);
  return read_at(offset, std::as_writable_bytes(std::span<T>(out)));
}

constexpr unsigned char kNativeData = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

}  // namespace

ElfSymbolTable ElfSymbolTable::read(const ReadAt& read_at, std::uint64_t file_size, std::uint64_t max_bytes) {
  ElfSymbolTable table;
  Elf64_Ehdr header{};
  if (!read_object(read_at, 0, file_size, header)) return table;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != kNativeData || header.e_shoff == 0 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    return table;
  }
  std::uint64_t section_count = header.e_shnum;
  if (section_count == 0) {  // more than 0xff00 sections: the count is section 0's size
    Elf64_Shdr first{};
    if (!read_object(read_at, header.e_shoff, file_size, first)) return table;
    section_count = first.sh_size;
  }
  std::vector<Elf64_Shdr> sections;
  if (section_count * sizeof(Elf64_Shdr) > max_bytes ||
      !read_array(read_at, header.e_shoff, section_count, file_size, sections)) {
    return table;
  }
  std::uint64_t budget = max_bytes - section_count * sizeof(Elf64_Shdr);
  std::vector<Elf64_Sym> symbols;
  std::vector<char> names;
  for (const Elf64_Shdr& section : sections) {
    if ((section.sh_type != SHT_SYMTAB && section.sh_type != SHT_DYNSYM) || section.sh_entsize != sizeof(Elf64_Sym) ||
        section.sh_link >= sections.size()) {
      continue;
    }
    const Elf64_Shdr& strings = sections[section.sh_link];
    const std::uint64_t count = section.sh_size / sizeof(Elf64_Sym);
    if (strings.sh_type != SHT_STRTAB || count > budget / sizeof(Elf64_Sym) ||
        strings.sh_size > budget - count * sizeof(Elf64_Sym)) {
      continue;
    }
    if (!read_array(read_at, section.sh_offset, count, file_size, symbols) ||
        !read_array(read_at, strings.sh_offset, strings.sh_size, file_size, names)) {
      continue;
    }
    budget -= count * sizeof(Elf64_Sym) + strings.sh_size;
    for (const Elf64_Sym& s : symbols) {
      const unsigned type = ELF64_ST_TYPE(s.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || s.st_value == 0 ||
          s.st_name >= names.size()) {
        continue;
      }
      const char* name = names.data() + s.st_name;
      const std::size_t length = strnlen(name, names.size() - s.st_name);
      if (length == 0) continue;
      table.symbols_.push_back({s.st_value, s.st_size, std::string(name, length)});
    }
  }
  // By address; of symbols at one address (aliases, or a function in both tables) the first.
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.begin < b.begin; });
  table.symbols_.erase(std::unique(table.symbols_.begin(), table.symbols_.end(),
                                   [](const Symbol& a, const Symbol& b) { return a.begin == b.begin; }),
                       table.symbols_.end());
  return table;
}

ElfSymbolTable ElfSymbolTable::parse(std::span<const std::byte> image) {
  return read(
      [&](std::uint64_t offset, std::span<std::byte> out) {
        if (!out.empty()) std::memcpy(out.data(), image.data() + offset, out.size());  // (null for none)
        return true;
      },
      image.size());
}

ElfSymbolTable ElfSymbolTable::read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat info {};
  ElfSymbolTable table;
  if (::fstat(fd, &info) == 0 && info.st_size > 0) {
    table = read(
        [fd](std::uint64_t offset, std::span<std::byte> out) {
          std::size_t done = 0;
          while (done < out.size()) {
            const ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
            if (n <= 0) return false;
            done += static_cast<std::size_t>(n);
          }
          return true;
        },
        static_cast<std::uint64_t>(info.st_size));
  }
  ::close(fd);
  return table;
}

const ElfSymbolTable::Symbol* ElfSymbolTable::find(std::uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](std::uint64_t a, const Symbol& s) { return a < s.begin; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  return address - it->begin < it->size ? &*it : nullptr;
}

}  // namespace cudakit::detail
