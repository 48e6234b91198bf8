// The launch plan parser (docs/candidate-format.md); its expressions: test_expression.cpp.
#include <fstream>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::plan_error;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream stream(path);
  REQUIRE(stream.good());
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("plan: launches, workspaces, tunables, requirements, specialize", "[launch_plan]") {
  const std::string source =
      "#include <cuda_fp16.h>\n"
      "// @workspace partial: float32[ceil_div(N, 256)]\n"
      "// @tune BLOCK = 256 in {128, 256, 512}\n"
      "  //   @launch partial_sums<<<ceil_div(N, BLOCK), BLOCK, BLOCK * 4>>>(x, partial, N);\n"
      "// @launch final_sum<<<1, dim3(256)>>>(partial, y, ceil_div(N, BLOCK))\n"
      "// @launch transpose<<<dim3(ceil_div(N, 32), min(M, 65535)), dim3(32, 8, 1)>>>()\n"
      "// @specialize\n"
      "/// @require BLOCK * 4 <= SMEM_PER_BLOCK\n"
      "// @brief doxygen tags are ignored\n"
      "extern \"C\" __global__ void partial_sums() {}\n";
  const LaunchPlan plan = LaunchPlan::parse(source);
  REQUIRE(plan.workspaces.size() == 1);
  CHECK(plan.workspaces[0].name == "partial");
  CHECK(plan.workspaces[0].dtype == DType::float32);
  CHECK(plan.workspaces[0].count == "ceil_div(N, 256)");
  CHECK(plan.workspaces[0].line == 2);
  REQUIRE(plan.tunables.size() == 1);
  CHECK(plan.tunables[0].name == "BLOCK");
  CHECK(plan.tunables[0].value == 256);
  CHECK(plan.tunables[0].values == std::vector<std::int64_t>{128, 256, 512});
  CHECK(plan.tunables[0].line == 3);
  REQUIRE(plan.launches.size() == 3);
  const LaunchDecl& first = plan.launches[0];
  CHECK(first.kernel == "partial_sums");
  CHECK(first.grid == std::array<std::string, 3>{"ceil_div(N, BLOCK)", "1", "1"});
  CHECK(first.block == std::array<std::string, 3>{"BLOCK", "1", "1"});
  CHECK(first.shared_bytes == "BLOCK * 4");
  CHECK(first.args == std::vector<std::string>{"x", "partial", "N"});
  CHECK(first.line == 4);
  const LaunchDecl& second = plan.launches[1];
  CHECK(second.shared_bytes == "0");
  CHECK(second.block[0] == "256");
  CHECK(second.args == std::vector<std::string>{"partial", "y", "ceil_div(N, BLOCK)"});
  const LaunchDecl& third = plan.launches[2];
  CHECK(third.grid == std::array<std::string, 3>{"ceil_div(N, 32)", "min(M, 65535)", "1"});
  CHECK(third.block == std::array<std::string, 3>{"32", "8", "1"});
  CHECK(third.args.empty());
  CHECK(plan.specialize);
  CHECK(plan.requirements == std::vector<std::string>{"BLOCK * 4 <= SMEM_PER_BLOCK"});
  CHECK(plan.requirement_lines == std::vector<int>{8});
}

TEST_CASE("plan: mistakes carry their line and what was expected", "[launch_plan]") {
  auto line_of = [](const std::string& source) { return plan_error([&] { LaunchPlan::parse(source); }); };
  const std::string launch = "// @launch k<<<1, 1>>>(x)\n";

  auto [none, none_line] = line_of("__global__ void k() {}\n");
  CHECK(contains(none, "no launch"));
  CHECK(none_line == 0);

  auto [typo, typo_line] = line_of(launch + "// @lauch k<<<1, 1>>>(x)\n");
  CHECK(contains(typo, "did you mean @launch"));
  CHECK(typo_line == 2);

  CHECK(line_of("// @launch k<<<1>>>(x)\n").first.find("got 1 value(s)") != std::string::npos);
  CHECK(line_of("// @launch k<<<1, 2, 3, 4>>>(x)\n").second == 1);
  CHECK(contains(line_of("// @launch <<<1, 1>>>(x)\n").first, "kernel name is missing"));
  CHECK(contains(line_of("// @launch k(1, 1)(x)\n").first, "no \"<<<\""));
  CHECK(contains(line_of("// @launch k<<<1, 1(x)\n").first, "no closing \">>>\""));
  CHECK(contains(line_of("// @launch k<<<1, 1>>>\n").first, "argument list"));
  CHECK(contains(line_of("// @launch k<<<1, 1>>>(x, , y)\n").first, "argument 2 is empty"));
  CHECK(contains(line_of("// @launch k<<<1, 1>>>(x) trailing\n").first, "unexpected text"));
  CHECK(contains(line_of("// @launch k<<<1, 1 +>>>(x)\n").first, "block"));
  CHECK(contains(line_of("// @launch k<<<dim3(1, 2, 3, 4), 1>>>(x)\n").first, "one to three"));
  CHECK(contains(line_of("// @launch k<<<1, 1>>>(x[0])\n").first, "argument 1"));

  auto [dtype, dtype_line] = line_of(launch + "\n// @workspace w: flaot32[16]\n");
  CHECK(contains(dtype, "unknown dtype \"flaot32\""));
  CHECK(dtype_line == 3);
  CHECK(contains(line_of(launch + "// @workspace w float32[16]\n").first, "no \":\""));
  CHECK(contains(line_of(launch + "// @workspace w: float32\n").first, "[...]"));
  CHECK(contains(line_of(launch + "// @workspace w: float32[1]\n// @workspace w: int32[2]\n").first,
                 "already declared on line 2"));

  auto [tune, tune_line] = line_of(launch + "// @tune BLOCK = 100 in {128, 256}\n");
  CHECK(contains(tune, "not among its allowed values"));
  CHECK(tune_line == 2);
  CHECK(contains(line_of(launch + "// @tune BLOCK = 128 in {128, 128}\n").first, "listed twice"));
  CHECK(contains(line_of(launch + "// @tune BLOCK = x in {128}\n").first, "not an integer"));
  CHECK(contains(line_of(launch + "// @tune BLOCK = 128\n").first, "allowed values"));
  CHECK(contains(line_of(launch + "// @tune SM_COUNT = 1 in {1}\n").first, "device attribute"));
  CHECK(contains(line_of(launch + "// @tune B = 1 in {1}\n// @tune B = 1 in {1}\n").first, "already declared"));
  CHECK(contains(line_of(launch + "// @specialize now\n").first, "takes no arguments"));
  CHECK(contains(line_of(launch + "// @require\n").first, "expected an expression"));
  CHECK(contains(line_of(launch + "// @require BLOCK <=\n").first, "syntax error"));
}

