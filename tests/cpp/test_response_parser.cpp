#include <string>

#include "catch.hpp"
#include "kernelsmith/response_parser.hpp"

using namespace kernelsmith;

namespace {

const std::string kParent =
    "// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)\n"
    "extern \"C\" __global__ void relu(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) {\n"
    "    y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
    "  }\n"
    "}\n";

const std::string kImproved =
    "// @launch relu4<<<ceil_div(N, 1024), 256>>>(x, y, N)\n"
    "extern \"C\" __global__ void relu4(const float* x, float* y, int n) {\n"
    "  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 4;\n"
    "  for (int k = 0; k < 4; ++k) {\n"
    "    int i = base + k;\n"
    "    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n"
    "  }\n"
    "}\n";

}  // namespace

TEST_CASE("full answers: the fenced program is taken, with the text before it as the explanation",
          "[response_parser]") {
  for (std::string tag : {"cuda", "c", "opencl", "cpp", ""}) {
    INFO("fence tag '" << tag << "'");
    std::string answer = "Process four elements per thread to cut the grid size.\n\n```" + tag + "\n" + kImproved +
                         "```\nThis should be faster.\n";
    ParsedResponse parsed = parse_response(answer, EditMode::full, kParent);
    REQUIRE(parsed.ok);
    CHECK(parsed.kind == "full");
    CHECK(parsed.source == kImproved);
    CHECK(parsed.explanation == "Process four elements per thread to cut the grid size.");
  }
}

TEST_CASE("full answers: among several blocks the one with a kernel and @launch lines wins", "[response_parser]") {
  std::string big_python = "```python\n" + std::string(2000, '#') + "\nimport torch\n```\n";
  std::string fragment = "```cuda\n__global__ void helper() {}\n```\n";
  std::string answer = "Idea: vectorise.\n" + big_python + fragment + "Full file:\n```cuda\n" + kImproved + "```\n";
  ParsedResponse parsed = parse_full_response(answer, kParent);
  REQUIRE(parsed.ok);
  CHECK(parsed.source == kImproved);
  REQUIRE(!parsed.notes.empty());
  CHECK(parsed.notes.front() == "picked code block 3 of 3 (it has a kernel and @launch lines)");
}

TEST_CASE("full answers: without @launch lines the largest kernel block wins", "[response_parser]") {
  std::string small = "```cuda\n__global__ void a() {}\n```\n";
  std::string large = "```cuda\n__global__ void b(float* y) { y[0] = 1.0f; y[1] = 2.0f; }\n```\n";
  ParsedResponse parsed = parse_full_response(small + large + small);
  REQUIRE(parsed.ok);
  CHECK(parsed.source.find("void b(") != std::string::npos);
}

TEST_CASE("full answers: truncated and code-less answers are failures with reasons", "[response_parser]") {
  SECTION("an unclosed fence with unbalanced braces is truncated") {
    std::string cut = kImproved.substr(0, kImproved.find("if (i < n)"));
    ParsedResponse parsed = parse_response("Here it is:\n```cuda\n" + cut, EditMode::full, kParent);
    CHECK_FALSE(parsed.ok);
    CHECK(parsed.failure.rfind("response truncated: the code block opened at line 2", 0) == 0);
  }
  SECTION("an unclosed fence around complete code is accepted") {
    ParsedResponse parsed = parse_response("```cuda\n" + kImproved, EditMode::full, kParent);
    REQUIRE(parsed.ok);
    CHECK(parsed.source == kImproved);
    REQUIRE(parsed.notes.size() == 1);
    CHECK(parsed.notes[0] == "the closing fence is missing but the code is complete");
  }
  SECTION("prose only") {
    ParsedResponse parsed = parse_response("I would use shared memory tiling and float4 loads.", EditMode::full,
                                           kParent);
    CHECK_FALSE(parsed.ok);
    CHECK(parsed.failure == "no code in the response");
  }
  SECTION("an empty answer") {
    ParsedResponse parsed = parse_response("  \n", EditMode::diff, kParent);
    CHECK(parsed.failure == "empty response");
  }
  SECTION("a block with no kernel") {
    ParsedResponse parsed = parse_response("```cuda\nint x = 1;\n```", EditMode::full, kParent);
    CHECK(parsed.failure == "no code block contains a kernel (a __global__, __kernel or @triton.jit function)");
  }
  SECTION("the parent repeated unchanged") {
    ParsedResponse parsed = parse_response("```cuda\n" + kParent + "\n\n```", EditMode::full, kParent);
    CHECK(parsed.failure == "the answer repeats the current program unchanged");
  }
  SECTION("unfenced code is taken only when it starts like code") {
    ParsedResponse code = parse_response(kImproved, EditMode::full, kParent);
    REQUIRE(code.ok);
    CHECK(code.source == kImproved);
    ParsedResponse prose = parse_response("Sure! " + kImproved, EditMode::full, kParent);
    CHECK_FALSE(prose.ok);
  }
}

