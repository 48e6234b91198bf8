#include "cuda/nvrtc_compile.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <regex>

#include "cuda/nvrtc_api.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// The name NVRTC gives the source in its messages: "candidate.cu(12): error: ...".
constexpr const char* kProgramName = "candidate.cu";

// Owns an nvrtcProgram; destroying it never throws.
class Program {
 public:
  Program(const NvrtcApi& api, const std::string& source) : api_(api) {
    KERNELSMITH_NVRTC_CALL(api_.nvrtcCreateProgram(&program_, source.c_str(), kProgramName, 0, nullptr, nullptr));
  }
  ~Program() {
    if (program_ != nullptr) static_cast<void>(api_.nvrtcDestroyProgram(&program_));
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_ = nullptr;
};

// The flow callback's payload: NVRTC asks it, many times per compile and from the compiling thread,
// whether to go on. Once it says stop, it must keep saying stop.
struct Deadline {
  Clock::time_point at;
  std::atomic<bool> passed{false};
};

int cancel_after_deadline(void* payload, void* /*reserved*/) {
  auto* deadline = static_cast<Deadline*>(payload);
  if (deadline->passed.load(std::memory_order_relaxed)) return 1;
  if (Clock::now() < deadline->at) return 0;
  deadline->passed.store(true, std::memory_order_relaxed);
  return 1;
}

// The regular expressions below are allocated once and never destroyed: no static destructor of this
// library runs at exit (see driver() in driver_api.cpp for why).
bool is_identifier(const std::string& text) {
  static const std::regex& identifier = *new std::regex("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(text, identifier);
}

// The source without comments, so that names in the launch plan's `// @launch` lines do not count as
// uses in the code. String and character literals are kept as they are.
std::string strip_comments(const std::string& source) {
  std::string code;
  code.reserve(source.size());
  for (std::size_t i = 0; i < source.size();) {
    const char c = source[i];
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      while (i < source.size() && source[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const auto end = source.find("*/", i + 2);
      i = end == std::string::npos ? source.size() : end + 2;
      code += ' ';
    } else if (c == '"' || c == '\'') {
      code += source[i++];
      while (i < source.size() && source[i] != c && source[i] != '\n') {
        if (source[i] == '\\' && i + 1 < source.size()) code += source[i++];
        code += source[i++];
      }
      if (i < source.size()) code += source[i++];
    } else {
      code += source[i++];
    }
  }
  return code;
}

// The identifier a plan's kernel name starts with: "gemm<128, 4>" → "gemm", "ns::k" → "k".
std::string base_identifier(const std::string& kernel) {
  std::string base = kernel.substr(0, kernel.find('<'));
  if (const auto scope = base.rfind("::"); scope != std::string::npos) base = base.substr(scope + 2);
  base.erase(std::remove_if(base.begin(), base.end(), [](unsigned char ch) { return std::isspace(ch); }),
             base.end());
  return base;
}

bool code_mentions(const std::string& code, const std::string& identifier) {
  for (auto at = code.find(identifier); at != std::string::npos; at = code.find(identifier, at + 1)) {
    const auto is_word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
    const bool starts = at == 0 || !is_word(code[at - 1]);
    const auto after = at + identifier.size();
    const bool ends = after >= code.size() || !is_word(code[after]);
    if (starts && ends) return true;
  }
  return false;
}

// Kernels of the plan that the code defines and that NVRTC should resolve to their symbols. A name the
// code never mentions is left out: the backend then reports it as an unknown kernel at load time,
// which is clearer than NVRTC's error about its internal name map.
std::vector<std::string> name_expressions(const std::string& source, const std::vector<std::string>& kernels) {
  const std::string code = strip_comments(source);
  std::vector<std::string> names;
  for (const auto& kernel : kernels) {
    if (kernel.empty() || std::find(names.begin(), names.end(), kernel) != names.end()) continue;
    const std::string base = base_identifier(kernel);
    if (!is_identifier(base) || !code_mentions(code, base)) continue;
    names.push_back(kernel);
  }
  return names;
}

struct Target {
  int compute_capability = 0;  // 90 for sm_90 and sm_90a
  std::string name;
};

Target parse_target(const std::string& target, const NvrtcApi& api) {
  static const std::regex& pattern = *new std::regex("sm_([0-9]{2,3})([af]?)");
  std::smatch match;
  if (!std::regex_match(target, match, pattern)) {
    throw ValidationError(fmt::format(
        "CUDA compile target '{}' is not valid: expected sm_<major><minor> with an optional a or f "
        "suffix, e.g. \"sm_90\" or \"sm_90a\"",
        target));
  }
  const int capability = std::stoi(match[1].str());
  const auto& supported = api.supported_architectures;
  if (!supported.empty() && std::find(supported.begin(), supported.end(), capability) == supported.end()) {
    std::vector<std::string> names;
    for (int arch : supported) names.push_back(fmt::format("sm_{}", arch));
    throw ValidationError(fmt::format("{} cannot compile for {}: it supports {}; use one of those targets "
                                      "or point KERNELSMITH_NVRTC_LIBRARY at another CUDA toolkit's NVRTC",
                                      api.description(), target, fmt::join(names, ", ")));
  }
  return {capability, target};
}

void validate_define(const std::string& name) {
  if (!is_identifier(name)) {
    throw ValidationError(fmt::format(
        "compile define '{}' is not a valid macro name: expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)", name));
  }
}

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // the terminating NUL
  return log;
}

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> readable(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                  std::free);
  return status == 0 && readable ? std::string(readable.get()) : symbol;
}

}  // namespace

