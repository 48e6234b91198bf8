#include "detail/file_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
    std::ofstream stream(temporary, std::ios::binary | std::ios::trunc);
    if (!stream) return false;
    stream.write(contents.data(), static_cast<std::streamsize>(contents.size()));
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

}  // namespace kernelsmith::detail
