// The on-disk cache folder (compiled programs, measured device peaks) and crash-safe writes into it.
#pragma once

#include <optional>
#include <string>

namespace kernelsmith::detail {

/// The cache folder: `configured` when not empty, else $KERNELSMITH_CACHE_DIR, else
/// $XDG_CACHE_HOME/kernelsmith, else ~/.cache/kernelsmith (/tmp/kernelsmith-cache-<uid> without HOME).
std::string resolve_cache_dir(const std::string& configured);

/// The whole file as bytes, or nothing when it cannot be read (task manifests, candidates, cache entries).
std::optional<std::string> read_whole_file(const std::string& path);

/// Writes through a temporary file and a rename, so a reader never sees half a file; creates the
/// folders. Returns false (and writes nothing) when the folder is not writable: a cache is optional.
bool write_cache_file(const std::string& path, const std::string& contents);

}  // namespace kernelsmith::detail
