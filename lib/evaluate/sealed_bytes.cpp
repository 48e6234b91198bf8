#include "evaluate/sealed_bytes.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <new>
#include <utility>

namespace kernelsmith::detail {
namespace {

std::mutex& seal_lock() {
  static std::mutex lock;
  return lock;
}

std::size_t page_size() {
  static const std::size_t size = [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<std::size_t>(page) : std::size_t(4096);
  }();
  return size;
}

void protect(std::uint8_t* data, std::size_t mapped, int access) {
  if (data == nullptr) return;
  // mprotect of a mapping this object made, with its whole length, fails only where the kernel runs out of
  // memory for the split mapping: then the data cannot be handed out (or hidden) safely.
  if (::mprotect(data, mapped, access) != 0) throw std::bad_alloc();
}

}  // namespace

SealedBytes::SealedBytes(std::size_t size) : size_(size) {
  if (size == 0) return;
  const std::size_t page = page_size();
  mapped_ = (size + page - 1) / page * page;
  void* mapping = ::mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::uint8_t*>(mapping);
}

SealedBytes SealedBytes::copy_of(const std::uint8_t* data, std::size_t size) {
  SealedBytes sealed(size);
  if (size > 0) {
    const Unsealed open(sealed, true);
    std::memcpy(open.writable_data(), data, size);
  }
  return sealed;
}

SealedBytes::~SealedBytes() { release(); }

SealedBytes::SealedBytes(SealedBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

SealedBytes& SealedBytes::operator=(SealedBytes&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

void SealedBytes::release() noexcept {
  // The pages go back to the kernel, which zeroes them before any other mapping gets them.
  if (data_ != nullptr) ::munmap(data_, mapped_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = 0;
}

Unsealed::Unsealed(const SealedBytes& bytes, bool writable) : bytes_(bytes), writable_(writable) {
  const std::lock_guard<std::mutex> hold(seal_lock());
  if (bytes_.opened_ == 0 || (writable && !bytes_.writable_)) {
    protect(bytes_.data_, bytes_.mapped_, writable || bytes_.writable_ ? PROT_READ | PROT_WRITE : PROT_READ);
    bytes_.writable_ = bytes_.writable_ || writable;
  }
  ++bytes_.opened_;
}

Unsealed::~Unsealed() {
  const std::lock_guard<std::mutex> hold(seal_lock());
  if (--bytes_.opened_ == 0) {
    bytes_.writable_ = false;
    try {
      protect(bytes_.data_, bytes_.mapped_, PROT_NONE);
    } catch (...) {
      // Left readable: nothing a destructor can do but end the process, which would lose the evaluation.
    }
  }
}

std::uint8_t* Unsealed::writable_data() const { return writable_ ? bytes_.data_ : nullptr; }

void wipe_bytes(void* data, std::size_t size) noexcept {
  if (data != nullptr && size > 0) ::explicit_bzero(data, size);
}

}  // namespace kernelsmith::detail
