// Files that a document names relative to its own folder (a task manifest's sources, a skill bank's
// examples) are read only from inside that folder: such documents come from others (a downloaded task, a
// shared skill bank), and a name such as "../../../etc/passwd" would otherwise put any file the user can
// read into a prompt sent to an LLM endpoint or into a run store.
#pragma once

#include <filesystem>
#include <string>

namespace kernelsmith::detail {

/// The file `name` names, relative to `folder`, with every symbolic link resolved. Throws ValidationError
/// (a message without the document's name: the caller adds it with the field) when `name` is empty or
/// absolute, or when it resolves outside `folder`, by ".." or through a symbolic link. The file need not
/// exist.
std::filesystem::path path_inside(const std::filesystem::path& folder, const std::string& name);

}  // namespace kernelsmith::detail
