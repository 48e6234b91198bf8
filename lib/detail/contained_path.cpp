#include "detail/contained_path.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

namespace fs = std::filesystem;

fs::path path_inside(const fs::path& folder, const std::string& name) {
  if (name.empty()) throw ValidationError("the file name is empty");
  const fs::path given(name);
  if (given.is_absolute()) {
    throw ValidationError(fmt::format("\"{}\" is an absolute path; name a file inside {} by a path relative to it",
                                      name, folder.string()));
  }
  // Both sides resolved the same way (symbolic links followed, "." and ".." removed), so that a folder reached
  // through a link still contains its own files.
  std::error_code error;
  const fs::path root = fs::weakly_canonical(fs::absolute(folder, error), error);
  if (error) throw ValidationError(fmt::format("cannot resolve the folder {}: {}", folder.string(), error.message()));
  const fs::path resolved = fs::weakly_canonical(root / given, error);
  if (error) throw ValidationError(fmt::format("cannot resolve \"{}\" in {}: {}", name, folder.string(), error.message()));
  // Whole components compared: /tasks/relu2 is not inside /tasks/relu.
  const auto [end_of_root, _] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  if (end_of_root != root.end()) {
    throw ValidationError(fmt::format("\"{}\" leads out of the folder {} (to {}); a file named here must lie inside "
                                      "that folder: no \"..\" above it and no symbolic link out of it",
                                      name, root.string(), resolved.string()));
  }
  return resolved;
}

}  // namespace kernelsmith::detail
