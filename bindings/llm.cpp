// The LLM mutator's parts: prompt builder, response parser, the LlmClient seam (subclassable from
// Python) and LlmMutator. The pure-Python layer (kernelsmith.llm) adds HTTP clients and the glue that
// makes any callable an LlmClient.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "kernelsmith/llm_mutator.hpp"

namespace py = pybind11;

namespace kernelsmith::python {

namespace {

// Lets Python classes implement LlmClient. The override macro takes the GIL before calling into Python;
// trampoline_self_life_support keeps the Python object alive while C++ holds it.
class PyLlmClient : public LlmClient, public py::trampoline_self_life_support {
 public:
  LlmResponse complete(const std::vector<ChatMessage>& messages, const LlmRequestOptions& options) override {
    PYBIND11_OVERRIDE_PURE(LlmResponse, LlmClient, complete, messages, options);
  }
};

template <typename Class>
void define_llm_mutator_methods(Class& cls) {
  cls.def(py::init<std::shared_ptr<LlmClient>, LlmMutatorOptions>(), py::arg("client"),
          py::arg("options") = LlmMutatorOptions{},
          "An LLM mutator over a client (an LlmClient; kernelsmith.llm.as_llm_client wraps any callable).")
      .def("propose", &LlmMutator::propose, py::arg("request"), py::call_guard<py::gil_scoped_release>(),
           "Proposals for a request: builds the prompt, calls the client, parses the answer.")
      .def("propose_with_mode", &LlmMutator::propose_with_mode, py::arg("request"), py::arg("mode"),
           py::arg("index") = 0, py::call_guard<py::gil_scoped_release>())
      .def("choose_mode", &LlmMutator::choose_mode, py::arg("request"), py::arg("index") = 0)
      .def("name", &LlmMutator::name)
      .def_property_readonly("options", &LlmMutator::options)
      .def_property_readonly("client", &LlmMutator::client)
      .def_property_readonly("prompt_builder", &LlmMutator::prompt_builder, py::return_value_policy::reference_internal);
}

}  // namespace

void bind_llm(py::module_& m) {
  py::class_<ChatMessage>(m, "ChatMessage", "One chat message: role ('system', 'user', 'assistant') and content.")
      .def(py::init<>())
      .def(py::init([](std::string role, std::string content) { return ChatMessage{std::move(role), std::move(content)}; }),
           py::arg("role"), py::arg("content"))
      .def_readwrite("role", &ChatMessage::role)
      .def_readwrite("content", &ChatMessage::content)
      .def("__repr__", [](const ChatMessage& message) {
        std::string preview = message.content.substr(0, 40);
        return "ChatMessage(role='" + message.role + "', content='" + preview +
               (message.content.size() > 40 ? "...')" : "')");
      });
  m.def("messages_to_json", &messages_to_json, py::arg("messages"));
  m.def("messages_from_json", &messages_from_json, py::arg("json_text"), py::arg("origin") = "<messages>");

  py::enum_<EditMode>(m, "EditMode", "What the LLM is asked for: a whole file, a SEARCH/REPLACE diff, a crossover.")
      .value("full", EditMode::full)
      .value("diff", EditMode::diff)
      .value("crossover", EditMode::crossover);
  m.def("parse_edit_mode", &parse_edit_mode, py::arg("name"));
  m.def("mutation_name", &mutation_name, py::arg("mode"));

  py::class_<PromptTemplates>(m, "PromptTemplates",
                              "The prompt's templates with {placeholders}; see docs/llm.md for each one's names.")
      .def(py::init(&PromptTemplates::defaults))
      .def_static("defaults", &PromptTemplates::defaults)
      .def_readwrite("system", &PromptTemplates::system)
      .def_readwrite("user", &PromptTemplates::user)
      .def_readwrite("task", &PromptTemplates::task)
      .def_readwrite("reference", &PromptTemplates::reference)
      .def_readwrite("hardware", &PromptTemplates::hardware)
      .def_readwrite("parent", &PromptTemplates::parent)
      .def_readwrite("attempts", &PromptTemplates::attempts)
      .def_readwrite("inspirations", &PromptTemplates::inspirations)
      .def_readwrite("inspiration", &PromptTemplates::inspiration)
      .def_readwrite("second_parent", &PromptTemplates::second_parent)
      .def_readwrite("full_instruction", &PromptTemplates::full_instruction)
      .def_readwrite("diff_instruction", &PromptTemplates::diff_instruction)
      .def_readwrite("crossover_instruction", &PromptTemplates::crossover_instruction);
  m.def("candidate_format_rules", &candidate_format_rules, py::arg("language") = "cuda");
  m.def("render_template", &render_template, py::arg("text"), py::arg("values"), py::arg("template_name") = "template");

  py::class_<PromptBuilderOptions>(m, "PromptBuilderOptions")
      .def(py::init<>())
      .def_readwrite("templates", &PromptBuilderOptions::templates)
      .def_readwrite("max_prompt_tokens", &PromptBuilderOptions::max_prompt_tokens)
      .def_readwrite("chars_per_token", &PromptBuilderOptions::chars_per_token)
      .def_readwrite("peak_bandwidth_gbps", &PromptBuilderOptions::peak_bandwidth_gbps)
      .def_readwrite("peak_gflops", &PromptBuilderOptions::peak_gflops)
      .def_readwrite("max_evaluation_chars", &PromptBuilderOptions::max_evaluation_chars)
      .def_readwrite("min_evaluation_chars", &PromptBuilderOptions::min_evaluation_chars)
      .def_readwrite("max_attempts", &PromptBuilderOptions::max_attempts)
      .def_readwrite("max_inspirations", &PromptBuilderOptions::max_inspirations);

  py::class_<BuiltPrompt>(m, "BuiltPrompt")
      .def_readonly("messages", &BuiltPrompt::messages)
      .def_readonly("mode", &BuiltPrompt::mode)
      .def_readonly("estimated_tokens", &BuiltPrompt::estimated_tokens)
      .def_readonly("dropped", &BuiltPrompt::dropped)
      .def_readonly("over_budget", &BuiltPrompt::over_budget)
      .def("messages_json", &BuiltPrompt::messages_json);

  py::class_<PromptBuilder>(m, "PromptBuilder")
      .def(py::init<PromptBuilderOptions>(), py::arg("options") = PromptBuilderOptions{})
      .def("build", &PromptBuilder::build, py::arg("request"), py::arg("mode") = EditMode::full)
      .def_property_readonly("options", &PromptBuilder::options);

  py::class_<CodeBlock>(m, "CodeBlock")
      .def_readonly("language", &CodeBlock::language)
      .def_readonly("code", &CodeBlock::code)
      .def_readonly("closed", &CodeBlock::closed)
      .def_readonly("line", &CodeBlock::line);
  py::class_<DiffBlock>(m, "DiffBlock")
      .def_readonly("search", &DiffBlock::search)
      .def_readonly("replace", &DiffBlock::replace)
      .def_readonly("line", &DiffBlock::line);
  py::class_<ParsedResponse>(m, "ParsedResponse")
      .def_readonly("ok", &ParsedResponse::ok)
      .def_readonly("source", &ParsedResponse::source)
      .def_readonly("failure", &ParsedResponse::failure)
      .def_readonly("kind", &ParsedResponse::kind)
      .def_readonly("explanation", &ParsedResponse::explanation)
      .def_readonly("notes", &ParsedResponse::notes)
      .def("__bool__", [](const ParsedResponse& parsed) { return parsed.ok; })
      .def("__repr__", [](const ParsedResponse& parsed) {
        return parsed.ok ? "ParsedResponse(ok, kind='" + parsed.kind + "', " + std::to_string(parsed.source.size()) +
                               " characters)"
                         : "ParsedResponse(failure='" + parsed.failure + "')";
      });
  m.def("extract_code_blocks", &extract_code_blocks, py::arg("text"));
  m.def("extract_diff_blocks", [](const std::string& text) { return extract_diff_blocks(text); }, py::arg("text"));
  m.def("parse_response", &parse_response, py::arg("text"), py::arg("mode"), py::arg("parent_source"),
        "Reads an LLM answer given in `mode` against the parent's source; see docs/llm.md.");
  m.def("parse_full_response", &parse_full_response, py::arg("text"), py::arg("parent_source") = "");
  m.def("apply_diff_response", &apply_diff_response, py::arg("text"), py::arg("parent_source"));

  py::class_<LlmRequestOptions>(m, "LlmRequestOptions")
      .def(py::init<>())
      .def_readwrite("model", &LlmRequestOptions::model)
      .def_readwrite("temperature", &LlmRequestOptions::temperature)
      .def_readwrite("max_tokens", &LlmRequestOptions::max_tokens)
      .def_readwrite("timeout_seconds", &LlmRequestOptions::timeout_seconds)
      .def_readwrite("seed", &LlmRequestOptions::seed);

  py::class_<LlmResponse>(m, "LlmResponse")
      .def(py::init<>())
      .def(py::init([](std::string text, std::string model, std::int64_t prompt_tokens, std::int64_t completion_tokens,
                       double latency_seconds, std::string error) {
             return LlmResponse{std::move(text), std::move(model), prompt_tokens, completion_tokens, latency_seconds,
                                std::move(error)};
           }),
           py::arg("text") = "", py::arg("model") = "", py::arg("prompt_tokens") = 0, py::arg("completion_tokens") = 0,
           py::arg("latency_seconds") = 0.0, py::arg("error") = "")
      .def_readwrite("text", &LlmResponse::text)
      .def_readwrite("model", &LlmResponse::model)
      .def_readwrite("prompt_tokens", &LlmResponse::prompt_tokens)
      .def_readwrite("completion_tokens", &LlmResponse::completion_tokens)
      .def_readwrite("latency_seconds", &LlmResponse::latency_seconds)
      .def_readwrite("error", &LlmResponse::error);

  py::class_<LlmClient, PyLlmClient, py::smart_holder>(
      m, "LlmClient",
      "The seam to any LLM. Subclass it and implement complete(messages, options) -> LlmResponse; "
      "kernelsmith.llm.as_llm_client wraps any callable instead.")
      .def(py::init<>())
      .def("complete", &LlmClient::complete, py::arg("messages"), py::arg("options") = LlmRequestOptions{},
           py::call_guard<py::gil_scoped_release>());

  py::class_<LlmMutatorOptions>(m, "LlmMutatorOptions")
      .def(py::init<>())
      .def_readwrite("full_weight", &LlmMutatorOptions::full_weight)
      .def_readwrite("diff_weight", &LlmMutatorOptions::diff_weight)
      .def_readwrite("crossover_weight", &LlmMutatorOptions::crossover_weight)
      .def_readwrite("seed", &LlmMutatorOptions::seed)
      .def_readwrite("proposals_per_request", &LlmMutatorOptions::proposals_per_request)
      .def_readwrite("request", &LlmMutatorOptions::request)
      .def_readwrite("prompt", &LlmMutatorOptions::prompt);

  // LlmMutator is a Mutator where the search's bindings registered that base (so the engine takes it).
  if (py::detail::get_type_info(typeid(Mutator))) {
    py::class_<LlmMutator, Mutator, py::smart_holder> cls(m, "LlmMutator");
    define_llm_mutator_methods(cls);
  } else {
    py::class_<LlmMutator, py::smart_holder> cls(m, "LlmMutator");
    define_llm_mutator_methods(cls);
  }
}

}  // namespace kernelsmith::python
