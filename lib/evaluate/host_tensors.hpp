// Host-side tensor data for the correctness protocol: element conversions (float16, bfloat16), input
// generation per input kind, poison patterns, and the comparison of an output against the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/thread_pool.hpp"
#include "evaluate/host_blocks.hpp"
#include "evaluate/sealed_bytes.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// An allocator whose construction without a value leaves the element uninitialised. Host buffers of
/// tensors reach gigabytes (KernelBench's level 1), and each is filled right after it is made: drawn,
/// read from a file or the device, by the pool's threads. Zeroing it first would write it twice, and
/// fault in every page from one thread. Large blocks are kept for reuse when freed (host_blocks.hpp).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "host blocks have operator new's alignment");
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() noexcept = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  template <typename U>
  void construct(U* place) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(place)) U;
  }
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }
  T* allocate(std::size_t count) {
    if (count > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_host_block(count * sizeof(T)));
  }
  void deallocate(T* block, std::size_t count) noexcept { free_host_block(block, count * sizeof(T)); }
};

template <typename T, typename U>
bool operator==(const UninitializedAllocator<T>&, const UninitializedAllocator<U>&) noexcept {
  return true;
}
template <typename T, typename U>
bool operator!=(const UninitializedAllocator<T>&, const UninitializedAllocator<U>&) noexcept {
  return false;
}

/// A tensor's bytes on the host. `Bytes(n)` is uninitialised: whoever makes one writes every byte.
using Bytes = std::vector<std::uint8_t, UninitializedAllocator<std::uint8_t>>;

/// IEEE binary16 and bfloat16 from and to float, rounding to nearest even.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t bits);

/// Element `index` of a buffer of `dtype` as a double, and the reverse (rounded, saturated for integers).
double load_element(DType dtype, const std::uint8_t* data, std::int64_t index);
void store_element(DType dtype, std::uint8_t* data, std::int64_t index, double value);

/// What the inputs of one correctness check look like.
///   random       the task's distribution
///   large        values ~1e4 times the distribution (1e2 for float16); integers near the larger bound
///   tiny         values ~1e-4 times the distribution (1e-3 for float16); integers near zero
///   mixed_scale  each element scaled by 10^k, k in [-3, 3] ([-2, 2] for float16); integers mix both
///   constant     one value for every element
/// Integers (integer dtypes and the "integers" distribution) always stay within [a, b].
enum class InputKind { random, large, tiny, mixed_scale, constant };
std::string to_string(InputKind kind);
const std::vector<InputKind>& adversarial_input_kinds();

/// Draws the elements of `spec` with the extents `shape` for `kind` from `seed` (deterministic on every
/// platform). A "constant" distribution gives its value under every kind. The distribution's structure
/// is applied last, so every kind keeps it (Task::validate has checked that the shape fits it).
Bytes generate_input(const TensorSpec& spec, const std::vector<std::int64_t>& shape, InputKind kind,
                     std::uint64_t seed);

/// `data` (elements of `dtype`) with every finite nonzero float moved by about 2^-17 of its magnitude (64
/// units in the last place of a float32; one unit of a float16 or bfloat16), up or down as a stream from
/// `seed` decides, never across zero or onto an infinity; zeros and non-floats are kept. Right kernels'
/// own rounding moves intermediate values about that much (EvaluationRun::ill_conditioned).
Bytes nudge_inputs(DType dtype, const Bytes& data, std::uint64_t seed);

/// Byte patterns that outputs and workspaces are filled with before the candidate's two runs: every
/// byte differs between them, and both read as NaN or an absurd value for every float type. The harness
/// draws the patterns of each run at random from kPoisonBytes (docs/evaluation.md, "Poison"); these two are
/// the defaults of compare_output and what the plan runner fills with.
inline constexpr std::uint8_t kPoisonFirst = 0xFF;
inline constexpr std::uint8_t kPoisonSecond = 0x7F;

/// Bytes that, repeated, read as NaN (float16) or as a magnitude above 1e36 (float32, bfloat16, float64)
/// or NaN: any of them marks an element no run wrote. The harness picks among them at random for every run,
/// so a kernel cannot tell from the pattern in its outputs which run it is in.
inline constexpr std::uint8_t kPoisonBytes[] = {0x7C, 0x7D, 0x7E, 0x7F, 0xFC, 0xFD, 0xFE, 0xFF};

/// The patterns of the two runs of one correctness check (they differ).
struct PoisonPair {
  std::uint8_t first = kPoisonFirst;
  std::uint8_t second = kPoisonSecond;
};

/// Bytes to compare: a host buffer, or an open view of sealed memory (the expected outputs).
struct ByteView {
  ByteView(const Bytes& bytes) : data(bytes.data()), size(bytes.size()) {}  // NOLINT(google-explicit-constructor)
  ByteView(const Unsealed& open) : data(open.data()), size(open.size()) {}  // NOLINT(google-explicit-constructor)
  ByteView(const std::uint8_t* bytes, std::size_t count) : data(bytes), size(count) {}
  const std::uint8_t* data;
  std::size_t size;
};

