// Where the package's data folders are (tasks/, skills/): one search order for every kind of data.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kernelsmith::detail {

/// The folders to search for the data folder `name`, in order, each once: the entries of the environment
/// variable `variable` (':'-separated), `name` beside the shared library (a wheel:
/// site-packages/kernelsmith/<name>), share/kernelsmith/<name> beside its lib/ (an installed tree), and
/// `source_folder` (the source tree's, for an uninstalled build; empty: none).
std::vector<std::filesystem::path> data_search_path(const char* variable, const std::string& name,
                                                    const std::string& source_folder);

}  // namespace kernelsmith::detail
