#include <string>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/prompt_builder.hpp"

using namespace kernelsmith;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Task matmul_task() {
  Task task;
  task.name = "matmul_test";
  task.description = "C = A @ B for row-major float32 matrices.";
  TensorSpec a{"A", DType::float32, {"M", "K"}, TensorRole::input, {"normal", 0.0, 1.0}};
  TensorSpec b{"B", DType::float32, {"K", "N"}, TensorRole::input, {"uniform", -1.0, 1.0}};
  TensorSpec c{"C", DType::float32, {"M", "N"}, TensorRole::output, {}};
  task.tensors = {a, b, c};
  task.timing_sizes = {"timing", {{"M", 1024}, {"N", 1024}, {"K", 1024}}};
  task.check_sizes = {{"odd", {{"M", 33}, {"N", 17}, {"K", 65}}}};
  task.work.flops = "2*M*N*K";
  task.work.bytes = "4*(M*K + K*N + M*N)";
  task.references["cuda"] = {"cuda", "// REFERENCE-SOURCE naive matmul\n__global__ void ref() {}\n", ""};
  task.pytorch = "torch.matmul(A, B)";
  return task;
}

Candidate program(const std::string& marker) {
  Candidate candidate;
  candidate.language = "cuda";
  candidate.source = "// " + marker + "\n// @launch k<<<1, 1>>>(A, B, C, M, N, K)\n__global__ void k() {}\n";
  return candidate;
}

Evaluation evaluation_of(const Candidate& candidate, Status status, double speedup, const std::string& message) {
  Evaluation evaluation;
  evaluation.candidate_id = candidate.id();
  evaluation.status = status;
  evaluation.message = message;
  evaluation.speedup = speedup;
  evaluation.fitness = status == Status::ok ? speedup : failure_fitness(status);
  return evaluation;
}

MutationRequest sample_request() {
  MutationRequest request;
  request.shared_task = std::make_shared<const Task>(matmul_task());
  request.parent = program("PARENT-SOURCE");
  request.parent_evaluation = evaluation_of(request.parent, Status::ok, 1.5, "ok");
  request.device.backend = "cuda";
  request.device.name = "NVIDIA H100 80GB HBM3";
  request.device.architecture = "sm_90";
  request.device.compute_units = 132;
  request.device.warp_size = 32;
  request.device.max_threads_per_block = 1024;
  request.device.l2_bytes = 50 * 1024 * 1024;
  request.device.is_gpu = true;
  request.recent_attempts = {
      {"a1", "llm_diff", Status::compile_error, "ATTEMPT-OLD error: identifier \"tile\" is undefined", 0.0, ""},
      {"a2", "llm_full", Status::ok, "ATTEMPT-NEW ok", 1.2, "fuse_kernels"},
  };
  Candidate top1 = program("TOP-ONE"), top2 = program("TOP-TWO"), div1 = program("DIVERSE-ONE");
  request.inspirations = {
      {top1, evaluation_of(top1, Status::ok, 3.0, "ok"), "island_best"},
      {div1, evaluation_of(div1, Status::incorrect, 0.0, "C mismatched at 17"), "diverse"},
      {top2, evaluation_of(top2, Status::ok, 2.0, "ok"), "top"},
  };
  return request;
}

std::int64_t tokens_of(const BuiltPrompt& prompt) {
  std::size_t chars = 0;
  for (const auto& m : prompt.messages) chars += m.content.size();
  return static_cast<std::int64_t>((chars + 3) / 4);
}

}  // namespace

