// The launch plan of Triton candidates: `# @` comment lines and the launch `kernel[grid](args, NAME=value)
// num_warps=W num_stages=S` (docs/candidate-format.md, docs/triton.md), read by the same parser as the
// C family's `// @launch kernel<<<...>>>(...)`.
#include <fstream>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::plan_error;

namespace {

LaunchPlan parse_triton(const std::string& source) { return LaunchPlan::parse(source, "triton"); }

std::pair<std::string, int> triton_error(const std::string& source) {
  return plan_error([&] { parse_triton(source); });
}

}  // namespace

TEST_CASE("triton plan: launches with a multi-axis grid, positional and keyword arguments, options",
          "[launch_plan][triton]") {
  const std::string source =
      "import triton\n"
      "# @workspace partial: float32[ceil_div(N, BLOCK)]\n"
      "# @tune BLOCK = 1024 in {512, 1024}\n"
      "  ## @launch partial_sums[ceil_div(N, BLOCK)](x, partial, N, BLOCK=BLOCK) num_warps=8 num_stages=2\n"
      "# @launch gemm[ceil_div(M, 64), ceil_div(N, 64), 1](a, b, c, M, N, K, BM=64, BN=min(N, 64))\n"
      "# @launch final_sum[1]()  num_stages = 4   num_warps = max(BLOCK / 256, 1)\n"
      "# @require BLOCK <= 4096\n"
      "@triton.jit\n"
      "def partial_sums(x, partial, n, BLOCK: tl.constexpr):  # @launch is not read after code\n"
      "    pass\n"
      "// @launch cuda_style<<<1, 1>>>()\n";
  const LaunchPlan plan = parse_triton(source);
  REQUIRE(plan.workspaces.size() == 1);
  CHECK(plan.workspaces[0].line == 2);
  REQUIRE(plan.tunables.size() == 1);
  CHECK(plan.tunables[0].value == 1024);
  REQUIRE(plan.requirements.size() == 1);
  CHECK(plan.requirement_lines[0] == 7);
  REQUIRE(plan.launches.size() == 3);

  const LaunchDecl& first = plan.launches[0];
  CHECK(first.kernel == "partial_sums");
  CHECK(first.line == 4);
  CHECK(first.grid == std::array<std::string, 3>{"ceil_div(N, BLOCK)", "1", "1"});
  CHECK(first.args == std::vector<std::string>{"x", "partial", "N"});
  CHECK(first.constexprs == std::vector<std::pair<std::string, std::string>>{{"BLOCK", "BLOCK"}});
  CHECK(first.num_warps == "8");
  CHECK(first.num_stages == "2");
  CHECK(first.block == std::array<std::string, 3>{"32 * (8)", "1", "1"});
  CHECK(first.shared_bytes == "0");  // Triton's shared memory comes from the compiled kernel's metadata

  const LaunchDecl& second = plan.launches[1];
  CHECK(second.grid == std::array<std::string, 3>{"ceil_div(M, 64)", "ceil_div(N, 64)", "1"});
  CHECK(second.args.size() == 6);
  CHECK(second.constexprs == std::vector<std::pair<std::string, std::string>>{{"BM", "64"}, {"BN", "min(N, 64)"}});
  CHECK(second.num_warps == "4");  // Triton's defaults
  CHECK(second.num_stages == "3");
  CHECK(second.block[0] == "32 * (4)");

  const LaunchDecl& third = plan.launches[2];
  CHECK(third.args.empty());
  CHECK(third.num_stages == "4");
  CHECK(third.num_warps == "max(BLOCK / 256, 1)");
  const Bindings bindings = {{"BLOCK", 1024}};
  CHECK(evaluate_expression(third.block[0], bindings) == 128);
}