/// Below this relative spread (SpreadAccumulator) integer values are near-constant, and a candidate's output
/// is compared for it below this at most (see near_constant_spread and compare_output).
inline constexpr double kNearConstantSpread = 1e-3;

/// The relative spread below which values of `dtype` compared under `tolerance` are near-constant: a
/// reference output that varies less makes a task unable to tell wrong kernels from right ones, and a
/// candidate output that varies less where the reference's does is wrong. For floats it is atol + rtol:
/// an output fixed at the mean of a reference spread that much has a relative L2 error of atol + rtol,
/// twice the bound compare_output allows, so no constant passes a task whose reference varies at least
/// that much. Integer outputs are compared exactly, so their threshold is kNearConstantSpread.
double near_constant_spread(DType dtype, const Tolerance& tolerance);

/// A candidate output is near-constant where the reference's is not when its spread is below
/// min(kNearConstantSpread, near_constant_spread) and below this fraction of the reference's (see
/// compare_output).
inline constexpr double kNearConstantFraction = 0.1;

/// The relative L2 error an output may have, as a fraction of atol + rtol (see compare_output).
inline constexpr double kRelativeL2Fraction = 0.5;

/// Compares a candidate's output (both poisoned runs) with the reference's.
///
/// An element holding the first pattern after the first run and the second after the second was never
/// written; one that differs otherwise is nondeterministic. Written elements are checked against
///   |actual - expected| <= atol * scale + rtol * |expected|
/// where `scale` is the root mean square of the reference output (1 when that is 0): the absolute
/// tolerance follows the data's magnitude, so tiny inputs cannot pass vacuously and large ones do not
/// fail on rounding. NaN or infinity where the reference is finite is counted as non-finite.
///
/// Float outputs must also pass two checks of the whole output (integer outputs are exact already):
/// - not near-constant where the reference varies: the candidate's relative spread below
///   min(t, kNearConstantFraction * the reference's) while the reference's is at least t, where t is
///   min(kNearConstantSpread, near_constant_spread). A right output within the tolerance keeps about the reference's spread, so
///   the check passes it; it fails an all-zero or constant output that a loose tolerance lets through.
/// - relative L2 error at most kRelativeL2Fraction * (atol + rtol), where the reference is not all zero.
///   Elements within the bound above give a relative L2 error of at most atol + rtol (the absolute part
///   is in units of the reference's root mean square), so this halves what a uniformly biased output can
///   get away with; rounding errors of right kernels are far below it.
struct OutputComparison {
  OutputCheck check;
  std::int64_t nondeterministic = 0;  ///< written elements whose two runs differ bitwise
  double expected_spread = 0.0;       ///< relative spread of the reference's finite elements
  double actual_spread = 0.0;         ///< relative spread of the candidate's, where both are finite
  bool near_constant = false;         ///< failed the near-constant check
  double rel_l2_bound = 0.0;          ///< kRelativeL2Fraction * (atol + rtol); 0 for integer outputs
  bool rel_l2_exceeded = false;       ///< failed the relative L2 check
};
/// The chunks of large outputs run on `pool` and the calling thread; the result does not depend on the
/// number of threads.
/// `poison` holds the patterns the two runs started from.
OutputComparison compare_output(const std::string& tensor, DType dtype, std::int64_t count, ByteView expected,
                                ByteView first_run, ByteView second_run, const Tolerance& tolerance,
                                ThreadPool& pool = ThreadPool::shared(), PoisonPair poison = {});

/// What is wrong with an output that failed compare_output, in one sentence for the evaluation's
/// message (the first of: unwritten, non-finite, near-constant, beyond the tolerance, relative L2).
std::string describe_failure(const OutputComparison& comparison, std::int64_t count);

/// Relative spread of values: standard deviation over the mean magnitude (0 for a constant, also 0 when
/// every value is 0; non-finite values are ignored), over buffers added one at a time, so that they need not
/// all be held at once (a spread check's cases of KernelBench's largest problems take gigabytes each). Each buffer is summed over the
/// pool's threads in fixed chunks, then merged into the totals (the pairwise update of mean and squared
/// deviations): the result does not depend on the thread count.
class SpreadAccumulator {
 public:
  void add(DType dtype, const std::uint8_t* data, std::int64_t count, ThreadPool& pool = ThreadPool::shared());
  double spread() const;

 private:
  std::int64_t n_ = 0;
  double mean_ = 0.0;
  double sum_abs_ = 0.0;
  double squares_ = 0.0;  // of the deviations from mean_
};

}  // namespace kernelsmith::detail
