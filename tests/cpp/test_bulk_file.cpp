// The oracle's tensor files: written and read back whole, in one call or in parallel chunks.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "detail/bulk_file.hpp"

namespace fs = std::filesystem;
using kernelsmith::detail::read_bulk_file;
using kernelsmith::detail::write_bulk_file;

namespace {

fs::path scratch_folder() {
  const fs::path folder = fs::temp_directory_path() / ("kernelsmith-bulk-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  return folder;
}

std::vector<std::uint8_t> pattern(std::size_t size) {
  std::vector<std::uint8_t> bytes(size);
  std::uint32_t state = 12345;
  for (auto& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<std::uint8_t>(state >> 24);
  }
  return bytes;
}

}  // namespace

TEST_CASE("bulk files round-trip below and above the size copied in parallel", "[bulk_file]") {
  const fs::path folder = scratch_folder();
  // 1 MiB goes through one write(); 80 MiB + 3 bytes through the mapping, with a partial last chunk.
  for (const std::size_t size : {std::size_t(1) << 20, (std::size_t(80) << 20) + 3}) {
    const std::vector<std::uint8_t> data = pattern(size);
    const std::string path = (folder / "tensor.bin").string();
    std::string error;
    REQUIRE(write_bulk_file(path, data.data(), data.size(), error));
    CHECK(fs::file_size(path) == size);
    std::vector<std::uint8_t> back(size, 0);
    REQUIRE(read_bulk_file(path, back.data(), back.size(), error));
    CHECK(back == data);
  }
  fs::remove_all(folder);
}

TEST_CASE("bulk files: a folder that does not exist and a short file are errors that name the file", "[bulk_file]") {
  const fs::path folder = scratch_folder();
  const std::vector<std::uint8_t> data = pattern(std::size_t(70) << 20);
  std::string error;
  const std::string missing = (folder / "no-such-folder" / "tensor.bin").string();
  CHECK_FALSE(write_bulk_file(missing, data.data(), data.size(), error));
  CHECK(error.find(missing) != std::string::npos);

  // A file shorter than asked for, above and below the parallel size.
  const std::string path = (folder / "short.bin").string();
  REQUIRE(write_bulk_file(path, data.data(), data.size() - 1, error));
  std::vector<std::uint8_t> back(data.size());
  error.clear();
  CHECK_FALSE(read_bulk_file(path, back.data(), back.size(), error));
  CHECK(error.find(path) != std::string::npos);
  REQUIRE(write_bulk_file(path, data.data(), 100, error));
  error.clear();
  CHECK_FALSE(read_bulk_file(path, back.data(), 200, error));
  CHECK(error.find(path) != std::string::npos);
  fs::remove_all(folder);
}