TEST_CASE("triton plan: mistakes carry their line and what to write instead", "[launch_plan][triton]") {
  auto [message, line] = triton_error("import triton\n# @launch add<<<1, 128>>>(x)\n");
  CHECK(line == 2);
  CHECK(contains(message, "line 2: @launch: expected `kernel[grid_x, grid_y?, grid_z?](arg, ..., NAME=value"));
  CHECK(contains(message, "not <<<...>>>"));

  std::tie(message, line) = triton_error("\n\n# @launch add(x, y)\n");
  CHECK(line == 3);
  CHECK(contains(message, "no \"[grid]\" after the kernel name add"));

  std::tie(message, line) = triton_error("# @launch add[1, 2, 3, 4](x)\n");
  CHECK(contains(message, "the grid takes one to three non-empty expressions, got \"[1, 2, 3, 4]\""));
  std::tie(message, line) = triton_error("# @launch add[](x)\n");
  CHECK(contains(message, "one to three non-empty expressions"));
  std::tie(message, line) = triton_error("# @launch add[ceil_div(N, ](x)\n");
  CHECK(contains(message, "not closed"));
  std::tie(message, line) = triton_error("# @launch add[N +](x)\n");
  CHECK(contains(message, "grid x"));
  std::tie(message, line) = triton_error("# @launch add[N]\n");
  CHECK(contains(message, "the argument list \"(...)\" after the grid is missing"));

  std::tie(message, line) = triton_error("# @launch add[N](x, BLOCK=128, N)\n");
  CHECK(contains(message, "argument 3 (\"N\") comes after the keyword argument BLOCK"));
  std::tie(message, line) = triton_error("# @launch add[N](x, BLOCK=128, BLOCK=256)\n");
  CHECK(contains(message, "the keyword argument BLOCK is given twice"));
  std::tie(message, line) = triton_error("# @launch add[N](x, BLOCK=)\n");
  CHECK(contains(message, "the keyword argument BLOCK has no value"));
  std::tie(message, line) = triton_error("# @launch add[N](x, BLOCK=2 **)\n");
  CHECK(contains(message, "keyword argument BLOCK"));

  std::tie(message, line) = triton_error("# @launch add[N](x) num_warp=4\n");
  CHECK(contains(message, "unknown launch option num_warp; the options are num_warps (default 4) and num_stages"));
  std::tie(message, line) = triton_error("# @launch add[N](x) num_warps=4 num_warps=8\n");
  CHECK(contains(message, "the option num_warps is given twice"));
  std::tie(message, line) = triton_error("# @launch add[N](x) num_warps=\n");
  CHECK(contains(message, "the option num_warps has no value"));
  std::tie(message, line) = triton_error("# @launch add[N](x) 4 warps\n");
  CHECK(contains(message, "unexpected text \"4 warps\" after the argument list"));

  std::tie(message, line) = triton_error("# @launch add[N](x)\n# @specialize\n");
  CHECK(line == 2);
  CHECK(contains(message, "pass a size to a tl.constexpr parameter by keyword"));

  std::tie(message, line) = triton_error("# @lauch add[N](x)\n");
  CHECK(contains(message, "did you mean @launch?"));

  std::tie(message, line) = triton_error("import triton\n// @launch add<<<1, 1>>>(x)\n");
  CHECK(line == 0);
  CHECK(contains(message, "# @launch my_kernel[ceil_div(N, BLOCK)](x, y, N, BLOCK=BLOCK) num_warps=4"));
}

TEST_CASE("the C family keeps its syntax and does not read # lines", "[launch_plan][triton]") {
  const auto [message, line] =
      plan_error([] { LaunchPlan::parse("# @launch add[N](x)\n", "cuda"); });
  CHECK(line == 0);
  CHECK(contains(message, "// @launch my_kernel<<<ceil_div(N, 256), 256>>>(x, y, N)"));
  const LaunchPlan plan = LaunchPlan::parse("// @launch k<<<1, 32>>>()\n", "opencl");
  CHECK(plan.launches[0].num_warps.empty());
  CHECK(plan.launches[0].constexprs.empty());
  CHECK_THROWS_AS(LaunchPlan::parse("// @launch k<<<1, 32>>>()\n", "fortran"), ValidationError);
}

TEST_CASE("the Triton example of docs/candidate-format.md parses and evaluates", "[launch_plan][triton][docs]") {
  const std::string path = std::string(KERNELSMITH_SOURCE_DIR) + "/docs/examples/vector_add.py";
  const Candidate candidate = Candidate::from_file(path);
  CHECK(candidate.language == "triton");
  const LaunchPlan plan = LaunchPlan::parse(candidate.source, candidate.language);
  REQUIRE(plan.launches.size() == 1);
  REQUIRE(plan.tunables.size() == 2);
  Bindings bindings = {{"N", 1000}};
  for (const auto& tunable : plan.tunables) bindings[tunable.name] = tunable.value;
  CHECK(evaluate_expression(plan.launches[0].grid[0], bindings) == 1);
  CHECK(evaluate_expression(plan.launches[0].block[0], bindings) == 128);
  CHECK(evaluate_expression(plan.requirements[0], bindings) == 1);
  CHECK(plan.launches[0].num_stages == "3");
}
