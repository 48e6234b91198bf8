#include "detail/data_path.hpp"

#include <algorithm>
#include <cstdlib>

#include "detail/dynamic_library.hpp"

namespace kernelsmith::detail {

namespace fs = std::filesystem;

std::vector<fs::path> data_search_path(const char* variable, const std::string& name,
                                       const std::string& source_folder) {
  std::vector<fs::path> folders;
  const auto add = [&folders](const fs::path& folder) {
    if (folder.empty()) return;
    const fs::path normal = folder.lexically_normal();
    if (std::find(folders.begin(), folders.end(), normal) == folders.end()) folders.push_back(normal);
  };
  if (const char* value = std::getenv(variable)) {
    const std::string entries = value;
    std::size_t start = 0;
    while (start <= entries.size()) {
      const std::size_t end = std::min(entries.find(':', start), entries.size());
      add(entries.substr(start, end - start));
      start = end + 1;
    }
  }
  const std::string library = library_directory();
  if (!library.empty()) {
    add(fs::path(library) / name);                                  // wheel: site-packages/kernelsmith/<name>
    add(fs::path(library) / ".." / "share" / "kernelsmith" / name);  // installed: lib/ and share/
  }
  add(source_folder);
  return folders;
}

}  // namespace kernelsmith::detail
