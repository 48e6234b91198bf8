#include "evaluate/oracle_cache.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "detail/file_cache.hpp"

namespace kernelsmith::detail {
namespace {

namespace fs = std::filesystem;

// The first line of an outputs entry: the format, then the byte count of each buffer that follows.
constexpr const char* kOutputsFormat = "kernelsmith.oracle-outputs/1";
// The largest entry stored, as a fraction of the bound: a larger one would evict most entries at once.
constexpr std::uintmax_t kLargestEntryShare = 4;  // a quarter

}  // namespace

std::uintmax_t oracle_cache_bytes() {
  if (const auto bytes = cache_bytes_from_environment("KERNELSMITH_ORACLE_CACHE_GB")) return *bytes;
  return 16 * (std::uintmax_t(1) << 30);
}

OracleDiskCache::OracleDiskCache(std::string folder, std::uintmax_t max_bytes)
    : folder_(std::move(folder)), max_bytes_(max_bytes) {}

std::string OracleDiskCache::path(const std::string& key, const char* extension) const {
  return (fs::path(folder_) / key.substr(0, 2) / (key + extension)).string();
}

bool OracleDiskCache::read_outputs(const std::string& key, const std::vector<std::size_t>& sizes,
                                   const std::function<std::uint8_t*(std::size_t)>& destination) {
  if (folder_.empty()) return false;
  const std::string file = path(key, ".bin");
  // Unbuffered: a stream buffer would keep the last kilobytes of an expected output in the heap after the
  // stream is gone, where a kernel on a CPU device could read them (sealed_bytes.hpp).
  std::ifstream stream;
  stream.rdbuf()->pubsetbuf(nullptr, 0);
  stream.open(file, std::ios::binary);
  if (!stream) return false;
  std::string header;
  if (!std::getline(stream, header)) return false;
  std::ostringstream expected;
  expected << kOutputsFormat;
  for (const std::size_t size : sizes) expected << ' ' << size;
  if (header != expected.str()) return false;  // another layout: computed again and overwritten
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > 0 && !stream.read(reinterpret_cast<char*>(destination(i)), static_cast<std::streamsize>(sizes[i]))) {
      return false;
    }
  }
  mark_cache_file_used(file);
  return true;
}

std::optional<std::vector<Bytes>> OracleDiskCache::find_outputs(const std::string& key,
                                                                const std::vector<std::size_t>& sizes) {
  std::vector<Bytes> outputs;
  for (const std::size_t size : sizes) outputs.emplace_back(size);
  if (!read_outputs(key, sizes, [&](std::size_t i) { return outputs[i].data(); })) return std::nullopt;
  return outputs;
}

std::optional<std::vector<SealedBytes>> OracleDiskCache::find_sealed_outputs(const std::string& key,
                                                                             const std::vector<std::size_t>& sizes) {
  std::vector<SealedBytes> outputs;
  outputs.reserve(sizes.size());  // the views below refer to the elements: they must not move
  std::vector<std::unique_ptr<Unsealed>> open;
  for (const std::size_t size : sizes) {
    outputs.emplace_back(size);
    open.push_back(std::make_unique<Unsealed>(outputs.back(), true));
  }
  const bool found = read_outputs(key, sizes, [&](std::size_t i) { return open[i]->writable_data(); });
  open.clear();  // sealed again
  if (!found) return std::nullopt;
  return outputs;
}

void OracleDiskCache::write_outputs(const std::string& key, const std::vector<ByteView>& outputs) {
  if (folder_.empty()) return;
  std::string header = kOutputsFormat;
  std::uintmax_t total = 0;
  for (const ByteView& bytes : outputs) {
    header += fmt::format(" {}", bytes.size);
    total += bytes.size;
  }
  if (total > max_bytes_ / kLargestEntryShare) return;
  header += '\n';
  std::vector<FilePart> parts{{header.data(), header.size()}};
  for (const ByteView& bytes : outputs) parts.push_back({bytes.data, bytes.size});
  if (write_cache_file(path(key, ".bin"), parts)) stored(total + header.size());
}

void OracleDiskCache::store_outputs(const std::string& key, const std::vector<Bytes>& outputs) {
  write_outputs(key, std::vector<ByteView>(outputs.begin(), outputs.end()));
}

void OracleDiskCache::store_outputs(const std::string& key, const std::vector<SealedBytes>& outputs) {
  std::vector<std::unique_ptr<Unsealed>> open;
  std::vector<ByteView> views;
  for (const SealedBytes& bytes : outputs) {
    open.push_back(std::make_unique<Unsealed>(bytes));
    views.emplace_back(*open.back());
  }
  write_outputs(key, views);
}

std::optional<std::string> OracleDiskCache::find_text(const std::string& key) {
  if (folder_.empty()) return std::nullopt;
  const std::string file = path(key, ".json");
  auto text = read_whole_file(file);
  if (text) mark_cache_file_used(file);
  return text;
}

void OracleDiskCache::store_text(const std::string& key, const std::string& text) {
  if (folder_.empty()) return;
  if (write_cache_file(path(key, ".json"), text)) stored(text.size());
}

void OracleDiskCache::stored(std::uintmax_t bytes) {
  // The folder is walked again after every tenth of the bound written (and after the first entry of
  // this process): other processes write into it too.
  if (since_prune_ > 0 && since_prune_ + bytes < max_bytes_ / 10) {
    since_prune_ += bytes;
    return;
  }
  since_prune_ = bytes;
  prune_cache_folder(folder_, max_bytes_);
}

}  // namespace kernelsmith::detail
