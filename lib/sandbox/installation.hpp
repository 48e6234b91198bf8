// Where a program's installation lies, for the folders a confined process may read: shared by the launcher
// (the program it starts) and the library (the interpreter its helpers run, which the worker starts from
// inside its own sandbox). Header-only: the launcher links nothing of the library.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kernelsmith::sandbox {

/// The entries of a colon-separated list ($PATH, $PYTHONPATH), empty ones left out.
inline std::vector<std::string> search_path_entries(const char* list) {
  std::vector<std::string> entries;
  if (list == nullptr) return entries;
  const std::string text = list;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(':', start), text.size());
    if (end > start) entries.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return entries;
}

/// `name` itself when it holds a '/', else its first executable match on $PATH, as execvp finds it; "" when
/// there is none.
inline std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  for (const auto& folder : search_path_entries(std::getenv("PATH"))) {
    const std::string candidate = (std::filesystem::path(folder) / name).string();
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

/// The installation folder of an executable, as named and with links resolved (a virtual environment's python
/// is a link into the base installation, and both trees are needed): /x/bin/prog -> /x; a program outside a
/// bin/ folder reads its own folder. Nothing for a path that is not an executable.
inline std::vector<std::string> installation_folders(const std::string& program) {
  std::vector<std::string> folders;
  if (program.empty() || ::access(program.c_str(), X_OK) != 0) return folders;
  auto add = [&](const std::filesystem::path& path) {
    std::filesystem::path folder = path.parent_path();
    if (folder.filename() == "bin" || folder.filename() == "sbin") folder = folder.parent_path();
    if (!folder.empty() && folder != "/") folders.push_back(folder.string());
  };
  add(program);
  std::error_code error;
  const auto resolved = std::filesystem::canonical(program, error);
  if (!error) add(resolved);
  return folders;
}

}  // namespace kernelsmith::sandbox