TEST_CASE("the prompt holds the task, hardware, format rules, parent, attempts and inspirations",
          "[prompt_builder]") {
  PromptBuilderOptions options;
  options.peak_bandwidth_gbps = 3350.0;
  options.peak_gflops = 51000.0;
  PromptBuilder builder(options);
  BuiltPrompt prompt = builder.build(sample_request(), EditMode::diff);
  REQUIRE(prompt.messages.size() == 2);
  CHECK(prompt.messages[0].role == "system");
  CHECK(prompt.messages[1].role == "user");
  const std::string& system = prompt.messages[0].content;
  const std::string& user = prompt.messages[1].content;

  CHECK(contains(system, "CUDA C++"));
  CHECK(contains(system, "// @launch kernel_name<<<grid, block[, dynamic_shared_bytes]>>>(arg, arg, ...)"));
  CHECK(contains(system, "@workspace"));

  CHECK(contains(user, "## Task: matmul_test"));
  CHECK(contains(user, "- A: float32[M, K], input, values normal(mean 0, stddev 1)"));
  CHECK(contains(user, "- C: float32[M, N], output"));
  CHECK(contains(user, "- timed: K=1024, M=1024, N=1024 (timing)"));
  CHECK(contains(user, "- also checked: K=65, M=33, N=17 (odd)"));
  // 2*1024^3 FLOP and 4*3*1024^2 bytes at the timed sizes.
  CHECK(contains(user, "Work at the timed sizes: 2.15 GFLOP, 12.6 MB of unavoidable memory traffic"));
  CHECK(contains(user, "<= 0.0001 + 0.0001 * |expected|"));
  CHECK(contains(user, "In PyTorch: torch.matmul(A, B)"));
  CHECK(contains(user, "REFERENCE-SOURCE"));

  CHECK(contains(user, "NVIDIA H100 80GB HBM3 (cuda)"));
  CHECK(contains(user, "SM_COUNT=132"));
  CHECK(contains(user, "peak memory bandwidth: 3.35 TB/s"));
  CHECK(contains(user, "peak arithmetic throughput: 51 TFLOP/s"));

  CHECK(contains(user, "PARENT-SOURCE"));
  CHECK(contains(user, "```cuda\n// PARENT-SOURCE"));
  // Most recent attempt first.
  CHECK(user.find("ATTEMPT-NEW") < user.find("ATTEMPT-OLD"));
  CHECK(contains(user, "- [llm_diff] compile_error: ATTEMPT-OLD"));
  CHECK(contains(user, "- [llm_full] ok (skill fuse_kernels), speedup 1.2x"));
  // Top inspirations come before the diverse ones, each with its metrics.
  CHECK(user.find("TOP-TWO") < user.find("DIVERSE-ONE"));
  CHECK(contains(user, "(id " + program("TOP-ONE").id().substr(0, 12) + ", island_best): status ok, speedup 3x"));
  CHECK(contains(user, "diverse): status incorrect: C mismatched at 17"));

  CHECK(contains(user, "<<<<<<< SEARCH"));
  CHECK(prompt.mode == EditMode::diff);
  CHECK(prompt.dropped.empty());
  CHECK_FALSE(prompt.over_budget);
  CHECK(prompt.estimated_tokens == tokens_of(prompt));
}

TEST_CASE("a task checked against PyTorch shows its module as the reference, with the tensor mapping",
          "[prompt_builder]") {
  MutationRequest request = sample_request();
  Task task = matmul_task();
  task.references.clear();
  PytorchOracle oracle;
  oracle.module = {"python", "class Model(nn.Module):\n    def forward(self, A, B):  # MODULE-SOURCE\n", "problem.py"};
  oracle.forward = {"A", "B"};
  oracle.outputs = {"C"};
  oracle.parameters = {{"scale.weight", "scale_weight"}};
  oracle.constants = {{"M", "M"}, {"dim", "K"}};
  task.oracle = oracle;
  request.shared_task = std::make_shared<const Task>(task);
  const std::string user = PromptBuilder().build(request, EditMode::full).messages[1].content;
  CHECK(contains(user, "## Reference implementation (correct but slow)\n```python\n# Model.forward(A, B) -> C\n"));
  CHECK(contains(user, "# the module's scale.weight is the input tensor scale_weight\n"));
  CHECK(contains(user, "# the constant dim is the size K\n"));
  CHECK_FALSE(contains(user, "# the constant M is"));  // same name: nothing to say
  CHECK(contains(user, "MODULE-SOURCE"));
  CHECK_FALSE(contains(user, "REFERENCE-SOURCE"));

  // A kernel reference in the language, when there is one, is preferred to the module.
  request.shared_task = std::make_shared<const Task>([&] {
    Task both = task;
    both.references = matmul_task().references;
    return both;
  }());
  const std::string with_reference = PromptBuilder().build(request, EditMode::full).messages[1].content;
  CHECK(contains(with_reference, "REFERENCE-SOURCE"));
  CHECK_FALSE(contains(with_reference, "MODULE-SOURCE"));
}

