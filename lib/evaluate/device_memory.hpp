// Device memory and modules as the harness holds them: a pool of allocations reused by size, the
// buffers of one plan run taken from it, a loaded module unloaded on scope exit, and the launch of a
// bound plan on those buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "evaluate/plan_binding.hpp"
#include "evaluate/timing.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"

namespace kernelsmith::detail {

/// Device allocations kept for reuse, by size. Evaluations of one task then run on the same memory:
/// no allocation cost per evaluation, and the candidate, its baseline and the next candidate are timed
/// on the same physical pages (fresh allocations land on different ones, which moves the medians of
/// memory-bound kernels by about a percent from one evaluation to the next).
class BufferPool {
 public:
  explicit BufferPool(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}
  std::uint64_t acquire(Backend& backend, std::size_t bytes) {
    auto found = free_.find(bytes);
    if (found != free_.end() && !found->second.empty()) {
      const std::uint64_t handle = found->second.back();
      found->second.pop_back();
      pooled_ -= bytes;
      return handle;
    }
    try {
      return backend.allocate(bytes);
    } catch (const DeviceFault&) {
      throw;
    } catch (const DeviceError&) {
      // Out of memory, perhaps because of what the pool holds: give it back and try once more.
      if (pooled_ == 0) throw;
      clear(backend);
      return backend.allocate(bytes);
    }
  }
  void release(Backend& backend, std::uint64_t handle, std::size_t bytes) {
    if (pooled_ + bytes <= capacity_) {
      free_[bytes].push_back(handle);
      pooled_ += bytes;
      return;
    }
    backend.free(handle);
  }
  void clear(Backend& backend) {
    for (auto& [bytes, handles] : free_) {
      for (auto handle : handles) {
        try {
          backend.free(handle);
        } catch (...) {
        }
      }
    }
    free_.clear();
    pooled_ = 0;
  }

 private:
  std::size_t capacity_;
  std::size_t pooled_ = 0;
  std::map<std::size_t, std::vector<std::uint64_t>> free_;
};

class DeviceBuffers {
 public:
  DeviceBuffers(Backend& backend, BufferPool& pool, const std::vector<BufferSpec>& specs)
      : backend_(backend), pool_(pool) {
    handles_.reserve(specs.size());
    try {
      for (const auto& spec : specs) {
        handles_.push_back(pool_.acquire(backend_, spec.bytes));
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
  void release_all() {
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      try {
        pool_.release(backend_, handles_[i], bytes_[i]);
      } catch (...) {
        // After a device fault freeing fails too; the worker is about to exit.
      }
    }
    handles_.clear();
  }

  Backend& backend_;
  BufferPool& pool_;
  std::vector<std::uint64_t> handles_;
  std::vector<std::size_t> bytes_;
};

// A loaded program, unloaded when it goes out of scope.
class LoadedModule {
 public:
  LoadedModule(Backend& backend, std::uint64_t handle) : backend_(&backend), handle_(handle) {}
  ~LoadedModule() {
    if (backend_ == nullptr) return;
    try {
      backend_->unload(handle_);
    } catch (...) {
    }
  }
  LoadedModule(LoadedModule&& other) noexcept : backend_(other.backend_), handle_(other.handle_) {
    other.backend_ = nullptr;
  }
  LoadedModule& operator=(LoadedModule&&) = delete;
  LoadedModule(const LoadedModule&) = delete;
  std::uint64_t handle() const { return handle_; }

 private:
  Backend* backend_;
  std::uint64_t handle_;
};

/// Launches one bound launch; `buffers` holds a device buffer per entry of the plan's buffers, in order.
void launch_one(Backend& backend, const BoundLaunch& launch, const std::vector<std::uint64_t>& buffers);
/// Launches every kernel of the plan, in order, on `buffers` (as launch_one).
void run_plan(Backend& backend, const BoundPlan& plan, const std::vector<std::uint64_t>& buffers);
/// The plan as a launch sequence for the timing protocol; refers to `plan` and `buffers`, which must outlive it.
LaunchSequence sequence_of(Backend& backend, const BoundPlan& plan, const DeviceBuffers& buffers);

/// Device memory the buffer pool may keep between evaluations: a quarter of the device's.
std::size_t buffer_pool_bytes(const DeviceInfo& device);

}  // namespace kernelsmith::detail
