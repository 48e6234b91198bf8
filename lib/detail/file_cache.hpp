// The on-disk cache folder (compiled programs, measured device peaks) and crash-safe writes into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kernelsmith::detail {

/// The cache folder: `configured` when not empty, else $KERNELSMITH_CACHE_DIR, else
/// $XDG_CACHE_HOME/kernelsmith, else ~/.cache/kernelsmith (/tmp/kernelsmith-cache-<uid> without HOME).
std::string resolve_cache_dir(const std::string& configured);

/// The whole file as bytes, or nothing when it cannot be read (task manifests, candidates, cache entries).
std::optional<std::string> read_whole_file(const std::string& path);

/// Writes through a temporary file and a rename, so a reader never sees half a file; creates the
/// folders. Returns false (and writes nothing) when the folder is not writable: a cache is optional.
bool write_cache_file(const std::string& path, const std::string& contents);

/// A piece of a file's contents (a header, a tensor's bytes).
struct FilePart {
  const void* data = nullptr;
  std::size_t size = 0;
};
/// The same for contents in pieces, written one after the other without joining them in memory (large
/// tensors).
bool write_cache_file(const std::string& path, const std::vector<FilePart>& parts);

/// Keeps a cache folder within `max_bytes`: when its files take more, the least recently used ones
/// (oldest modification time; readers mark an entry used with mark_cache_file_used) are removed until
/// they take at most 90% of it. Safe while other processes read and write the folder: a reader whose
/// entry is removed under it still reads the open file, or misses and computes the entry again.
void prune_cache_folder(const std::string& folder, std::uintmax_t max_bytes);

/// A cache's bound set in GiB by an environment variable (KERNELSMITH_ORACLE_CACHE_GB, KERNELSMITH_CASE_CACHE_GB):
/// its bytes, or nothing when the variable is unset. A value that is not a positive number is an error
/// naming the variable, since a cache bound silently ignored can cost a machine its memory.
std::optional<std::uintmax_t> cache_bytes_from_environment(const char* variable);

/// Sets a cache entry's modification time to now, so that prune_cache_folder keeps it longest.
void mark_cache_file_used(const std::string& path);

}  // namespace kernelsmith::detail
