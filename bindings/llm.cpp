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
  void cancel() override { PYBIND11_OVERRIDE(void, LlmClient, cancel, ); }
};

constexpr const char* kLlmMutatorDoc =
    "The Mutator that asks a language model for a revision: picks an edit mode, builds the prompt, calls the "
    "LlmClient and parses the answer (docs/llm.md).";

template <typename Class>
void define_llm_mutator_methods(Class& cls) {
  cls.def(py::init<std::shared_ptr<LlmClient>, LlmMutatorOptions>(), py::arg("client"),
          py::arg("options") = LlmMutatorOptions{},
          "An LLM mutator over a client (an LlmClient; kernelsmith.llm.as_llm_client wraps any callable).")
      .def(py::init([](const py::object& client, LlmMutatorOptions options) {
             // A plain function is a model too (prompt -> text, or messages -> text): wrapped as an LlmClient
             // by the Python glue, which keeps it alive with the mutator.
             if (!PyCallable_Check(client.ptr())) {
               throw py::type_error(
                   "LlmMutator(client): a client is a kernelsmith.LlmClient or a callable (prompt -> text, or "
                   "messages -> text, sync or async; docs/llm.md); got " +
                   py::str(py::type::of(client).attr("__qualname__")).cast<std::string>());
             }
             const py::object wrapped = py::module_::import("kernelsmith.llm.glue").attr("as_llm_client")(client);
             return std::make_shared<LlmMutator>(wrapped.cast<std::shared_ptr<LlmClient>>(), std::move(options));
           }),
           py::arg("client"), py::arg("options") = LlmMutatorOptions{},
           "An LLM mutator over a plain callable: prompt -> text (its first parameter is named prompt or "
           "annotated str) or messages -> text (a list of {'role', 'content'}).")
      .def("propose", &LlmMutator::propose, py::arg("request"), py::call_guard<py::gil_scoped_release>(),
           "Proposals for a request: builds the prompt, calls the client, parses the answer.")
      .def("propose_with_mode", &LlmMutator::propose_with_mode, py::arg("request"), py::arg("mode"),
           py::arg("index") = 0, py::call_guard<py::gil_scoped_release>(),
           "Proposal number `index` of a request in a given EditMode; crossover without a second program falls "
           "back to a full rewrite.")
      .def("choose_mode", &LlmMutator::choose_mode, py::arg("request"), py::arg("index") = 0,
           "The EditMode proposal number `index` of this request gets (deterministic in the seeds).")
      .def("name", &LlmMutator::name)
      .def("cancel", &LlmMutator::cancel, py::call_guard<py::gil_scoped_release>(),
           "Passes a cancellation on to the client (LlmClient.cancel): its requests in flight give up soon.")
      .def_property_readonly("options", &LlmMutator::options, "The LlmMutatorOptions it was made with.")
      .def_property_readonly("client", &LlmMutator::client, "The LlmClient it calls.")
      .def_property_readonly("prompt_builder", &LlmMutator::prompt_builder, py::return_value_policy::reference_internal,
                             "The PromptBuilder made from options.prompt.");
}

}  // namespace