TEST_CASE("diff answers: SEARCH/REPLACE blocks apply in order, exact first", "[response_parser]") {
  std::string answer =
      "Use fmaxf and a larger block.\n"
      "```cuda\n"
      "<<<<<<< SEARCH\n"
      "// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)\n"
      "=======\n"
      "// @launch relu<<<ceil_div(N, 512), 512>>>(x, y, N)\n"
      ">>>>>>> REPLACE\n"
      "```\n"
      "```cuda\n"
      "<<<<<<< SEARCH\n"
      "    y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
      "=======\n"
      "    y[i] = fmaxf(x[i], 0.0f);\n"
      ">>>>>>> REPLACE\n"
      "```\n";
  ParsedResponse parsed = parse_response(answer, EditMode::diff, kParent);
  REQUIRE(parsed.ok);
  CHECK(parsed.kind == "diff");
  CHECK(parsed.explanation == "Use fmaxf and a larger block.");
  std::string expected = kParent;
  expected.replace(expected.find("ceil_div(N, 256), 256"), 21, "ceil_div(N, 512), 512");
  expected.replace(expected.find("x[i] > 0.0f ? x[i] : 0.0f"), 25, "fmaxf(x[i], 0.0f)");
  CHECK(parsed.source == expected);
  CHECK(parsed.notes.empty());
}

TEST_CASE("diff answers: whitespace-tolerant matching re-indents the replacement", "[response_parser]") {
  // The model lost the indentation and added trailing spaces and a blank line.
  std::string answer =
      "<<<<<<< SEARCH\n"
      "if (i < n) {   \n"
      "\n"
      "  y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
      "}\n"
      "=======\n"
      "if (i < n) y[i] = fmaxf(x[i], 0.0f);\n"
      ">>>>>>> REPLACE\n";
  ParsedResponse parsed = apply_diff_response(answer, kParent);
  REQUIRE(parsed.ok);
  CHECK(parsed.source.find("  if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n") != std::string::npos);
  CHECK(parsed.source.find("? x[i]") == std::string::npos);
  REQUIRE(parsed.notes.size() == 1);
  CHECK(parsed.notes[0] == "diff block 1 matched after normalising whitespace and blank lines");
}

TEST_CASE("diff answers: failures name the block", "[response_parser]") {
  SECTION("a block that matches nothing") {
    std::string answer =
        "<<<<<<< SEARCH\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n=======\n  int i = 0;\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\n\n   float z = shared[threadIdx.x];\n=======\nfloat z = 0;\n>>>>>>> REPLACE\n";
    ParsedResponse parsed = parse_response(answer, EditMode::diff, kParent);
    CHECK_FALSE(parsed.ok);
    CHECK(parsed.failure == "diff block 2 matched nothing: float z = shared[threadIdx.x];");
  }
  SECTION("a block cut off before REPLACE") {
    std::string answer = "<<<<<<< SEARCH\n  if (i < n) {\n=======\n  if (i < n && i >= 0) {\n";
    ParsedResponse parsed = parse_response(answer, EditMode::diff, kParent);
    CHECK_FALSE(parsed.ok);
    CHECK(parsed.failure.rfind("response truncated: the diff block at line 1 is not complete", 0) == 0);
  }
  SECTION("an empty SEARCH") {
    std::string answer = "<<<<<<< SEARCH\n\n=======\nint x;\n>>>>>>> REPLACE\n";
    CHECK(apply_diff_response(answer, kParent).failure ==
          "diff block 1 has an empty SEARCH section (it must quote the lines to replace)");
  }
  SECTION("a diff that changes nothing") {
    std::string answer = "<<<<<<< SEARCH\n  if (i < n) {\n=======\n  if (i < n) {\n>>>>>>> REPLACE\n";
    CHECK(apply_diff_response(answer, kParent).failure == "the diff changes nothing");
  }
  SECTION("prose where a diff was asked for") {
    ParsedResponse parsed = parse_response("Try unrolling.", EditMode::diff, kParent);
    CHECK(parsed.failure == "no SEARCH/REPLACE blocks and no code in the response");
  }
}

