// Scoped owners of what a Backend hands out: device buffers and loaded modules. Each owns one handle and
// gives it back to its backend when it goes out of scope, also while an exception flies.
//
// Giving back never throws and logs nothing. After a device fault (a lost CUDA context) freeing fails
// too; the fault is already on its way to the caller and is what gets reported, so the second error is
// dropped. A destructor that threw during that unwinding would end the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernelsmith/backend.hpp"

namespace kernelsmith::detail {

/// How a buffer is given back: Backend::free (which only forgets an adopted external buffer).
struct FreeBuffer {
  void operator()(Backend& backend, std::uint64_t handle) const { backend.free(handle); }
};

/// How a module is given back: Backend::unload (its kernels die with it).
struct UnloadModule {
  void operator()(Backend& backend, std::uint64_t handle) const { backend.unload(handle); }
};

/// The unique owner of one handle of a Backend, which must outlive it. Move-only; empty when
/// default-constructed, moved from or released.
template <class GiveBack>
class OwnedHandle {
 public:
  OwnedHandle() noexcept = default;
  /// Takes ownership of `handle`, which `backend` handed out.
  OwnedHandle(Backend& backend, std::uint64_t handle) noexcept : backend_(&backend), handle_(handle) {}
  ~OwnedHandle() { reset(); }

  OwnedHandle(OwnedHandle&& other) noexcept
      : backend_(std::exchange(other.backend_, nullptr)), handle_(std::exchange(other.handle_, 0)) {}
  OwnedHandle& operator=(OwnedHandle&& other) noexcept {
    if (this != &other) {
      reset();
      backend_ = std::exchange(other.backend_, nullptr);
      handle_ = std::exchange(other.handle_, 0);
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;

  /// The handle, for Backend calls (launch arguments, write, read, kernel lookup).
  std::uint64_t get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return backend_ != nullptr; }

  /// Gives up ownership without giving the handle back; the caller owns it from now on.
  std::uint64_t release() noexcept {
    backend_ = nullptr;
    return std::exchange(handle_, 0);
  }

  /// Gives the handle back now (nothing when empty). Never throws: see the top of this file.
  void reset() noexcept {
    Backend* backend = std::exchange(backend_, nullptr);
    const std::uint64_t handle = std::exchange(handle_, 0);
    if (backend == nullptr) return;
    try {
      GiveBack{}(*backend, handle);
    } catch (...) {
      // Dropped on purpose: the error that made freeing fail is the one the caller hears of.
    }
  }

 private:
  Backend* backend_ = nullptr;
  std::uint64_t handle_ = 0;
};

using DeviceBuffer = OwnedHandle<FreeBuffer>;
using DeviceModule = OwnedHandle<UnloadModule>;

/// Backend::allocate, owned. Throws as the backend does (DeviceError when out of memory).
inline DeviceBuffer allocate_buffer(Backend& backend, std::size_t bytes) {
  return DeviceBuffer(backend, backend.allocate(bytes));
}

/// Backend::adopt_external, owned: going out of scope forgets the caller's memory without freeing it.
inline DeviceBuffer adopt_buffer(Backend& backend, std::uint64_t device_address, std::size_t bytes) {
  return DeviceBuffer(backend, backend.adopt_external(device_address, bytes));
}

/// Backend::load, owned. Throws as the backend does.
inline DeviceModule load_module(Backend& backend, const CompiledProgram& program) {
  return DeviceModule(backend, backend.load(program));
}

}  // namespace kernelsmith::detail