std::string toolkit_include_directory() {
  static std::once_flag once;
  // Never destroyed, like every process-wide object of this backend (see driver() in driver_api.cpp).
  static std::string& directory = *new std::string;
  std::call_once(once, [] {
    std::vector<std::filesystem::path> candidates;
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* root = std::getenv(variable); root != nullptr && *root != '\0') {
        candidates.emplace_back(std::filesystem::path(root) / "include");
      }
    }
    try {
      // <toolkit>/lib64/libnvrtc.so.13 → <toolkit>/include
      const std::filesystem::path library = nvrtc().library;
      if (library.has_parent_path()) candidates.push_back(library.parent_path().parent_path() / "include");
    } catch (const std::exception&) {
      // No NVRTC: nothing to compile with anyway.
    }
    candidates.emplace_back("/usr/local/cuda/include");
    for (const auto& candidate : candidates) {
      std::error_code error;
      if (std::filesystem::exists(candidate / "cuda_fp16.h", error)) {
        directory = std::filesystem::canonical(candidate, error).string();
        if (error) directory = candidate.string();
        return;
      }
    }
  });
  return directory;
}

std::vector<KernelResources> parse_ptxas_resources(
    const std::string& log, const std::vector<std::pair<std::string, std::string>>& symbol_to_name) {
  static const std::regex& entry_line = *new std::regex(R"(Compiling entry function '([^']+)')");
  static const std::regex& properties_line = *new std::regex(R"(Function properties for (\S+))");
  static const std::regex& frame_line = *new std::regex(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex& registers_field = *new std::regex(R"(Used (\d+) registers)");
  static const std::regex& shared_field = *new std::regex(R"((\d+) bytes smem)");
  static const std::regex& cumulative_stack_field = *new std::regex(R"((\d+) bytes cumulative stack size)");

  std::vector<KernelResources> kernels;
  std::vector<std::string> symbols;  // parallel to kernels
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  auto find_kernel = [&](const std::string& symbol) {
    const auto at = std::find(symbols.begin(), symbols.end(), symbol);
    return at == symbols.end() ? none : static_cast<std::size_t>(at - symbols.begin());
  };

  std::size_t entry = none;       // the kernel whose "Used ..." line comes next
  std::size_t properties = none;  // the kernel a "stack frame" line describes (none: a device function)
  std::size_t start = 0;
  while (start < log.size()) {
    auto end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(start, end - start);
    start = end + 1;
    std::smatch match;
    if (std::regex_search(line, match, entry_line)) {
      const std::string symbol = match[1].str();
      entry = find_kernel(symbol);
      if (entry == none) {
        KernelResources resources;
        resources.name = symbol;
        for (const auto& [mangled, name] : symbol_to_name) {
          if (mangled == symbol) resources.name = name;
        }
        if (resources.name == symbol && symbol.rfind("_Z", 0) == 0) resources.name = demangle(symbol);
        resources.registers = 0;
        resources.spill_store_bytes = 0;
        resources.spill_load_bytes = 0;
        resources.stack_bytes = 0;
        resources.shared_bytes = 0;
        entry = kernels.size();
        kernels.push_back(resources);
        symbols.push_back(symbol);
      }
      properties = none;
    } else if (std::regex_search(line, match, properties_line)) {
      properties = find_kernel(match[1].str());
    } else if (std::regex_search(line, match, frame_line)) {
      if (properties != none) {
        kernels[properties].stack_bytes = std::stoll(match[1].str());
        kernels[properties].spill_store_bytes = std::stoll(match[2].str());
        kernels[properties].spill_load_bytes = std::stoll(match[3].str());
      }
    } else if (std::regex_search(line, match, registers_field)) {
      if (entry != none) {
        KernelResources& kernel = kernels[entry];
        kernel.registers = std::stoi(match[1].str());
        if (std::regex_search(line, match, shared_field)) kernel.shared_bytes = std::stoll(match[1].str());
        if (std::regex_search(line, match, cumulative_stack_field)) {
          kernel.stack_bytes = std::max<std::int64_t>(kernel.stack_bytes, std::stoll(match[1].str()));
        }
      }
    }
  }
  return kernels;
}

CompiledProgram compile_with_nvrtc(const std::string& source, const CompileOptions& options,
                                   const std::string& target_name) {
  const NvrtcApi& api = nvrtc();
  const Target target = parse_target(target_name, api);

  std::vector<std::string> arguments = {
      "--gpu-architecture=" + target.name,  // a real architecture, so that nvrtcGetCUBIN has SASS
      "--std=c++17",
      "--ptxas-options=-v",  // registers, spills, stack and shared memory per kernel, in the log
  };
  // NVRTC 13 keeps compiled programs in the driver's compute cache (~/.nv/ComputeCache) where a driver
  // is installed, and a program served from there comes with an empty log: no ptxas report, so no
  // per-kernel resources (seen on an H200 with NVRTC 13.0 and driver 580). The evaluator caches
  // compiled programs itself, keyed by source and options, so NVRTC's cache is turned off.
  if (api.version_major >= 13) arguments.emplace_back("--no-cache");
  if (const std::string include = toolkit_include_directory(); !include.empty()) {
    arguments.push_back("--include-path=" + include);
    // CUDA 13 keeps libcu++ and CUB under include/cccl.
    if (std::filesystem::exists(std::filesystem::path(include) / "cccl")) {
      arguments.push_back("--include-path=" + (std::filesystem::path(include) / "cccl").string());
    }
  }
  for (const auto& [name, value] : options.defines) {
    validate_define(name);
    arguments.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  }
  std::vector<const char*> argv;
  argv.reserve(arguments.size());
  for (const auto& argument : arguments) argv.push_back(argument.c_str());

  const auto started = Clock::now();
  Program program(api, source);
  const std::vector<std::string> names = name_expressions(source, options.kernels);
  for (const auto& name : names) {
    KERNELSMITH_NVRTC_CALL(api.nvrtcAddNameExpression(program.get(), name.c_str()));
  }

  // The compile timeout: NVRTC asks the flow callback whether to go on and stops when told to. Without
  // the callback (NVRTC older than 12.8) a compile cannot be interrupted; the evaluator runs compiles
  // on worker threads and can stop waiting for one, but the thread runs on until NVRTC returns.
  Deadline deadline;
  const bool has_deadline = options.timeout_seconds > 0 && api.nvrtcSetFlowCallback != nullptr;
  if (has_deadline) {
    deadline.at = started + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(options.timeout_seconds));
    KERNELSMITH_NVRTC_CALL(api.nvrtcSetFlowCallback(program.get(), &cancel_after_deadline, &deadline));
  }

  const nvrtcResult result = api.nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());

  CompiledProgram compiled;
  compiled.language = "cuda";
  compiled.target = target.name;
  compiled.report.target = target.name;
  compiled.report.log = program_log(api, program.get());

  switch (result) {
    case NVRTC_SUCCESS:
      break;
    case NVRTC_ERROR_COMPILATION:
      compiled.report.ok = false;
      compiled.report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      return compiled;
    case NVRTC_ERROR_CANCELLED:
      compiled.report.ok = false;
      compiled.report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
      compiled.report.log += fmt::format(
          "{}compilation cancelled: it ran past the compile timeout of {:g} s (simplify the source: "
          "fewer template instantiations or unrolled loops)\n",
          compiled.report.log.empty() || compiled.report.log.back() == '\n' ? "" : "\n", options.timeout_seconds);
      return compiled;
    case NVRTC_ERROR_INVALID_OPTION:
      throw ValidationError(fmt::format("{} rejected the compile options [{}]: {}", api.description(),
                                        fmt::join(arguments, " "), compiled.report.log));
    case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE:
      throw BackendUnavailableError(fmt::format(
          "{} could not load its builtins library (libnvrtc-builtins): put the toolkit's lib64 folder on "
          "LD_LIBRARY_PATH or point KERNELSMITH_NVRTC_LIBRARY at a complete toolkit; log: {}",
          api.description(), compiled.report.log));
    default:
      throw_nvrtc_error(result, "nvrtcCompileProgram", __FILE__, __LINE__);
  }

  std::size_t cubin_size = 0;
  KERNELSMITH_NVRTC_CALL(api.nvrtcGetCUBINSize(program.get(), &cubin_size));
  compiled.binary.resize(cubin_size);
  KERNELSMITH_NVRTC_CALL(api.nvrtcGetCUBIN(program.get(), reinterpret_cast<char*>(compiled.binary.data())));

  std::vector<std::pair<std::string, std::string>> symbol_to_name;
  for (const auto& name : names) {
    const char* lowered = nullptr;
    KERNELSMITH_NVRTC_CALL(api.nvrtcGetLoweredName(program.get(), name.c_str(), &lowered));
    if (lowered == nullptr) continue;
    symbol_to_name.emplace_back(lowered, name);
    if (name != lowered) compiled.symbols.emplace(name, lowered);
  }
  compiled.report.kernels = parse_ptxas_resources(compiled.report.log, symbol_to_name);
  compiled.report.ok = true;
  compiled.report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return compiled;
}

}  // namespace kernelsmith::detail::cuda