TEST_CASE("without peaks in the options, the parent's measured peaks are shown", "[prompt_builder]") {
  MutationRequest request = sample_request();
  std::string plain = PromptBuilder().build(request, EditMode::full).messages[1].content;
  CHECK_FALSE(contains(plain, "peak memory bandwidth"));
  SpeedOfLight sol;
  sol.peak_gbps = 3000.0;
  sol.peak_gflops = 60000.0;
  request.parent_evaluation->sol = sol;
  std::string measured = PromptBuilder().build(request, EditMode::full).messages[1].content;
  CHECK(contains(measured, "- peak memory bandwidth (measured): 3 TB/s"));
  CHECK(contains(measured, "- peak arithmetic throughput (measured): 60 TFLOP/s"));
  PromptBuilderOptions options;
  options.peak_bandwidth_gbps = 3350.0;
  std::string given = PromptBuilder(options).build(request, EditMode::full).messages[1].content;
  CHECK(contains(given, "- peak memory bandwidth: 3.35 TB/s"));
  CHECK_FALSE(contains(given, "bandwidth (measured)"));
}

TEST_CASE("edit modes change the instruction; crossover shows the second program", "[prompt_builder]") {
  PromptBuilder builder;
  MutationRequest request = sample_request();
  std::string full = builder.build(request, EditMode::full).messages[1].content;
  CHECK(contains(full, "in a single ```cuda code block"));
  CHECK_FALSE(contains(full, "<<<<<<< SEARCH"));

  REQUIRE_THROWS_AS(builder.build(request, EditMode::crossover), ValidationError);
  request.second_parent = program("SECOND-PARENT");
  std::string crossover = builder.build(request, EditMode::crossover).messages[1].content;
  CHECK(contains(crossover, "## Second program"));
  CHECK(contains(crossover, "SECOND-PARENT"));
  CHECK(contains(crossover, "combines the best ideas of both"));

  request.parent.language = "opencl";
  std::string opencl = builder.build(request, EditMode::full).messages[0].content;
  CHECK(contains(opencl, "OpenCL C"));
  CHECK(contains(opencl, "__kernel void"));
}

TEST_CASE("the token budget drops the least useful parts first and records them", "[prompt_builder]") {
  MutationRequest request = sample_request();
  // Make every droppable part large enough to matter.
  for (auto& inspiration : request.inspirations) inspiration.candidate.source += std::string(4000, 'x') + "\n";
  Task task = request.task();
  task.references["cuda"].source += std::string(4000, 'r') + "\n";
  request.shared_task = std::make_shared<const Task>(std::move(task));
  request.parent_evaluation->message = std::string(3000, 'e');

  PromptBuilderOptions unlimited;
  unlimited.max_prompt_tokens = 0;
  const std::int64_t full_size = PromptBuilder(unlimited).build(request, EditMode::full).estimated_tokens;
  REQUIRE(full_size > 4000);

  SECTION("a little over budget: only the diverse inspiration goes") {
    PromptBuilderOptions options;
    options.max_prompt_tokens = full_size - 100;
    BuiltPrompt prompt = PromptBuilder(options).build(request, EditMode::full);
    REQUIRE(prompt.dropped.size() == 1);
    CHECK(contains(prompt.dropped[0], "diverse inspiration 2"));
    CHECK(prompt.estimated_tokens <= options.max_prompt_tokens);
    CHECK_FALSE(contains(prompt.messages[1].content, "DIVERSE-ONE"));
    CHECK(contains(prompt.messages[1].content, "TOP-TWO"));
  }
  SECTION("far over budget: the order is diverse, top, older attempts, reference, logs") {
    PromptBuilderOptions options;
    options.max_prompt_tokens = 1200;
    options.min_evaluation_chars = 200;
    // An A100: the budget above was set for a hardware section without Hopper's directives, which never shrink.
    request.device.architecture = "sm_80";
    BuiltPrompt prompt = PromptBuilder(options).build(request, EditMode::full);
    REQUIRE(prompt.dropped.size() == 7);
    CHECK(contains(prompt.dropped[0], "diverse inspiration 2"));
    CHECK(contains(prompt.dropped[1], "top inspiration 3"));
    CHECK(contains(prompt.dropped[2], "top inspiration 1"));
    CHECK(prompt.dropped[3] == "attempt 1 (llm_diff, compile_error)");
    CHECK(prompt.dropped[4] == "attempt 2 (llm_full, ok)");
    CHECK(prompt.dropped[5] == "reference source");
    CHECK(contains(prompt.dropped[6], "parent evaluation trimmed from"));
    const std::string& user = prompt.messages[1].content;
    CHECK(contains(user, "PARENT-SOURCE"));  // the parent is never dropped
    CHECK_FALSE(contains(user, "REFERENCE-SOURCE"));
    CHECK(contains(user, "characters trimmed ..."));
    CHECK(prompt.estimated_tokens <= options.max_prompt_tokens);
    CHECK_FALSE(prompt.over_budget);
  }
  SECTION("an impossible budget is reported, never a missing parent") {
    PromptBuilderOptions options;
    options.max_prompt_tokens = 50;
    BuiltPrompt prompt = PromptBuilder(options).build(request, EditMode::full);
    CHECK(prompt.over_budget);
    CHECK(contains(prompt.messages[1].content, "PARENT-SOURCE"));
  }
}

