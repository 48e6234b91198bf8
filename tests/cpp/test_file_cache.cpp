// The cache folder and its crash-safe writes (lib/detail/file_cache.cpp): where the folder is, whole files
// or nothing, a cache that cannot be written is skipped instead of failing, and a bounded folder loses its
// least recently used entries first (the PyTorch oracle's, lib/evaluate/oracle_cache.cpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "detail/file_cache.hpp"
#include "evaluate/oracle_cache.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using kernelsmith::detail::FilePart;
using kernelsmith::detail::mark_cache_file_used;
using kernelsmith::detail::OracleDiskCache;
using kernelsmith::detail::prune_cache_folder;
using kernelsmith::detail::read_whole_file;
using kernelsmith::detail::resolve_cache_dir;
using kernelsmith::detail::write_cache_file;
using kernelsmith::test::ScopedEnvironment;

namespace {

fs::path scratch_folder(const std::string& name) {
  const fs::path folder = fs::temp_directory_path() / ("kernelsmith-test-file-cache-" + std::to_string(::getpid())) / name;
  fs::remove_all(folder);
  return folder;
}

}  // namespace

TEST_CASE("the cache folder: the configured one, else $KERNELSMITH_CACHE_DIR, $XDG_CACHE_HOME, $HOME", "[file_cache]") {
  const ScopedEnvironment kernelsmith("KERNELSMITH_CACHE_DIR", "/k");
  const ScopedEnvironment xdg("XDG_CACHE_HOME", "/x");
  const ScopedEnvironment home("HOME", "/h");
  CHECK(resolve_cache_dir("/configured") == "/configured");
  CHECK(resolve_cache_dir("") == "/k");
  {
    const ScopedEnvironment no_kernelsmith("KERNELSMITH_CACHE_DIR", "");  // empty counts as unset
    CHECK(resolve_cache_dir("") == "/x/kernelsmith");
    const ScopedEnvironment no_xdg("XDG_CACHE_HOME", std::nullopt);
    CHECK(resolve_cache_dir("") == "/h/.cache/kernelsmith");
    const ScopedEnvironment no_home("HOME", std::nullopt);
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

TEST_CASE("a cache folder over its bound loses the least recently used entries first", "[file_cache]") {
  const fs::path folder = scratch_folder("bounded");
  const std::string kilobyte(1024, 'x');
  for (int i = 0; i < 10; ++i) {
    const fs::path entry = folder / std::to_string(i % 3) / ("entry" + std::to_string(i));
    REQUIRE(write_cache_file(entry.string(), std::vector<FilePart>{{kilobyte.data(), 512}, {kilobyte.data(), 512}}));
    // Older entries first: entry0 is the least recently written.
    fs::last_write_time(entry, fs::file_time_type::clock::now() - std::chrono::minutes(60 - i));
  }
  // entry0 is read now: it becomes the most recently used.
  mark_cache_file_used((folder / "0" / "entry0").string());
  prune_cache_folder(folder.string(), 6 * 1024);  // 10 KiB in the folder, to at most 90% of 6 KiB
  std::vector<std::string> kept;
  for (const auto& file : fs::recursive_directory_iterator(folder)) {
    if (file.is_regular_file()) kept.push_back(file.path().filename().string());
  }
  std::sort(kept.begin(), kept.end());
  CHECK(kept == std::vector<std::string>{"entry0", "entry6", "entry7", "entry8", "entry9"});
  prune_cache_folder(folder.string(), 1 << 20);  // within the bound: nothing goes
  CHECK(std::distance(fs::recursive_directory_iterator(folder), fs::recursive_directory_iterator()) == 8);
  fs::remove_all(folder.parent_path());
}

TEST_CASE("the oracle's disk cache returns what it stored, only for the sizes it stored", "[file_cache][oracle]") {
  const fs::path folder = scratch_folder("oracle");
  OracleDiskCache cache(folder.string(), 1 << 20);
  const std::vector<kernelsmith::detail::Bytes> outputs{{1, 2, 3, 4}, {}, {9, 8}};
  CHECK_FALSE(cache.find_outputs("ab12", {4, 0, 2}).has_value());
  cache.store_outputs("ab12", outputs);
  CHECK(cache.find_outputs("ab12", {4, 0, 2}) == outputs);
  CHECK_FALSE(cache.find_outputs("ab12", {4, 2}).has_value());  // another layout: computed again
  cache.store_text("cd34", "{\"timing\": null}");
  CHECK(cache.find_text("cd34") == std::string("{\"timing\": null}"));
  OracleDiskCache off("", 1 << 20);  // no folder: a cache that never finds
  off.store_outputs("ab12", outputs);
  CHECK_FALSE(off.find_outputs("ab12", {4, 0, 2}).has_value());
  fs::remove_all(folder.parent_path());
}

TEST_CASE("the oracle's disk cache does not store an entry over a quarter of its bound", "[file_cache][oracle]") {
  const fs::path folder = scratch_folder("oracle-large");
  OracleDiskCache cache(folder.string(), 1000);
  const std::vector<kernelsmith::detail::Bytes> quarter{kernelsmith::detail::Bytes(250, 7)};
  const std::vector<kernelsmith::detail::Bytes> over{kernelsmith::detail::Bytes(200, 1), kernelsmith::detail::Bytes(51, 2)};
  cache.store_outputs("aa01", quarter);
  cache.store_outputs("aa02", over);
  CHECK(cache.find_outputs("aa01", {250}) == quarter);
  CHECK_FALSE(cache.find_outputs("aa02", {200, 51}).has_value());  // would push out most of the cache
  CHECK_FALSE(fs::exists(folder / "aa" / "aa02.bin"));
  fs::remove_all(folder.parent_path());
}
