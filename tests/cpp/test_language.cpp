// The kernel-language table: lookups, extensions, fence tags, backends and the messages for unknown names.
#include <set>
#include <string>

#include "catch.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"

using namespace kernelsmith;

TEST_CASE("every language has one row with what its users need", "[language]") {
  std::set<std::string> names;
  std::set<std::string> extensions;
  for (const auto& language : kernel_languages()) {
    CHECK(names.insert(language.name).second);
    CHECK_FALSE(language.prompt_label.empty());
    CHECK_FALSE(language.fence_tag.empty());
    CHECK(language.backend.empty() == language.host_code);  // host code runs on any backend with an oracle
    CHECK_FALSE(language.kernel_rule.empty());
    for (const auto& extension : language.extensions) {
      CHECK(extension.front() == '.');
      CHECK(extensions.insert(extension).second);  // one language per extension
    }
  }
  CHECK(names == std::set<std::string>{"cuda", "opencl", "maca", "triton", "pytorch"});
  CHECK(kernel_language_names() == "cuda, opencl, maca, triton, pytorch");
}

TEST_CASE("lookups by name, extension and backend", "[language]") {
  CHECK(kernel_language("opencl").prompt_label == "OpenCL C");
  CHECK(kernel_language("maca").fence_tag == "cpp");
  CHECK(find_kernel_language("fortran") == nullptr);
  CHECK(language_for_extension("dir/k.CU") == "cuda");
  CHECK(language_for_extension("k.cuh") == "cuda");
  CHECK(language_for_extension("k.cl") == "opencl");
  CHECK(language_for_extension("k.maca") == "maca");
  CHECK(language_for_extension("k.py") == "triton");
  CHECK(language_for_extension("k.txt").empty());
  CHECK(language_of_backend("opencl") == "opencl");
  CHECK(language_of_backend("cuda") == "cuda");  // Triton runs on the CUDA backend as a front end
  CHECK(language_of_backend("vulkan").empty());
  CHECK(language_of_backend("").empty());  // the host-code row is no backend's own language
}

TEST_CASE("a Python file that defines ModelNew is KernelBench's format, not Triton", "[language]") {
  CHECK(kernel_language("pytorch").host_code);
  CHECK_FALSE(kernel_language("triton").host_code);
  CHECK(defines_model_new("import torch\n\nclass ModelNew(nn.Module):\n    pass\n"));
  CHECK(defines_model_new("class ModelNew:\n    pass\n"));
  CHECK_FALSE(defines_model_new("# class ModelNew(nn.Module) is what KernelBench wants\n"));
  CHECK_FALSE(defines_model_new("class ModelNewer(nn.Module):\n"));
  CHECK_FALSE(defines_model_new("@triton.jit\ndef relu(x_ptr):\n    pass\n"));
}

TEST_CASE("each language says how its plan lines are written", "[language]") {
  for (const auto& language : kernel_languages()) {
    CHECK_FALSE(language.plan_comment.empty());
    if (language.host_code) continue;  // no plan
    CHECK(language.launch_example.rfind(language.plan_comment + " @launch ", 0) == 0);
  }
  const KernelLanguage& triton = kernel_language("triton");
  CHECK(triton.plan_comment == "#");
  CHECK(triton.launch_syntax == LaunchSyntax::subscript);
  CHECK(triton.backend == "cuda");
  CHECK(triton.fence_tag == "python");
  CHECK(kernel_language("cuda").launch_syntax == LaunchSyntax::chevrons);
}

TEST_CASE("an unknown language is refused naming the known ones", "[language]") {
  try {
    kernel_language("hip");
    FAIL("no error");
  } catch (const ValidationError& e) {
    CHECK(std::string(e.what()) == "unknown kernel language 'hip'; expected one of cuda, opencl, maca, triton, pytorch");
  }
}