namespace {

// The sample's parent, measured: correct, compute-bound work at 20% of the FLOP peak, tiles in shared memory.
MutationRequest measured_request() {
  MutationRequest request = sample_request();
  SpeedOfLight sol;
  sol.peak_gbps = 3000.0;
  sol.peak_gflops = 60000.0;
  sol.bandwidth_fraction = 0.05;
  sol.compute_fraction = 0.2;
  sol.fraction = 0.2;
  request.parent_evaluation->sol = sol;
  request.parent_evaluation->compile.ok = true;
  request.parent_evaluation->compile.kernels.push_back({"k", 64, 0, 0, 0, 8192, 0});
  return request;
}

RetrievedItem retrieved(std::int64_t id, const std::string& skill, double speedup, double value) {
  RetrievedItem entry;
  entry.item.id = id;
  entry.item.task = "matmul_fp16";
  entry.item.stage = Stage::refine;
  entry.item.skill = skill;
  entry.item.edit = "llm_diff";
  entry.item.status = Status::ok;
  entry.item.correct = true;
  entry.item.speedup = speedup;
  entry.item.parent_speedup = 1.0;
  entry.item.refine = {value, 3.0, 3};
  entry.retrieval = {id, skill, value + 0.9, value, 0.9, false};
  return entry;
}

}  // namespace