void bind_llm(py::module_& m) {
  py::class_<ChatMessage>(m, "ChatMessage", "One chat message: role ('system', 'user', 'assistant') and content.")
      .def(py::init<>())
      .def(py::init([](std::string role, std::string content) { return ChatMessage{std::move(role), std::move(content)}; }),
           py::arg("role"), py::arg("content"))
      .def_readwrite("role", &ChatMessage::role, "Who speaks: 'system', 'user' or 'assistant'.")
      .def_readwrite("content", &ChatMessage::content, "The message text.")
      .def("__repr__", [](const ChatMessage& message) {
        std::string preview = message.content.substr(0, 40);
        return "ChatMessage(role='" + message.role + "', content='" + preview +
               (message.content.size() > 40 ? "...')" : "')");
      });
  m.def("messages_to_json", &messages_to_json, py::arg("messages"),
        "The messages as a JSON array of {'role', 'content'} objects (what each step records).");
  m.def("messages_from_json", &messages_from_json, py::arg("json_text"), py::arg("origin") = "<messages>",
        "Reads such a JSON array back into ChatMessages; raises ValidationError naming `origin` on malformed input.");

  py::enum_<EditMode>(m, "EditMode", "What the LLM is asked for: a whole file, a SEARCH/REPLACE diff, a crossover.")
      .value("full", EditMode::full)
      .value("diff", EditMode::diff)
      .value("crossover", EditMode::crossover);
  m.def("parse_edit_mode", &parse_edit_mode, py::arg("name"),
        "The EditMode named 'full', 'diff' or 'crossover'; raises ValidationError otherwise.");
  m.def("mutation_name", &mutation_name, py::arg("mode"),
        "The lineage origin of a mode: 'llm_full', 'llm_diff' or 'llm_crossover'.");

  py::class_<PromptTemplates>(m, "PromptTemplates",
                              "The prompt's templates with {placeholders}; see docs/llm.md for each one's names.")
      .def(py::init(&PromptTemplates::defaults))
      .def_static("defaults", &PromptTemplates::defaults, "The built-in templates.")
      .def_readwrite("system", &PromptTemplates::system,
                     "The system message; placeholders {language}, {language_name}, {format_rules}.")
      .def_readwrite("user", &PromptTemplates::user,
                     "The user message; placeholders {task}, {reference}, {hardware}, {parent}, {attempts}, {skills}, "
                     "{experience}, {inspirations}, {instruction}, each a whole section or nothing.")
      .def_readwrite("task", &PromptTemplates::task,
                     "The task section: {name}, {description}, {tensors}, {sizes}, {work}, {tolerance}, {pytorch}.")
      .def_readwrite("reference", &PromptTemplates::reference, "The reference section: {source}.")
      .def_readwrite("hardware", &PromptTemplates::hardware, "The hardware section: {device}.")
      .def_readwrite("parent", &PromptTemplates::parent, "The parent section: {source}, {evaluation}, {id}.")
      .def_readwrite("attempts", &PromptTemplates::attempts,
                     "The recent attempts section: {attempts} (one line each, most recent first).")
      .def_readwrite("inspirations", &PromptTemplates::inspirations,
                     "The inspirations section: {top} and {diverse}, the rendered inspirations of each kind.")
      .def_readwrite("inspiration", &PromptTemplates::inspiration,
                     "One inspiration: {index}, {id}, {reason}, {metrics}, {source}.")
      .def_readwrite("second_parent", &PromptTemplates::second_parent,
                     "The second parent in crossover: {source}, {id}.")
      .def_readwrite("full_instruction", &PromptTemplates::full_instruction,
                     "The instruction for a whole-file rewrite (EditMode.full).")
      .def_readwrite("diff_instruction", &PromptTemplates::diff_instruction,
                     "The instruction for SEARCH/REPLACE blocks (EditMode.diff).")
      .def_readwrite("crossover_instruction", &PromptTemplates::crossover_instruction,
                     "The instruction for combining two parents (EditMode.crossover).")
      .def_readwrite("skills", &PromptTemplates::skills, "The skills section: {skills}, the rendered skills that apply.")
      .def_readwrite("skill", &PromptTemplates::skill,
                     "One skill: {name}, {title}, {when}, {advice}, {example} (the fenced example, or nothing).")
      .def_readwrite("experience", &PromptTemplates::experience,
                     "The experience section: {items}, one line per retrieved item.")
      .def_readwrite("skill_tag", &PromptTemplates::skill_tag,
                     "Follows every instruction: asks the model to name the skill it applied in a <skill>name</skill> "
                     "tag; empty: not asked.");
  m.def("candidate_format_rules", &candidate_format_rules, py::arg("language") = "cuda",
        "A concise statement of the candidate format's rules (docs/candidate-format.md) for the language ('cuda', "
        "'opencl', 'maca').");
  m.def("render_template", &render_template, py::arg("text"), py::arg("values"), py::arg("template_name") = "template",
        "Replaces {placeholders} in text with values, a list of (name, value) pairs; raises ValidationError naming "
        "template_name when a placeholder has no value.");

  py::class_<PromptBuilderOptions>(m, "PromptBuilderOptions",
                                   "Settings of the PromptBuilder: templates, token budget, device peaks and how much "
                                   "of each part to show.")
      .def(py::init<>())
      .def_readwrite("templates", &PromptBuilderOptions::templates, "The PromptTemplates.")
      .def_readwrite("max_prompt_tokens", &PromptBuilderOptions::max_prompt_tokens,
                     "Budget for the whole prompt in approximate tokens; 0 means no limit.")
      .def_readwrite("chars_per_token", &PromptBuilderOptions::chars_per_token,
                     "Tokens are estimated as characters / chars_per_token.")
      .def_readwrite("peak_bandwidth_gbps", &PromptBuilderOptions::peak_bandwidth_gbps,
                     "The device's peak memory bandwidth in GB/s, shown to the model; None when unknown.")
      .def_readwrite("peak_gflops", &PromptBuilderOptions::peak_gflops,
                     "The device's peak compute in GFLOP/s, shown to the model; None when unknown.")
      .def_readwrite("max_evaluation_chars", &PromptBuilderOptions::max_evaluation_chars,
                     "The parent's evaluation text is cut to this many characters (head and tail kept) before the "
                     "budget applies.")
      .def_readwrite("min_evaluation_chars", &PromptBuilderOptions::min_evaluation_chars,
                     "The budget trims the parent's evaluation text down to no fewer than this many characters.")
      .def_readwrite("max_attempts", &PromptBuilderOptions::max_attempts,
                     "At most this many recent attempts are shown.")
      .def_readwrite("max_inspirations", &PromptBuilderOptions::max_inspirations,
                     "At most this many inspirations are shown.")
      .def_readwrite("skills", &PromptBuilderOptions::skills,
                     "The SkillBank whose skills are shown when their predicates hold; None: the built-in bank; an "
                     "empty SkillBank() shows none.")
      .def_readwrite("max_skills", &PromptBuilderOptions::max_skills,
                     "At most this many skills are shown (the first that hold, in bank order).")
      .def_readwrite("max_experience", &PromptBuilderOptions::max_experience,
                     "At most this many retrieved experience items are shown.")
      .def_readwrite("skill_examples", &PromptBuilderOptions::skill_examples,
                     "Whether a skill shows its example in the language asked for.");

  py::class_<BuiltPrompt>(m, "BuiltPrompt", "The built prompt and what the token budget did to it.")
      .def_readonly("messages", &BuiltPrompt::messages, "The chat messages, a list of ChatMessage.")
      .def_readonly("mode", &BuiltPrompt::mode, "The EditMode the prompt asks for.")
      .def_readonly("estimated_tokens", &BuiltPrompt::estimated_tokens,
                    "Approximate tokens of all messages (characters / chars_per_token, rounded up).")
      .def_readonly("dropped", &BuiltPrompt::dropped,
                    "What the budget removed or trimmed, in order, e.g. 'reference source'.")
      .def_readonly("over_budget", &BuiltPrompt::over_budget,
                    "True when still over budget after every removable part was removed.")
      .def_readonly("skills", &BuiltPrompt::skills, "The names of the skills the prompt shows, in order.")
      .def_readonly("experience", &BuiltPrompt::experience, "The ids of the experience items the prompt shows.")
      .def("messages_json", &BuiltPrompt::messages_json, "The messages as a JSON array (messages_to_json).");

  py::class_<PromptBuilder>(m, "PromptBuilder",
                            "Turns a MutationRequest into the chat messages an LLM sees (docs/llm.md); raises "
                            "ValidationError when a template uses an unknown placeholder.")
      .def(py::init<PromptBuilderOptions>(), py::arg("options") = PromptBuilderOptions{})
      .def("build", &PromptBuilder::build, py::arg("request"), py::arg_v("mode", EditMode::full, "EditMode.full"),
           "The BuiltPrompt for one request in an EditMode; crossover needs request.second_parent (ValidationError "
           "otherwise).")
      .def_property_readonly("options", &PromptBuilder::options, "The PromptBuilderOptions it was made with.");

  py::class_<CodeBlock>(m, "CodeBlock", "One fenced code block of a markdown answer.")
      .def_readonly("language", &CodeBlock::language, "The fence's info string, lower-cased ('' for a bare fence).")
      .def_readonly("code", &CodeBlock::code, "The code inside the fence.")
      .def_readonly("closed", &CodeBlock::closed, "False when the answer ended inside the block.")
      .def_readonly("line", &CodeBlock::line, "1-based line of the opening fence.");
  py::class_<DiffBlock>(m, "DiffBlock", "One SEARCH/REPLACE block of a diff answer.")
      .def_readonly("search", &DiffBlock::search, "The text to find in the parent's source.")
      .def_readonly("replace", &DiffBlock::replace, "The text that replaces it.")
      .def_readonly("line", &DiffBlock::line, "1-based line of its '<<<<<<< SEARCH' marker.");
  py::class_<ParsedResponse>(m, "ParsedResponse",
                             "The program read from an LLM answer, or why there is none; truthy when ok.")
      .def_readonly("ok", &ParsedResponse::ok, "True when a program was read.")
      .def_readonly("source", &ParsedResponse::source,
                    "The program: the chosen code block, or the parent's source with the diff applied.")
      .def_readonly("failure", &ParsedResponse::failure,
                    "Why there is no program, e.g. 'no code in the response'; empty when ok.")
      .def_readonly("kind", &ParsedResponse::kind, "'full' (a whole file) or 'diff' (blocks applied).")
      .def_readonly("explanation", &ParsedResponse::explanation,
                    "The text before the code, usually the model's idea (at most 2000 characters).")
      .def_readonly("notes", &ParsedResponse::notes,
                    "How the answer was read, e.g. 'picked block 2 of 3 (has a kernel and @launch lines)'.")
      .def_readonly("skill", &ParsedResponse::skill,
                    "The skill the answer names in its <skill> tag; 'unspecified' when it names none.")
      .def("__bool__", [](const ParsedResponse& parsed) { return parsed.ok; })
      .def("__repr__", [](const ParsedResponse& parsed) {
        return parsed.ok ? "ParsedResponse(ok, kind='" + parsed.kind + "', " + std::to_string(parsed.source.size()) +
                               " characters)"
                         : "ParsedResponse(failure='" + parsed.failure + "')";
      });
  m.def("extract_code_blocks", &extract_code_blocks, py::arg("text"),
        "The fenced code blocks of a markdown text, in order, as CodeBlocks.");
  m.def("extract_diff_blocks", [](const std::string& text) { return extract_diff_blocks(text); }, py::arg("text"),
        "The complete SEARCH/REPLACE blocks of a text, as DiffBlocks (incomplete ones are left out).");
  m.def("parse_response", &parse_response, py::arg("text"), py::arg("mode"), py::arg("parent_source"),
        py::arg("language") = "",
        "Reads an LLM answer given in `mode` against the parent's source, in `language` when given (a block in a "
        "language whose plans are written otherwise is refused); see docs/llm.md.");
  m.def("parse_skill_tag", &parse_skill_tag, py::arg("text"),
        "The skill an answer names in its last <skill>name</skill> tag (lower-cased, spaces and hyphens made "
        "underscores); 'unspecified' when there is none or it is not a snake_case name.");
  m.def("parse_full_response", &parse_full_response, py::arg("text"), py::arg("parent_source") = "",
        py::arg("language") = "",
        "Reads a whole-file answer; a non-empty parent_source turns an unchanged copy into a failure; `language`, "
        "when given, refuses blocks in a language whose plans are written otherwise.");
  m.def("apply_diff_response", &apply_diff_response, py::arg("text"), py::arg("parent_source"),
        "Applies the SEARCH/REPLACE blocks of text to parent_source, in order (exact match first, then tolerant of "
        "whitespace).");

  py::class_<LlmRequestOptions>(m, "LlmRequestOptions", "What one request asks of the model.")
      .def(py::init<>())
      .def_readwrite("model", &LlmRequestOptions::model, "Model name; empty: the client's default.")
      .def_readwrite("temperature", &LlmRequestOptions::temperature, "Sampling temperature (default 0.8).")
      .def_readwrite("max_tokens", &LlmRequestOptions::max_tokens, "Most completion tokens; 0: the server's default.")
      .def_readwrite("timeout_seconds", &LlmRequestOptions::timeout_seconds,
                     "Longest the request may take, in seconds.")
      .def_readwrite("seed", &LlmRequestOptions::seed, "Sampling seed, passed on to servers that honour it.");

  py::class_<LlmResponse>(m, "LlmResponse", "The model's answer; a non-empty `error` means there is no usable answer.")
      .def(py::init<>())
      .def(py::init([](std::string text, std::string model, std::int64_t prompt_tokens, std::int64_t completion_tokens,
                       double latency_seconds, std::string error, std::vector<LlmAttempt> attempts) {
             return LlmResponse{std::move(text), std::move(model), prompt_tokens, completion_tokens, latency_seconds,
                                std::move(error), std::move(attempts)};
           }),
           py::arg("text") = "", py::arg("model") = "", py::arg("prompt_tokens") = 0, py::arg("completion_tokens") = 0,
           py::arg("latency_seconds") = 0.0, py::arg("error") = "", py::arg("attempts") = std::vector<LlmAttempt>{})
      .def_readwrite("text", &LlmResponse::text, "The answer text (may hold a partial answer when error is set).")
      .def_readwrite("model", &LlmResponse::model, "The model that answered, as the server names it.")
      .def_readwrite("prompt_tokens", &LlmResponse::prompt_tokens, "Prompt tokens the server reported.")
      .def_readwrite("completion_tokens", &LlmResponse::completion_tokens, "Completion tokens the server reported.")
      .def_readwrite("latency_seconds", &LlmResponse::latency_seconds, "Wall time of the request, in seconds.")
      .def_readwrite("error", &LlmResponse::error, "Why there is no usable answer; empty on success.")
      .def_readwrite("attempts", &LlmResponse::attempts,
                     "Each HTTP attempt of the request (retries included), a list of LlmAttempt.");

  py::class_<LlmClient, PyLlmClient, py::smart_holder>(
      m, "LlmClient",
      "The seam to any LLM. Subclass it and implement complete(messages, options) -> LlmResponse; "
      "kernelsmith.llm.as_llm_client wraps any callable instead.")
      .def(py::init<>())
      .def("complete", &LlmClient::complete, py::arg("messages"), py::arg("options") = LlmRequestOptions{},
           py::call_guard<py::gil_scoped_release>(),
           "The model's LlmResponse to the messages; called from several threads when several mutations are in "
           "flight. May raise: the mutator turns it into a failed proposal.")
      .def("cancel", &LlmClient::cancel, py::call_guard<py::gil_scoped_release>(),
           "Asks the requests in flight to give up soon (the engine's deadline); later requests are not affected. "
           "Default: nothing.");

  py::class_<LlmMutatorOptions>(m, "LlmMutatorOptions",
                                "Settings of the LlmMutator: edit-mode weights, seed, proposals per request, request "
                                "and prompt options.")
      .def(py::init<>())
      .def_readwrite("full_weight", &LlmMutatorOptions::full_weight,
                     "Relative weight of whole-file rewrites (the weights are normalised).")
      .def_readwrite("diff_weight", &LlmMutatorOptions::diff_weight, "Relative weight of SEARCH/REPLACE diffs.")
      .def_readwrite("crossover_weight", &LlmMutatorOptions::crossover_weight,
                     "Relative weight of crossovers (counts only when a second program is available).")
      .def_readwrite("seed", &LlmMutatorOptions::seed,
                     "Mixed with each request's seed: the same seeds give the same modes.")
      .def_readwrite("proposals_per_request", &LlmMutatorOptions::proposals_per_request,
                     "Proposals per request (each its own call to the client).")
      .def_readwrite("request", &LlmMutatorOptions::request, "The LlmRequestOptions of each call.")
      .def_readwrite("prompt", &LlmMutatorOptions::prompt, "The PromptBuilderOptions.");

  // LlmMutator is a Mutator where the search's bindings registered that base (so the engine takes it).
  if (py::detail::get_type_info(typeid(Mutator))) {
    py::class_<LlmMutator, Mutator, py::smart_holder> cls(m, "LlmMutator", kLlmMutatorDoc);
    define_llm_mutator_methods(cls);
  } else {
    py::class_<LlmMutator, py::smart_holder> cls(m, "LlmMutator", kLlmMutatorDoc);
    define_llm_mutator_methods(cls);
  }
}

}  // namespace kernelsmith::python