TEST_CASE("mode fallbacks: a whole file for a diff, diff blocks for a whole file", "[response_parser]") {
  ParsedResponse full = parse_response("```cuda\n" + kImproved + "```", EditMode::diff, kParent);
  REQUIRE(full.ok);
  CHECK(full.kind == "full");
  CHECK(full.source == kImproved);
  std::string diff = "<<<<<<< SEARCH\n  if (i < n) {\n=======\n  if (i < n && i >= 0) {\n>>>>>>> REPLACE\n";
  ParsedResponse applied = parse_response(diff, EditMode::full, kParent);
  REQUIRE(applied.ok);
  CHECK(applied.kind == "diff");
  CHECK(applied.source.find("if (i < n && i >= 0) {") != std::string::npos);
}

TEST_CASE("code blocks and bracket balance", "[response_parser]") {
  auto blocks = extract_code_blocks("a\n```CUDA extra\nx\n```\n````\ny\n```\nz\n````\n```c\nopen");
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0].language == "cuda");
  CHECK(blocks[0].code == "x");
  CHECK(blocks[0].line == 2);
  CHECK(blocks[1].code == "y\n```\nz");  // a longer fence is closed only by as many backticks
  CHECK_FALSE(blocks[2].closed);
  CHECK(blocks[2].code == "open");

  CHECK(brackets_balanced("void f() { int a[2] = {1, 2}; /* { */ const char* s = \"}\"; char c = '{'; } // }"));
  CHECK_FALSE(brackets_balanced("void f() { if (x) { y(); }"));
  CHECK_FALSE(brackets_balanced("void f() { /* never closed"));
  CHECK_FALSE(brackets_balanced("void f( ]"));
  CHECK(contains_launch_line("  //   @launch k<<<1, 1>>>()"));
  CHECK_FALSE(contains_launch_line("int launch = 1; // @tune X = 1 in {1}"));
  CHECK(contains_kernel("__kernel void f(__global float* x) {}"));
}

namespace {

const std::string kTriton =
    "# @tune BLOCK = 1024 in {256, 512, 1024}\n"
    "# @launch relu[ceil_div(N, BLOCK)](x, y, N, BLOCK=BLOCK) num_warps=4 num_stages=3\n"
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    # each program's (BLOCK-wide) slice; it's masked at the end\n"
    "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offsets < n // 1 + 0\n"
    "    x = tl.load(x_ptr + offsets, mask=mask)\n"
    "    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)\n";

}  // namespace

TEST_CASE("Triton answers: a ```python, ```py or ```triton block is the program", "[response_parser]") {
  for (std::string tag : {"python", "py", "triton", ""}) {
    INFO("fence tag '" << tag << "'");
    const std::string answer = "Use a wider block.\n\n```" + tag + "\n" + kTriton + "```\n";
    const ParsedResponse parsed = parse_response(answer, EditMode::full, "", "triton");
    REQUIRE(parsed.ok);
    CHECK(parsed.source == kTriton);
    CHECK(parsed.explanation == "Use a wider block.");
  }
  CHECK(contains_kernel(kTriton, "triton"));
  CHECK_FALSE(contains_kernel(kTriton, "cuda"));
  CHECK(contains_kernel(kTriton));
  CHECK(contains_launch_line(kTriton));
  // Without a language the answer is read as before, and a Triton block is a program too.
  CHECK(parse_full_response("```python\n" + kTriton + "```\n").ok);
}

