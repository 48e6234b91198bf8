// Loading a run-time library once per list of candidate files: the list comes from environment variables
// (an override names one file), so a process that changes them (a test) gets the library they name, and
// one that does not loads it once. A failure is remembered and thrown again, with its type and message.
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kernelsmith::detail::maca {

template <typename Table, typename Load>
const Table& load_once(const std::vector<std::string>& candidates, Load&& load) {
  struct Loaded {
    std::unique_ptr<Table> table;
    std::exception_ptr failure;
  };
  static std::mutex mutex;
  // Never destroyed: tables hold entry points of libraries that stay open until the process ends, and
  // backends alive at exit may still call them (as driver() in lib/cuda/driver_api.cpp explains).
  static auto& loaded = *new std::map<std::vector<std::string>, Loaded>;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = loaded.find(candidates);
  if (found == loaded.end()) {
    Loaded entry;
    try {
      entry.table = load(candidates);
    } catch (...) {
      entry.failure = std::current_exception();
    }
    found = loaded.emplace(candidates, std::move(entry)).first;
  }
  if (found->second.failure) std::rethrow_exception(found->second.failure);
  return *found->second.table;
}

}  // namespace kernelsmith::detail::maca