TEST_CASE("skills whose predicates hold are shown with their example, and the answer is asked to name one",
          "[prompt_builder][skills]") {
  const MutationRequest request = measured_request();
  const BuiltPrompt prompt = PromptBuilder().build(request, EditMode::diff);
  const std::string& user = prompt.messages[1].content;
  CHECK(prompt.skills == std::vector<std::string>{"tile_in_shared_memory", "register_tiling"});
  CHECK(contains(user, "## Skills that fit the measurements of the current program\n### tile_in_shared_memory: Tile the "
                       "inputs in shared memory for reuse\nApplies because: stage == \"refine\" and task_intensity >= 8 "
                       "and compute_fraction < 0.5\n"));
  CHECK(contains(user, "Example (CUDA C++):\n```cuda\n// Each block loads a tile"));
  CHECK(contains(user, "<skill>name</skill>"));
  CHECK(user.find("## Skills") < user.find("## Other programs"));
  CHECK_FALSE(contains(user, "coalesce_memory_access"));
  CHECK(prompt.dropped.empty());

  // An OpenCL child gets the OpenCL examples.
  MutationRequest opencl = request;
  opencl.language = "opencl";
  opencl.parent.language = "opencl";
  const std::string opencl_user = PromptBuilder().build(opencl, EditMode::full).messages[1].content;
  CHECK(contains(opencl_user, "Example (OpenCL C):\n```opencl\n// Each work-group loads a tile"));

  // A failed parent gets the draft skills instead.
  MutationRequest broken = sample_request();
  broken.parent_evaluation = evaluation_of(broken.parent, Status::crashed, 0.0, "illegal address");
  CHECK(PromptBuilder().build(broken, EditMode::full).skills == std::vector<std::string>{"guard_out_of_bounds"});

  // A bank of one's own, an empty one, a limit, no examples, no tag.
  auto own = std::make_shared<SkillBank>();
  Skill skill;
  skill.name = "use_tensor_cores";
  skill.title = "Use tensor cores";
  skill.when = Predicate("task_intensity > 50");
  skill.advice = "Use mma.sync on 16 x 8 x 16 tiles.";
  skill.examples["cuda"] = "// TENSOR-CORE-EXAMPLE\n";
  own->add(skill);
  PromptBuilderOptions options;
  options.skills = own;
  const BuiltPrompt with_own = PromptBuilder(options).build(request, EditMode::full);
  CHECK(with_own.skills == std::vector<std::string>{"use_tensor_cores"});
  CHECK(contains(with_own.messages[1].content, "TENSOR-CORE-EXAMPLE"));
  options.skill_examples = false;
  options.templates.skill_tag = "";
  const std::string bare = PromptBuilder(options).build(request, EditMode::full).messages[1].content;
  CHECK(contains(bare, "### use_tensor_cores: Use tensor cores"));
  CHECK_FALSE(contains(bare, "TENSOR-CORE-EXAMPLE"));
  CHECK_FALSE(contains(bare, "<skill>"));
  options.skills = std::make_shared<SkillBank>();
  CHECK_FALSE(contains(PromptBuilder(options).build(request, EditMode::full).messages[1].content, "## Skills"));
  PromptBuilderOptions one;
  one.max_skills = 1;
  CHECK(PromptBuilder(one).build(request, EditMode::full).skills == std::vector<std::string>{"tile_in_shared_memory"});
}

TEST_CASE("retrieved experience is shown with its values", "[prompt_builder][experience]") {
  MutationRequest request = measured_request();
  request.experience = {retrieved(17, "register_tiling", 1.6, 0.55), retrieved(4, "unspecified", 0.8, -0.3)};
  request.experience[1].item.correct = true;
  const BuiltPrompt prompt = PromptBuilder().build(request, EditMode::full);
  const std::string& user = prompt.messages[1].content;
  CHECK(prompt.experience == std::vector<std::int64_t>{17, 4});
  CHECK(contains(user, "## Experience from earlier steps (this run and earlier ones)\n"));
  CHECK(contains(user, "- On task matmul_fp16, a correct parent at 1x: skill register_tiling (llm_diff) -> 1x -> 1.6x "
                       "(+60%). Value 0.55 from 3 outcomes at this stage.\n"));
  CHECK(contains(user, "a change naming no skill (llm_diff) -> 1x -> 0.8x (-20%). Value -0.30"));
  CHECK(user.find("## Experience") < user.find("## Other programs"));
  PromptBuilderOptions options;
  options.max_experience = 1;
  CHECK(PromptBuilder(options).build(request, EditMode::full).experience == std::vector<std::int64_t>{17});
}

