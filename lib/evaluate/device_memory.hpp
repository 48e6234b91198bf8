// Device memory as the harness holds it: a pool of allocations reused by size, the buffers of one plan
// run taken from it, and the launch of a bound plan on those buffers. Modules are DeviceModule
// (device_guard.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "device_guard.hpp"
#include "evaluate/plan_binding.hpp"
#include "evaluate/timing.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"

namespace kernelsmith::detail {

/// Device allocations kept for reuse, by size. Evaluations of one task then run on the same memory:
/// no allocation cost per evaluation, and the candidate, its baseline and the next candidate are timed
/// on the same physical pages (fresh allocations land on different ones, which moves the medians of
/// memory-bound kernels by about a percent from one evaluation to the next). What the pool holds is
/// owned (device_guard.hpp): it is given back when the pool is cleared or destroyed.
class BufferPool {
 public:
  explicit BufferPool(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}
  DeviceBuffer acquire(Backend& backend, std::size_t bytes) {
    auto found = free_.find(bytes);
    if (found != free_.end() && !found->second.empty()) {
      DeviceBuffer buffer = std::move(found->second.back());
      found->second.pop_back();
      pooled_ -= bytes;
      return buffer;
    }
    try {
      return allocate_buffer(backend, bytes);
    } catch (const DeviceFault&) {
      throw;
    } catch (const DeviceError&) {
      // Out of memory, perhaps because of what the pool holds: give it back and try once more.
      if (pooled_ == 0) throw;
      clear();
      return allocate_buffer(backend, bytes);
    }
  }
  /// Keeps `buffer` for the next acquire of `bytes`, or gives it back when the pool is full.
  void release(DeviceBuffer buffer, std::size_t bytes) {
    if (pooled_ + bytes > capacity_) return;  // `buffer` is freed as it goes out of scope
    free_[bytes].push_back(std::move(buffer));
    pooled_ += bytes;
  }
  void clear() {
    free_.clear();
    pooled_ = 0;
  }

 private:
  std::size_t capacity_;
  std::size_t pooled_ = 0;
  std::map<std::size_t, std::vector<DeviceBuffer>> free_;
};

/// The buffers of one plan run, taken from the pool and returned to it on scope exit.
class DeviceBuffers {
 public:
  DeviceBuffers(Backend& backend, BufferPool& pool, const std::vector<BufferSpec>& specs) : pool_(pool) {
    owned_.reserve(specs.size());
    handles_.reserve(specs.size());
    try {
      for (const auto& spec : specs) {
        owned_.push_back(pool_.acquire(backend, spec.bytes));
        handles_.push_back(owned_.back().get());
        bytes_.push_back(spec.bytes);
      }
    } catch (...) {
      release_all();
      throw;
    }
  }
  ~DeviceBuffers() { release_all(); }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  std::uint64_t operator[](std::size_t index) const { return handles_[index]; }
  const std::vector<std::uint64_t>& handles() const { return handles_; }

 private:
  void release_all() noexcept {
    try {
      for (std::size_t i = 0; i < owned_.size(); ++i) pool_.release(std::move(owned_[i]), bytes_[i]);
    } catch (...) {
      // Only the pool's own bookkeeping can throw here (out of host memory); what was not handed back
      // is freed below, as owned_ is cleared.
    }
    owned_.clear();
    handles_.clear();
  }

  BufferPool& pool_;
  std::vector<DeviceBuffer> owned_;
  std::vector<std::uint64_t> handles_;
  std::vector<std::size_t> bytes_;
};

/// Launches one bound launch; `buffers` holds a device buffer per entry of the plan's buffers, in order.
void launch_one(Backend& backend, const BoundLaunch& launch, const std::vector<std::uint64_t>& buffers);
/// Fills every buffer of the plan that is not an input (outputs and workspaces) with `byte`: a run then
/// finds nothing an earlier run left there, and elements it never writes stay visible.
void poison_outputs_and_workspaces(Backend& backend, const BoundPlan& plan, const DeviceBuffers& buffers,
                                   std::uint8_t byte);
/// After the reference ran on `buffers` (they held the expected outputs): fills the outputs and workspaces
/// with poison, then reads the outputs back once more (up to 64 MiB each) into a scratch host buffer, so
/// that a driver's staging buffers for device-to-host copies (pinned host memory the device can address)
/// hold poison rather than the last expected output read through them. Synchronizes.
void scrub_outputs_and_workspaces(Backend& backend, const BoundPlan& plan, const DeviceBuffers& buffers);
/// Puts the globals of the plan's modules back to their loaded values (Backend::reset_module_state):
/// what a run leaves there is not seen by the next.
void reset_plan_state(Backend& backend, const BoundPlan& plan);
/// Resets the plan's module state, then launches every kernel of the plan, in order, on `buffers` (as
/// launch_one).
void run_plan(Backend& backend, const BoundPlan& plan, const std::vector<std::uint64_t>& buffers);

/// Device memory the buffer pool may keep between evaluations: a quarter of the device's.
std::size_t buffer_pool_bytes(const DeviceInfo& device);

}  // namespace kernelsmith::detail