TEST_CASE("plan: negative tunable values and directives only in line comments", "[launch_plan]") {
  const LaunchPlan plan = LaunchPlan::parse(
      "/* @launch ignored<<<1, 1>>>() */\n"
      "int x; // @launch also_ignored<<<1, 1>>>()\n"
      "// @tune SHIFT = -1 in {-1, 0, 1}\n"
      "// @launch k<<<1, 1>>>()\n");
  REQUIRE(plan.launches.size() == 1);
  CHECK(plan.launches[0].kernel == "k");
  CHECK(plan.tunables[0].value == -1);
}

TEST_CASE("the plan examples of docs/candidate-format.md parse and evaluate", "[launch_plan][docs]") {
  const std::string root = KERNELSMITH_SOURCE_DIR;
  const LaunchPlan sum = LaunchPlan::parse(read_file(root + "/docs/examples/two_pass_sum.cu"));
  REQUIRE(sum.launches.size() == 2);
  REQUIRE(sum.workspaces.size() == 1);
  Bindings bindings = {{"N", 1000000}, {"SM_COUNT", 132}, {"WARP_SIZE", 32}, {"MAX_THREADS_PER_BLOCK", 1024},
                       {"SMEM_PER_BLOCK", 49152}, {"SMEM_PER_BLOCK_OPTIN", 232448}, {"L2_BYTES", 52428800}};
  for (const auto& tunable : sum.tunables) bindings[tunable.name] = tunable.value;
  CHECK(evaluate_expression(sum.workspaces[0].count, bindings) > 0);
  for (const auto& requirement : sum.requirements) CHECK(evaluate_expression(requirement, bindings) != 0);
  CHECK(evaluate_expression(sum.launches[0].grid[0], bindings) > 0);

  const LaunchPlan tiled = LaunchPlan::parse(read_file(root + "/docs/examples/tiled_matmul.cl"));
  CHECK(tiled.specialize);
  CHECK(tiled.launches.size() == 1);
  CHECK(tiled.launches[0].block[1] == "TILE");
}

TEST_CASE("plan: template arguments are part of the kernel name", "[launch_plan]") {
  const LaunchPlan plan = LaunchPlan::parse(
      "// @launch scale_add<2><<<ceil_div(N, 256), 256>>>(x, y, N)\n"
      "// @launch gemm< 128, (4 > 2) > <<<dim3(8, 8), 256, 1024>>>(a, b, c)\n"
      "// @launch reduce<Pair<float, int>><<<1, 32>>>(x)\n"
      "// @launch plain <<<1, 1>>>()\n");
  REQUIRE(plan.launches.size() == 4);
  CHECK(plan.launches[0].kernel == "scale_add<2>");
  CHECK(plan.launches[0].grid[0] == "ceil_div(N, 256)");
  CHECK(plan.launches[0].block[0] == "256");
  REQUIRE(plan.launches[0].args.size() == 3);
  CHECK(plan.launches[0].args[2] == "N");
  // Inner spaces are kept as written (NVRTC parses the name as C++); a '>' inside parentheses does not
  // close the list.
  CHECK(plan.launches[1].kernel == "gemm<128, (4 > 2)>");
  CHECK(plan.launches[1].shared_bytes == "1024");
  CHECK(plan.launches[2].kernel == "reduce<Pair<float, int>>");
  CHECK(plan.launches[3].kernel == "plain");

  auto message = [](const std::string& source) { return plan_error([&] { LaunchPlan::parse(source); }); };
  const auto [unclosed, unclosed_line] = message("// @launch k<2<<<1, 1>>>(x)\n");
  CHECK(contains(unclosed, "template arguments after the kernel name k are not closed"));
  CHECK(unclosed_line == 1);
  CHECK(contains(message("// @launch k<><<<1, 1>>>(x)\n").first, "template argument list of k is empty"));
  CHECK(contains(message("// @launch k<2>(1, 1)(x)\n").first, "no \"<<<\" after the kernel name k<2>"));
  // The message names its line once.
  const auto [bad, bad_line] = message("// @launch k<2><<<1>>>(x)\n");
  CHECK(bad.rfind("line 1: @launch: ", 0) == 0);
  CHECK(bad.find("line 1:", 1) == std::string::npos);
  CHECK(bad_line == 1);
}