TEST_CASE("the budget drops experience, then skill examples, and skills only after the attempts",
          "[prompt_builder][skills]") {
  MutationRequest request = measured_request();
  request.experience = {retrieved(17, "register_tiling", 1.6, 0.55), retrieved(4, "fuse_kernels", 1.2, 0.2)};
  for (auto& inspiration : request.inspirations) inspiration.candidate.source += std::string(4000, 'x') + "\n";
  PromptBuilderOptions unlimited;
  unlimited.max_prompt_tokens = 0;
  const std::int64_t full_size = PromptBuilder(unlimited).build(request, EditMode::full).estimated_tokens;
  PromptBuilderOptions options;
  options.max_prompt_tokens = 900;
  options.min_evaluation_chars = 200;
  const BuiltPrompt prompt = PromptBuilder(options).build(request, EditMode::full);
  REQUIRE(full_size > 3000);
  REQUIRE(prompt.dropped.size() >= 11);
  CHECK(contains(prompt.dropped[0], "diverse inspiration 2"));
  CHECK(prompt.dropped[1] == "experience item 2 (id 4)");
  CHECK(prompt.dropped[2] == "experience item 1 (id 17)");
  CHECK(prompt.dropped[3] == "example of skill register_tiling");
  CHECK(prompt.dropped[4] == "example of skill tile_in_shared_memory");
  CHECK(contains(prompt.dropped[5], "top inspiration 3"));
  CHECK(contains(prompt.dropped[6], "top inspiration 1"));
  CHECK(prompt.dropped[7] == "attempt 1 (llm_diff, compile_error)");
  CHECK(prompt.dropped[8] == "attempt 2 (llm_full, ok)");
  CHECK(prompt.dropped[9] == "skill register_tiling");
  CHECK(prompt.dropped[10] == "skill tile_in_shared_memory");
  CHECK(prompt.skills.empty());
  CHECK(prompt.experience.empty());
}

TEST_CASE("templates are overridable and checked", "[prompt_builder]") {
  PromptBuilderOptions options;
  options.templates.user = "{parent}{instruction}Literal {{braces}} and {not a placeholder} stay.";
  options.templates.parent = "PARENT {id} in {language}:\n{source}\n";
  BuiltPrompt prompt = PromptBuilder(options).build(sample_request(), EditMode::full);
  const std::string& user = prompt.messages[1].content;
  CHECK(user.rfind("PARENT " + program("PARENT-SOURCE").id().substr(0, 12) + " in cuda:\n// PARENT-SOURCE", 0) == 0);
  CHECK(contains(user, "Literal {braces} and {not a placeholder} stay."));
  CHECK_FALSE(contains(user, "## Task"));

  PromptBuilderOptions bad;
  bad.templates.hardware = "## Hardware\n{gpu}\n";
  try {
    PromptBuilder builder(bad);
    FAIL("an unknown placeholder must be rejected");
  } catch (const ValidationError& e) {
    CHECK(contains(e.what(), "prompt template 'hardware': unknown placeholder {gpu}"));
    CHECK(contains(e.what(), "{device}"));
  }
}

TEST_CASE("messages round-trip through JSON", "[prompt_builder]") {
  std::vector<ChatMessage> messages = {{"system", "be \"precise\"\n"}, {"user", "{}[]\\ \xc3\xa9"}};
  std::string json = messages_to_json(messages);
  auto back = messages_from_json(json);
  REQUIRE(back.size() == 2);
  CHECK(back[0].content == messages[0].content);
  CHECK(back[1].content == messages[1].content);
  REQUIRE_THROWS_AS(messages_from_json("[{\"role\": 1}]", "stored prompt"), ValidationError);
  CHECK(parse_edit_mode("diff") == EditMode::diff);
  REQUIRE_THROWS_AS(parse_edit_mode("patch"), ValidationError);
}

namespace {

Candidate triton_program(const std::string& marker) {
  Candidate candidate;
  candidate.language = "triton";
  candidate.source = "# " + marker +
                     "\n# @tune BLOCK = 64 in {32, 64, 128}\n"
                     "# @launch k[ceil_div(M, BLOCK), ceil_div(N, BLOCK)](A, B, C, M, N, K, BLOCK=BLOCK) num_warps=4 "
                     "num_stages=3\n"
                     "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                     "def k(a, b, c, m, n, k, BLOCK: tl.constexpr):\n    pass\n";
  return candidate;
}

MutationRequest triton_request() {
  MutationRequest request = sample_request();
  request.language = "triton";
  request.parent = triton_program("TRITON-PARENT");
  Evaluation failed = evaluation_of(request.parent, Status::compile_error, 0.0, "triton could not compile k");
  failed.compile.log = "line 9: at 2:4: `tl.dot` needs both operands of at least 16 x 16";
  request.parent_evaluation = failed;
  Candidate inspiration = triton_program("TRITON-INSPIRATION");
  // The sample's inspirations are CUDA programs: a Triton prompt must not show them.
  request.inspirations.push_back({inspiration, evaluation_of(inspiration, Status::ok, 2.5, "ok"), "top"});
  return request;
}

}  // namespace

