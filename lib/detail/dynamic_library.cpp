#include "detail/dynamic_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
namespace {

bool looks_like_path(const std::string& name) { return name.find('/') != std::string::npos; }

// dlopen reports a missing file and a broken one in the same way; tell them apart by whether the file
// exists (for paths) or by the loader's own wording (for sonames).
bool missing_file(const std::string& name, const std::string& dl_message) {
  if (looks_like_path(name)) return !std::filesystem::exists(name);
  return dl_message.find("No such file") != std::string::npos ||
         dl_message.find("cannot open shared object file") != std::string::npos;
}

}  // namespace

DynamicLibrary::DynamicLibrary(const std::string& what, const std::vector<std::string>& candidates)
    : what_(what) {
  std::vector<std::string> load_failures;
  for (const auto& candidate : candidates) {
    dlerror();
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      handle_ = handle;
      loaded_name_ = candidate;
      return;
    }
    const char* message = dlerror();
    const std::string dl_message = message != nullptr ? message : "unknown dlopen error";
    if (!missing_file(candidate, dl_message)) {
      load_failures.push_back(fmt::format("{}: {}", candidate, dl_message));
    }
  }
  if (!load_failures.empty()) {
    throw LibraryLoadError(fmt::format("{} found but failed to load: {}", what,
                                       fmt::join(load_failures, "; ")));
  }
  const std::string first = candidates.empty() ? std::string("(no candidates)") : candidates.front();
  throw LibraryNotFoundError(fmt::format("{} {} not found (tried: {})", what,
                                         looks_like_path(first) ? std::filesystem::path(first).filename().string() : first,
                                         fmt::join(candidates, ", ")));
}

DynamicLibrary::~DynamicLibrary() {
  // Never dlclose driver libraries: they register atexit handlers and threads that outlive us.
}

void* DynamicLibrary::symbol(const char* name) const {
  void* address = optional_symbol(name);
  if (address == nullptr) {
    throw SymbolMissingError(fmt::format("{} ({}) has no symbol {}: the library is too old or not the "
                                         "expected one; install a newer version or point the override "
                                         "variable at another file",
                                         what_, resolved_path(), name));
  }
  return address;
}

void* DynamicLibrary::optional_symbol(const char* name) const { return dlsym(handle_, name); }

std::string DynamicLibrary::resolved_path() const {
  // dladdr needs an address inside the library; dlinfo would too. The name we loaded is good enough
  // when no symbol is at hand.
  return loaded_name_;
}

std::vector<std::string> library_candidates(const std::string& override_variable,
                                            const std::vector<std::string>& env_dirs,
                                            const std::vector<std::string>& subdirs,
                                            const std::vector<std::string>& sonames,
                                            const std::vector<std::string>& fallback_dirs) {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv(override_variable.c_str()); path != nullptr && *path != '\0') {
    // An explicit override is the only candidate: a user who sets it wants that file or an error.
    return {path};
  }
  for (const auto& variable : env_dirs) {
    const char* root = std::getenv(variable.c_str());
    if (root == nullptr || *root == '\0') continue;
    for (const auto& subdir : subdirs) {
      for (const auto& soname : sonames) {
        candidates.push_back((std::filesystem::path(root) / subdir / soname).string());
      }
    }
  }
  for (const auto& soname : sonames) candidates.push_back(soname);
  for (const auto& dir : fallback_dirs) {
    for (const auto& soname : sonames) {
      candidates.push_back((std::filesystem::path(dir) / soname).string());
    }
  }
  return candidates;
}

std::string library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_directory), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  return std::filesystem::absolute(info.dli_fname).parent_path().string();
}

}  // namespace kernelsmith::detail
