// Opening shared libraries at run time (dlopen), with the three distinct failures the error model
// names: not found, failed to load, symbol missing. Backends keep their function tables on top of it.
#pragma once

#include <string>
#include <vector>

namespace kernelsmith::detail {

class DynamicLibrary {
 public:
  /// Tries each candidate (a path or a soname) in order and keeps the first that loads.
  /// `what` names the library in messages, e.g. "CUDA driver". Throws LibraryNotFoundError when no
  /// candidate exists (listing what was tried), LibraryLoadError when one exists but dlopen fails.
  DynamicLibrary(const std::string& what, const std::vector<std::string>& candidates);
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  /// Address of a symbol; throws SymbolMissingError naming the library and the symbol.
  void* symbol(const char* name) const;
  /// Address of a symbol, or nullptr when absent (for optional functions).
  void* optional_symbol(const char* name) const;

  /// The candidate that loaded, and the file it resolved to.
  const std::string& loaded_name() const { return loaded_name_; }
  std::string resolved_path() const;
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::string loaded_name_;
  void* handle_ = nullptr;
};

/// Candidates from an override variable (a file path), then `env_dirs` variables (each a folder whose
/// `subdirs` are searched for each soname), then the sonames themselves (the loader's search path),
/// then `fallback_dirs`.
std::vector<std::string> library_candidates(const std::string& override_variable,
                                            const std::vector<std::string>& env_dirs,
                                            const std::vector<std::string>& subdirs,
                                            const std::vector<std::string>& sonames,
                                            const std::vector<std::string>& fallback_dirs);

/// The folder holding the kernelsmith shared library itself (to find the worker and installed data).
std::string library_directory();

}  // namespace kernelsmith::detail
