// The cache folder and its crash-safe writes (lib/detail/file_cache.cpp): where the folder is, whole files
// or nothing, and a cache that cannot be written is skipped instead of failing.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "detail/file_cache.hpp"

namespace fs = std::filesystem;
using kernelsmith::detail::read_whole_file;
using kernelsmith::detail::resolve_cache_dir;
using kernelsmith::detail::write_cache_file;

namespace {

// Sets (or, with nullopt, unsets) an environment variable for one scope and restores it after.
class ScopedVariable {
 public:
  ScopedVariable(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    const char* before = std::getenv(name_.c_str());
    if (before != nullptr) saved_ = before;
    set(value);
  }
  ~ScopedVariable() { set(saved_); }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  void set(const std::optional<std::string>& value) const {
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  std::string name_;
  std::optional<std::string> saved_;
};

fs::path scratch_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("kernelsmith-test-file-cache-" + std::to_string(::getpid())) / name;
  fs::remove_all(folder);
  return folder;
}

}  // namespace

TEST_CASE("the cache folder: the configured one, else $KERNELSMITH_CACHE_DIR, $XDG_CACHE_HOME, $HOME", "[file_cache]") {
  const ScopedVariable kernelsmith("KERNELSMITH_CACHE_DIR", "/k");
  const ScopedVariable xdg("XDG_CACHE_HOME", "/x");
  const ScopedVariable home("HOME", "/h");
  CHECK(resolve_cache_dir("/configured") == "/configured");
  CHECK(resolve_cache_dir("") == "/k");
  {
    const ScopedVariable no_kernelsmith("KERNELSMITH_CACHE_DIR", "");  // empty counts as unset
    CHECK(resolve_cache_dir("") == "/x/kernelsmith");
    const ScopedVariable no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(resolve_cache_dir("") == "/h/.cache/kernelsmith");
    const ScopedVariable no_home("HOME", std::nullopt);
    CHECK(resolve_cache_dir("") == "/tmp/kernelsmith-cache-" + std::to_string(static_cast<long>(::getuid())));
  }
  CHECK(resolve_cache_dir("") == "/k");  // restored
}

TEST_CASE("cache files are written whole, into folders made on the way, with no temporaries left", "[file_cache]") {
  const fs::path folder = scratch_folder("write");
  const fs::path entry = folder / "peaks" / "opencl-0123.json";
  CHECK_FALSE(read_whole_file(entry.string()).has_value());
  const std::string contents("{\"peak_gbps\": 1.5}\n\0binary tail", 31);
  REQUIRE(write_cache_file(entry.string(), contents));
  CHECK(read_whole_file(entry.string()) == contents);
  REQUIRE(write_cache_file(entry.string(), "replaced"));  // a second write replaces the entry
  CHECK(read_whole_file(entry.string()) == std::string("replaced"));
  std::vector<std::string> names;
  for (const auto& file : fs::directory_iterator(entry.parent_path())) names.push_back(file.path().filename().string());
  CHECK(names == std::vector<std::string>{"opencl-0123.json"});
  fs::remove_all(folder.parent_path());
}

TEST_CASE("a cache that cannot be written is skipped: false, and nothing written", "[file_cache]") {
  const fs::path folder = scratch_folder("blocked");
  fs::create_directories(folder);
  const fs::path file = folder / "a-file";
  std::ofstream(file) << "not a folder";
  CHECK_FALSE(write_cache_file((file / "entry.json").string(), "x"));  // its folder would be a file
  CHECK_FALSE(read_whole_file((file / "entry.json").string()).has_value());
  fs::remove_all(folder.parent_path());
}