TEST_CASE("Triton answers: a CUDA block is refused with both languages named", "[response_parser]") {
  const std::string cuda_answer = "Here it is:\n```cuda\n" + kImproved + "```\n";
  const ParsedResponse refused = parse_response(cuda_answer, EditMode::full, "", "triton");
  CHECK_FALSE(refused.ok);
  CHECK(refused.failure ==
        "the answer's program is in CUDA C++ (a ```cuda block), but a Triton program was asked for: give the whole "
        "Triton file in a ```python block");
  // The same answer is a CUDA program, and a MACA one (C++ written alike).
  CHECK(parse_response(cuda_answer, EditMode::full, "", "cuda").ok);
  CHECK(parse_response(cuda_answer, EditMode::full, "", "maca").ok);

  // Both languages in one answer: the block in the language asked for wins.
  const std::string both = "```cuda\n" + kImproved + "```\nOr in Triton:\n```python\n" + kTriton + "```\n";
  const ParsedResponse triton = parse_full_response(both, "", "triton");
  REQUIRE(triton.ok);
  CHECK(triton.source == kTriton);
  const ParsedResponse cuda = parse_full_response(both, "", "cuda");
  REQUIRE(cuda.ok);
  CHECK(cuda.source == kImproved);

  // And the reverse: a Triton block when CUDA was asked for.
  const ParsedResponse reverse = parse_full_response("```python\n" + kTriton + "```\n", "", "cuda");
  CHECK_FALSE(reverse.ok);
  CHECK(reverse.failure.find("is in Triton (a ```python block), but a CUDA C++ program was asked for") !=
        std::string::npos);

  // CUDA code in a bare block is no Triton program either.
  const ParsedResponse bare = parse_full_response("```\n" + kImproved + "```\n", "", "triton");
  CHECK_FALSE(bare.ok);
  CHECK(bare.failure ==
        "the program has no kernel of Triton (a @triton.jit function) but kernels of another language: a Triton "
        "program was asked for");
}

TEST_CASE("Triton answers: brackets are counted with Python's comments and strings", "[response_parser]") {
  // `//` is floor division and `#` starts a comment: the code balances, though a C reading would not.
  CHECK(brackets_balanced(kTriton, "triton"));
  CHECK(brackets_balanced("def f(x):\n    '''a (docstring\n    over lines'''\n    return (x // 2)\n", "triton"));
  CHECK_FALSE(brackets_balanced("def f(x):\n    return (x // 2\n", "triton"));
  CHECK_FALSE(brackets_balanced("def f(x):\n    \"\"\"cut off (\n", "triton"));
  // An unclosed fence around a complete file is accepted, as in C.
  const ParsedResponse unclosed = parse_full_response("```python\n" + kTriton, "", "triton");
  REQUIRE(unclosed.ok);
  CHECK(unclosed.notes.back() == "the closing fence is missing but the code is complete");
}

TEST_CASE("the skill tag: the last one counts; a missing or garbled one is \"unspecified\"", "[response_parser]") {
  CHECK(parse_skill_tag("Tiles.\n```cuda\nx\n```\n<skill>tile_in_shared_memory</skill>\n") == "tile_in_shared_memory");
  CHECK(parse_skill_tag("As asked, <skill>name</skill>... so: <SKILL> Vectorize-Memory Access </Skill>") ==
        "vectorize_memory_access");
  CHECK(parse_skill_tag("<skill>`fuse_kernels`</skill>") == "fuse_kernels");
  CHECK(parse_skill_tag("no tag at all") == "unspecified");
  CHECK(parse_skill_tag("<skill>fuse_kernels") == "unspecified");         // not closed
  CHECK(parse_skill_tag("<skill></skill>") == "unspecified");             // empty
  CHECK(parse_skill_tag("<skill>none</skill>") == "unspecified");
  CHECK(parse_skill_tag("<skill>use {tensor} cores!</skill>") == "unspecified");  // not a name
  CHECK(parse_skill_tag("<skill>9lives</skill>") == "unspecified");
  CHECK(parse_skill_tag("<skill>" + std::string(300, 'a') + "</skill>") == "unspecified");
  CHECK(parse_skill_tag("</skill><skill>") == "unspecified");
  CHECK(parse_skill_tag(std::string("<skill>a\0b</skill>", 17)) == "unspecified");

  // parse_response reads it whether or not the answer holds a program.
  const std::string answer = "Faster.\n```cuda\n" + kImproved + "```\n<skill>fuse_kernels</skill>\n";
  const ParsedResponse parsed = parse_response(answer, EditMode::full, "", "cuda");
  REQUIRE(parsed.ok);
  CHECK(parsed.skill == "fuse_kernels");
  CHECK(parsed.source == kImproved);  // the tag is not part of the program
  const ParsedResponse prose = parse_response("Just try it.\n<skill>fuse_kernels</skill>", EditMode::full, "", "cuda");
  CHECK_FALSE(prose.ok);
  CHECK(prose.skill == "fuse_kernels");
  CHECK(parse_response("", EditMode::diff, "x").skill == "unspecified");
}