TEST_CASE("a Triton prompt speaks Triton: its rules, fence, plan lines and example, nothing of CUDA",
          "[prompt_builder]") {
  PromptBuilder builder;
  for (EditMode mode : {EditMode::full, EditMode::diff}) {
    INFO("mode " << to_string(mode));
    const BuiltPrompt prompt = builder.build(triton_request(), mode);
    const std::string& system = prompt.messages[0].content;
    const std::string& user = prompt.messages[1].content;
    CHECK(contains(system, "You are an expert Triton GPU kernel engineer"));
    CHECK(contains(system, kernel_language("triton").kernel_rule));
    CHECK(contains(system, "    # @launch kernel_name[grid_x, grid_y, grid_z](arg, arg, ..., NAME=value) num_warps=W "
                           "num_stages=S"));
    CHECK(contains(system, "For example: " + kernel_language("triton").launch_example));
    CHECK(contains(system, "`# @workspace name: float32[count_expression]`"));
    CHECK(contains(system, "`# @tune NAME = 256 in {128, 256, 512}` declares a value a tuner may vary"));
    CHECK(contains(user, "```python\n# TRITON-PARENT"));
    CHECK(contains(user, "```python\n# TRITON-INSPIRATION"));
    CHECK(contains(user, "`# @launch` lines"));
    // The compile feedback reads as it does for CUDA: the status, the message, the log with the file's line.
    CHECK(contains(user, "Status: compile_error: triton could not compile k\nCompiler log:\nline 9: at 2:4:"));
    // The CUDA reference and the CUDA inspirations are left out; no CUDA syntax reaches the model.
    CHECK_FALSE(contains(user, "REFERENCE-SOURCE"));
    CHECK_FALSE(contains(user, "TOP-ONE"));
    for (const ChatMessage& message : prompt.messages) {
      for (const char* cuda : {">>>(", "//", "extern \"C\"", "__global__", "```cuda", "@specialize", "dim3", "main()"}) {
        INFO(message.role << " message holds " << cuda);
        CHECK_FALSE(contains(message.content, cuda));
      }
    }
    // Chevrons only as the diff instruction's SEARCH/REPLACE markers.
    CHECK(contains(system + user, "<<<") == (mode == EditMode::diff));
  }
  // A Triton reference, when a task has one, is shown in its fence.
  MutationRequest with_reference = triton_request();
  Task task = with_reference.task();
  task.references["triton"] = {"triton", "# TRITON-REFERENCE\n", ""};
  with_reference.shared_task = std::make_shared<const Task>(task);
  CHECK(contains(builder.build(with_reference, EditMode::full).messages[1].content,
                 "```python\n# TRITON-REFERENCE"));
}

TEST_CASE("a Triton prompt from a CUDA parent asks for its Triton version", "[prompt_builder]") {
  MutationRequest request = sample_request();  // a CUDA parent
  request.language = "triton";
  const BuiltPrompt prompt = PromptBuilder().build(request, EditMode::full);
  const std::string& user = prompt.messages[1].content;
  CHECK(contains(prompt.messages[0].content, "You are an expert Triton GPU kernel engineer"));
  CHECK(contains(user, "```cuda\n// PARENT-SOURCE"));  // the parent in its own fence
  CHECK(contains(user, "in a single ```python code block"));
  CHECK(contains(user, "The current program is written in CUDA C++: write yours in Triton, in the candidate format "
                       "above."));
  // C-family prompts are unchanged: a MACA prompt still shows the CUDA reference, written alike.
  MutationRequest maca = sample_request();
  maca.parent.language = "maca";
  CHECK(contains(PromptBuilder().build(maca, EditMode::full).messages[1].content, "REFERENCE-SOURCE"));
}

