#include "detail/file_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

std::string resolve_cache_dir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* dir = std::getenv("KERNELSMITH_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return (std::filesystem::path(xdg) / "kernelsmith").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (std::filesystem::path(home) / ".cache" / "kernelsmith").string();
  }
  return "/tmp/kernelsmith-cache-" + std::to_string(static_cast<long>(getuid()));
}

std::optional<std::string> read_whole_file(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return std::nullopt;
  std::ostringstream text;
  text << stream.rdbuf();
  if (!stream.good() && !stream.eof()) return std::nullopt;
  return text.str();
}

bool write_cache_file(const std::string& path, const std::string& contents) {
  return write_cache_file(path, std::vector<FilePart>{{contents.data(), contents.size()}});
}

bool write_cache_file(const std::string& path, const std::vector<FilePart>& parts) {
  namespace fs = std::filesystem;
  static std::atomic<unsigned> counter{0};
  std::error_code error;
  const fs::path target(path);
  fs::create_directories(target.parent_path(), error);
  if (error) return false;
  // Unique per process and call: several processes and threads may write the same entry at once.
  const fs::path temporary = target.parent_path() / (target.filename().string() + ".tmp." +
                                                     std::to_string(static_cast<long>(getpid())) + "." +
                                                     std::to_string(counter.fetch_add(1)));
  {
    // Unbuffered: each part goes to the file in one write, and no stream buffer keeps a copy of the last
    // part (an expected output the harness holds sealed: lib/evaluate/sealed_bytes.hpp) in the heap.
    std::ofstream stream;
    stream.rdbuf()->pubsetbuf(nullptr, 0);
    stream.open(temporary, std::ios::binary | std::ios::trunc);
    if (!stream) return false;
    for (const FilePart& part : parts) {
      stream.write(static_cast<const char*>(part.data), static_cast<std::streamsize>(part.size));
    }
    stream.flush();
    if (!stream) {
      fs::remove(temporary, error);
      return false;
    }
  }
  fs::rename(temporary, target, error);
  if (error) {
    fs::remove(temporary, error);
    return false;
  }
  return true;
}

void prune_cache_folder(const std::string& folder, std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    std::uintmax_t size;
  };
  std::vector<Entry> entries;
  std::uintmax_t total = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    std::error_code entry_error;
    if (!it->is_regular_file(entry_error) || entry_error) continue;
    const std::uintmax_t size = it->file_size(entry_error);
    const fs::file_time_type used = it->last_write_time(entry_error);
    if (entry_error) continue;  // removed by another process meanwhile
    entries.push_back({it->path(), used, size});
    total += size;
  }
  if (total <= max_bytes) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  const std::uintmax_t target = max_bytes / 10 * 9;
  for (const Entry& entry : entries) {
    if (total <= target) break;
    std::error_code remove_error;
    fs::remove(entry.path, remove_error);
    total -= entry.size;
  }
}

void mark_cache_file_used(const std::string& path) {
  std::error_code error;
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), error);
}

std::optional<std::uintmax_t> cache_bytes_from_environment(const char* variable) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const double gib = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(gib > 0.0) || gib > 1e9) {
    throw ValidationError(fmt::format("${} is '{}': set it to a positive number of GiB (e.g. 4 or 0.5), or unset it "
                                      "for the default",
                                      variable, text));
  }
  return static_cast<std::uintmax_t>(gib * static_cast<double>(std::uintmax_t(1) << 30));
}

}  // namespace kernelsmith::detail
