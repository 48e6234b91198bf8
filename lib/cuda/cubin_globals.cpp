#include "cuda/cubin_globals.hpp"

#include <cstring>
#include <string_view>

namespace kernelsmith::detail::cuda {
namespace {

// ELF64 layout (System V gABI): only the fields read here, at their offsets.
constexpr std::size_t kHeaderBytes = 64;
constexpr std::size_t kSectionHeaderBytes = 64;
constexpr std::size_t kSymbolBytes = 24;
constexpr std::uint32_t kSymbolTable = 2;  // SHT_SYMTAB
constexpr unsigned kObjectSymbol = 1;      // STT_OBJECT

template <typename T>
bool read_at(const std::vector<std::uint8_t>& bytes, std::size_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

struct Section {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
};

bool read_section(const std::vector<std::uint8_t>& bytes, std::uint64_t table, std::uint16_t index, Section& out) {
  const std::uint64_t at = table + std::uint64_t(index) * kSectionHeaderBytes;
  return read_at(bytes, at + 0, out.name) && read_at(bytes, at + 4, out.type) && read_at(bytes, at + 24, out.offset) &&
         read_at(bytes, at + 32, out.size) && read_at(bytes, at + 40, out.link);
}

// The NUL-terminated string at `offset` of the string table `strings`, or "" when out of bounds.
std::string_view string_at(const std::vector<std::uint8_t>& bytes, const Section& strings, std::uint64_t offset) {
  if (strings.offset > bytes.size() || offset >= strings.size || strings.offset + offset >= bytes.size()) return {};
  const char* start = reinterpret_cast<const char*>(bytes.data() + strings.offset + offset);
  const std::size_t limit = std::min<std::uint64_t>(strings.size - offset, bytes.size() - strings.offset - offset);
  return std::string_view(start, strnlen(start, limit));
}

}  // namespace

std::vector<std::string> cubin_global_variables(const std::vector<std::uint8_t>& cubin) {
  std::vector<std::string> names;
  if (cubin.size() < kHeaderBytes || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0 || cubin[4] != 2) return names;
  std::uint64_t section_table = 0;
  std::uint16_t section_count = 0;
  std::uint16_t section_names_index = 0;
  if (!read_at(cubin, 0x28, section_table) || !read_at(cubin, 0x3c, section_count) ||
      !read_at(cubin, 0x3e, section_names_index)) {
    return names;
  }
  Section section_names;
  if (!read_section(cubin, section_table, section_names_index, section_names)) return names;
  for (std::uint16_t s = 0; s < section_count; ++s) {
    Section symbols;
    if (!read_section(cubin, section_table, s, symbols) || symbols.type != kSymbolTable) continue;
    Section strings;
    if (!read_section(cubin, section_table, static_cast<std::uint16_t>(symbols.link), strings)) continue;
    for (std::uint64_t at = symbols.offset; at + kSymbolBytes <= symbols.offset + symbols.size; at += kSymbolBytes) {
      std::uint32_t name = 0;
      std::uint8_t info = 0;
      std::uint16_t section_index = 0;
      if (!read_at(cubin, at, name) || !read_at(cubin, at + 4, info) || !read_at(cubin, at + 6, section_index)) break;
      if ((info & 0xf) != kObjectSymbol || section_index == 0 || section_index >= section_count) continue;
      Section home;
      if (!read_section(cubin, section_table, section_index, home)) continue;
      const std::string_view home_name = string_at(cubin, section_names, home.name);
      if (home_name.rfind(".nv.global", 0) != 0) continue;
      const std::string_view symbol = string_at(cubin, strings, name);
      if (!symbol.empty()) names.emplace_back(symbol);
    }
  }
  return names;
}

}  // namespace kernelsmith::detail::cuda
