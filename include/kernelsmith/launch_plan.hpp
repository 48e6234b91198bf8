// The launch plan a candidate declares in its own source, in comment lines (docs/candidate-format.md):
//
//   // @workspace partial: float32[ceil_div(N, 256)]
//   // @launch partial_sums<<<ceil_div(N, 256), 256, 256 * 4>>>(x, partial, N)
//   // @launch final_sum<<<1, 256>>>(partial, y, ceil_div(N, 256))
//   // @specialize            (sizes become compile-time constants KS_<name>)
//   // @tune BLOCK = 256 in {128, 256, 512}   (a macro; the parameter mutator varies it)
//
// Grid and block are one expression or dim3(x[, y[, z]]); the third launch argument is the dynamic
// shared memory in bytes. Expressions are integer arithmetic (+ - * / % and parentheses; / is floor
// division) with ceil_div, round_up, min, max over the task's sizes, the tunable parameters and the
// device attributes SM_COUNT, WARP_SIZE, MAX_THREADS_PER_BLOCK, SMEM_PER_BLOCK, SMEM_PER_BLOCK_OPTIN,
// L2_BYTES. Arguments are tensor names, workspace names or integer expressions.
//
// Triton candidates (a Python file) write the same directives as `#` comments, with a Triton-style launch:
//
//   # @tune BLOCK = 1024 in {256, 512, 1024, 2048}
//   # @launch add[ceil_div(N, BLOCK)](x, y, out, N, BLOCK=BLOCK) num_warps=4 num_stages=3
//
// The grid is one to three expressions in [...]; keyword arguments are the kernel's tl.constexpr
// parameters; num_warps (default 4) sets the block, 32 * num_warps threads; num_stages defaults to 3.
//
// Hopper (CUDA, sm_90 and newer) adds TMA tensor maps and thread-block clusters:
//
//   // @tensor_map a_tiles = A[K, M] box[64, 128] swizzle=128B
//   // @launch gemm<<<grid, 256, smem>>>(a_tiles, C, M, N, K) cluster=dim3(2, 1, 1)
//
// Other devices and backends refuse both before anything runs (invalid_launch, with the reason).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernelsmith/dtype.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/export.hpp"

namespace kernelsmith {

struct WorkspaceDecl {
  std::string name;
  DType dtype = DType::float32;
  std::string count;  ///< element count expression
  int line = 0;
};

struct LaunchDecl {
  std::string kernel;
  std::array<std::string, 3> grid{"1", "1", "1"};
  std::array<std::string, 3> block{"1", "1", "1"};
  std::string shared_bytes = "0";
  std::vector<std::string> args;
  int line = 0;
  /// Triton: the tl.constexpr parameters passed by keyword (`BLOCK=BLOCK`), name and expression, in order.
  std::vector<std::pair<std::string, std::string>> constexprs;
  /// Triton: warps per block (expression; the block is 32 * num_warps threads); "" in other languages.
  std::string num_warps;
  /// Triton: software pipelining stages (expression); "" in other languages.
  std::string num_stages;
  /// Thread-block cluster shape (`cluster=dim3(2, 1, 1)` after the arguments), three expressions; all ""
  /// when the launch declares none (CUDA on sm_90 and newer only).
  std::array<std::string, 3> cluster{};
};

/// `// @tensor_map NAME = buffer[d0, d1, ...] box[b0, b1, ...] options`: a TMA descriptor (CUtensorMap)
/// over a task tensor or workspace, passed to a launch by NAME (CUDA on sm_90 and newer only). Dimensions,
/// strides and box are expressions, innermost (fastest-varying) dimension first, as cuTensorMapEncodeTiled
/// and the cp.async.bulk.tensor coordinates order them; strides count elements.
struct TensorMapDecl {
  std::string name;
  std::string buffer;                        ///< the task tensor or workspace whose elements it maps
  std::vector<std::string> dims;             ///< extent of each dimension (rank = dims.size(), 1 to 5)
  std::vector<std::string> strides;          ///< elements between steps of dims 1.. (rank - 1); empty: packed
  std::vector<std::string> box;              ///< elements one copy moves in each dimension
  std::vector<std::string> element_strides;  ///< traversal step in each dimension; empty: all 1
  std::string swizzle = "none";              ///< none, 32B, 64B, 128B
  std::string interleave = "none";           ///< none, 16B, 32B
  std::string l2_promotion = "none";         ///< none, 64B, 128B, 256B
  std::string oob_fill = "zero";             ///< zero, nan (what out-of-bounds elements read as)
  /// `when(expression)`: the map exists only where this is non-zero (elsewhere the kernel gets 128 zero
  /// bytes and must not use them); "" always.
  std::string condition;
  int line = 0;
};

/// A tunable parameter: a compile-time macro the parameter mutator varies.
struct TunableParam {
  std::string name;
  std::int64_t value = 0;               ///< the value this candidate uses
  std::vector<std::int64_t> values;     ///< the allowed values
  int line = 0;
};

struct KERNELSMITH_API LaunchPlan {
  std::vector<WorkspaceDecl> workspaces;
  std::vector<LaunchDecl> launches;
  std::vector<TensorMapDecl> tensor_maps;
  std::vector<TunableParam> tunables;
  /// Constraints over tunables and sizes (`// @require BLOCK * 4 <= SMEM_PER_BLOCK`), each must be non-zero.
  std::vector<std::string> requirements;
  /// The 1-based source line of each requirement, in the same order (0 when not known).
  std::vector<int> requirement_lines;
  bool specialize = false;

  /// Reads the plan from a source written in `language` (a row of language.hpp: its comment marker and
  /// launch syntax). Throws PlanError (with the line) on a malformed directive, and when there is no
  /// @launch line; ValidationError for an unknown language.
  static LaunchPlan parse(const std::string& source, const std::string& language = "cuda");
};

/// Values of named integers for expression evaluation (sizes, tunables, device attributes).
using Bindings = std::map<std::string, std::int64_t>;

/// Evaluates an integer expression. Throws PlanError naming the unknown identifier, a division by zero
/// or a syntax error (with the column).
KERNELSMITH_API std::int64_t evaluate_expression(const std::string& expression, const Bindings& bindings);

}  // namespace kernelsmith
