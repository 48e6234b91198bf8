// The PyTorch oracle's results on disk (docs/kernelbench.md, "PyTorch oracle and baselines"): expected
// outputs of correctness cases and baseline timings, under content keys (the task's content key, the
// case, the device, torch's version), in the cache folder's "oracle" subfolder, so that an evolution, and
// the next run on the same machine, computes each once. Bounded: past $KERNELSMITH_ORACLE_CACHE_GB
// (default 16) GiB the least recently used entries go, and an entry over a quarter of the bound is not
// stored at all (one case of a KernelBench problem can hold gigabytes: keeping it would push out most of
// the cache and cost a disk write of that size per case). Safe under concurrent runs: entries are written
// whole through a rename, and a missing or damaged entry is computed again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "evaluate/host_tensors.hpp"

namespace kernelsmith::detail {

/// The oracle cache's bound in bytes: $KERNELSMITH_ORACLE_CACHE_GB GiB, else 16 GiB.
std::uintmax_t oracle_cache_bytes();

class OracleDiskCache {
 public:
  /// `folder` empty: a cache that never finds and never stores.
  OracleDiskCache(std::string folder, std::uintmax_t max_bytes);

  /// The buffers stored under `key`, when there is an entry whose buffers have exactly `sizes` bytes.
  std::optional<std::vector<Bytes>> find_outputs(const std::string& key, const std::vector<std::size_t>& sizes);
  /// Stores the buffers under `key`, unless together they exceed a quarter of the bound (see above).
  void store_outputs(const std::string& key, const std::vector<Bytes>& outputs);
  /// As find_outputs and store_outputs, for expected outputs: read straight into sealed memory (no copy
  /// stays in the heap: the file is read unbuffered), and written from it.
  std::optional<std::vector<SealedBytes>> find_sealed_outputs(const std::string& key,
                                                              const std::vector<std::size_t>& sizes);
  void store_outputs(const std::string& key, const std::vector<SealedBytes>& outputs);

  /// A small text entry (a baseline's timing).
  std::optional<std::string> find_text(const std::string& key);
  void store_text(const std::string& key, const std::string& text);

  const std::string& folder() const { return folder_; }

 private:
  /// Reads the entry under `key` into the buffers `destination(i)` gives (each of sizes[i] bytes).
  bool read_outputs(const std::string& key, const std::vector<std::size_t>& sizes,
                    const std::function<std::uint8_t*(std::size_t)>& destination);
  void write_outputs(const std::string& key, const std::vector<ByteView>& outputs);
  std::string path(const std::string& key, const char* extension) const;
  void stored(std::uintmax_t bytes);

  std::string folder_;
  std::uintmax_t max_bytes_;
  std::uintmax_t since_prune_ = 0;
};

}  // namespace kernelsmith::detail
