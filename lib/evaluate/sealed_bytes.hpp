// Memory a candidate's code must not read: the expected outputs the comparison needs (docs/evaluation.md,
// "Where the expected outputs live"). On a CPU device (OpenCL on PoCL) a kernel runs in the evaluating
// process, where a pointer walked past its own buffers reaches the rest of the heap; a copy of the expected
// output there is an answer to copy. A SealedBytes lives in its own pages, mapped without any access
// (PROT_NONE) except while an Unsealed view of it is alive: the harness opens one only to fill or compare,
// never while a candidate's kernel may run, so a kernel that reads the pages faults instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kernelsmith::detail {

class SealedBytes {
 public:
  SealedBytes() = default;
  /// `size` zero bytes, sealed. Throws std::bad_alloc where the pages cannot be mapped.
  explicit SealedBytes(std::size_t size);
  /// A sealed copy of `size` bytes at `data`.
  static SealedBytes copy_of(const std::uint8_t* data, std::size_t size);
  ~SealedBytes();
  SealedBytes(SealedBytes&& other) noexcept;
  SealedBytes& operator=(SealedBytes&& other) noexcept;
  SealedBytes(const SealedBytes&) = delete;
  SealedBytes& operator=(const SealedBytes&) = delete;

  std::size_t size() const { return size_; }

 private:
  friend class Unsealed;
  void release() noexcept;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;
  mutable int opened_ = 0;  // Unsealed views alive (under a process-wide lock)
  mutable bool writable_ = false;
};

/// Access to a SealedBytes while alive: read-only, or read-write with `writable` (to fill it). Views of one
/// buffer nest; the pages are sealed again when the last one ends.
class Unsealed {
 public:
  explicit Unsealed(const SealedBytes& bytes, bool writable = false);
  ~Unsealed();
  Unsealed(const Unsealed&) = delete;
  Unsealed& operator=(const Unsealed&) = delete;
  const std::uint8_t* data() const { return bytes_.data_; }
  std::uint8_t* writable_data() const;
  std::size_t size() const { return bytes_.size_; }

 private:
  const SealedBytes& bytes_;
  bool writable_;
};

/// Overwrites `size` bytes at `data` in a way the compiler keeps: a copy of an expected output that is
/// about to be freed does not stay behind in the heap.
void wipe_bytes(void* data, std::size_t size) noexcept;

}  // namespace kernelsmith::detail
