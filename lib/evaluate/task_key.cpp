#include "evaluate/task_key.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "detail/sha256.hpp"

namespace kernelsmith::detail {
namespace {

using Buffer = std::vector<std::uint8_t>;

/// Digests of data case buffers by address. An entry is valid while its buffer lives: the weak pointer
/// tells a living buffer from a new one that reuses the address of a freed one.
class BufferDigests {
 public:
  std::string of(const std::shared_ptr<const Buffer>& buffer) {
    if (!buffer) return "none";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto found = digests_.find(buffer.get());
      if (found != digests_.end()) {
        if (const auto alive = found->second.buffer.lock(); alive && alive.get() == buffer.get()) {
          return found->second.digest;
        }
      }
    }
    // Hashed outside the lock: tens of MB take a while, and two threads at worst hash one buffer twice.
    const std::string digest = Sha256().update(buffer->data(), buffer->size()).hex();
    std::lock_guard<std::mutex> lock(mutex_);
    if (digests_.size() >= prune_at_) {
      for (auto it = digests_.begin(); it != digests_.end();) {
        it = it->second.buffer.expired() ? digests_.erase(it) : std::next(it);
      }
      prune_at_ = std::max<std::size_t>(kFirstPrune, 2 * digests_.size());
    }
    digests_[buffer.get()] = Entry{buffer, digest};
    return digest;
  }

 private:
  struct Entry {
    std::weak_ptr<const Buffer> buffer;
    std::string digest;
  };
  static constexpr std::size_t kFirstPrune = 256;
  std::mutex mutex_;
  std::unordered_map<const Buffer*, Entry> digests_;
  std::size_t prune_at_ = kFirstPrune;
};

BufferDigests& buffer_digests() {
  static BufferDigests* digests = new BufferDigests();  // never destroyed: used from worker threads at exit
  return *digests;
}

}  // namespace

std::string task_content_key(const Task& task) {
  Task manifest = task;  // shares the case buffers; only the manifest part is serialised
  manifest.cases.clear();
  Sha256 hash;
  hash.field("kernelsmith.task-key/1").field(manifest.to_json());
  for (const DataCase& data_case : task.cases) {
    hash.field("case").field(data_case.name).field(data_case.sizes);
    for (const auto& [tensor, bytes] : data_case.inputs) hash.field("input").field(tensor).field(buffer_digests().of(bytes));
    for (const auto& [tensor, bytes] : data_case.expected) {
      hash.field("expected").field(tensor).field(buffer_digests().of(bytes));
    }
  }
  return hash.hex();
}

}  // namespace kernelsmith::detail