TEST_CASE("the prompt describes constant inputs and structured inputs", "[prompt_builder]") {
  MutationRequest request = sample_request();
  Task task = matmul_task();
  task.tensors[0].distribution = {"normal", 0.0, 1.0, "symmetric"};
  task.tensors[1].distribution = {"uniform", 0.0, 1.0, "probability_rows"};
  TensorSpec alpha{"alpha", DType::float32, {}, TensorRole::input, {"constant", 0.5, 1.0}};
  task.tensors.insert(task.tensors.begin() + 2, alpha);
  request.shared_task = std::make_shared<const Task>(task);
  const std::string user = PromptBuilder().build(request, EditMode::full).messages[1].content;
  CHECK(contains(user, "- A: float32[M, K], input, values normal(mean 0, stddev 1), symmetric in the last two dimensions"));
  CHECK(contains(user, "- B: float32[K, N], input, values uniform [0, 1), then each row (last dimension) softmaxed: "
                       "positive, sum 1"));
  CHECK(contains(user, "- alpha: float32[], input, values constant 0.5"));
}

TEST_CASE("the hardware section shows Hopper's plan directives only where the plan may use them", "[prompt_builder][hopper]") {
  PromptBuilder builder;
  MutationRequest request = sample_request();
  const std::string hopper = builder.build(request, EditMode::full).messages[1].content;
  CHECK(contains(hopper, "- plan directives of this GPU: TMA tensor maps and thread-block clusters"));
  const std::string plan_lines = "    // @tensor_map a_tiles = A[K, M] box[64, 128] swizzle=128B\n"
                                 "    // @launch gemm<<<grid, 256, smem_bytes>>>(a_tiles, C, M, N, K) cluster=dim3(2, 1, 1)\n";
  CHECK(contains(hopper, plan_lines));
  CHECK(contains(hopper, "const __grid_constant__ TensorMap a_tiles"));
  CHECK(contains(hopper, "wgmma.mma_async"));
  // The example's plan lines parse as a plan.
  const LaunchPlan example = LaunchPlan::parse(plan_lines);
  CHECK(example.tensor_maps.size() == 1);
  CHECK(example.launches[0].cluster[0] == "2");
  // An A100, a Blackwell GPU without wgmma, and a Triton program: no such lines, or no wgmma.
  request.device.architecture = "sm_80";
  CHECK_FALSE(contains(builder.build(request, EditMode::full).messages[1].content, "@tensor_map"));
  request.device.architecture = "sm_100";
  const std::string blackwell = builder.build(request, EditMode::full).messages[1].content;
  CHECK(contains(blackwell, "@tensor_map"));
  CHECK_FALSE(contains(blackwell, "wgmma"));
  request.device.architecture = "sm_90";
  request.device.backend = "opencl";
  CHECK_FALSE(contains(builder.build(request, EditMode::full).messages[1].content, "@tensor_map"));
}

TEST_CASE("a MACA prompt names the language, its headers and the device's 64-lane wave", "[prompt_builder][maca]") {
  MutationRequest request = sample_request();
  request.language = "maca";
  request.parent.language = "maca";
  request.device.backend = "maca";
  request.device.name = "MetaX C500";
  request.device.architecture = "compute_80";
  request.device.warp_size = 64;
  PromptBuilder builder;
  const BuiltPrompt prompt = builder.build(request, EditMode::full);
  const std::string& system = prompt.messages[0].content;
  const std::string& user = prompt.messages[1].content;
  CHECK(contains(system, "You are an expert MACA C++ GPU kernel engineer"));
  CHECK(contains(system, "maca_fp16.h, maca_bfloat16.h"));
  CHECK(contains(system, "64-bit lane masks"));
  CHECK(contains(user, "WARP_SIZE=64"));
  CHECK(contains(user, "wave (warp) size: 64 lanes (WARP_SIZE): use warpSize, 64-bit lane masks and ballots"));
  // The task's CUDA reference is written alike (CUDA syntax), so it is shown.
  CHECK(contains(user, "REFERENCE-SOURCE"));
  // A 32-lane device gets no such line.
  CHECK_FALSE(contains(builder.build(sample_request(), EditMode::full).messages[1].content, "wave (warp) size"));
}
