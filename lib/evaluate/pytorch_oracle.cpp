#include "evaluate/pytorch_oracle.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>

#include "detail/bulk_file.hpp"
#include "detail/python_helper.hpp"
#include "json_codec.hpp"
#include "kernelsmith/sandbox.hpp"

namespace kernelsmith::detail {
namespace {

namespace fs = std::filesystem;

std::atomic<std::int64_t>& request_counter() {
  static std::atomic<std::int64_t> counter{0};
  return counter;
}

Bytes read_file_bytes(const std::string& path, std::size_t expected, const std::string& tensor) {
  std::error_code error;
  const std::uintmax_t size = fs::file_size(path, error);
  if (error) {
    throw OracleFailure("outputs", fmt::format("the oracle wrote no file for output {} ({})", tensor, error.message()));
  }
  if (size != expected) {
    throw OracleFailure("outputs", fmt::format("the oracle's file for output {} holds {} bytes, not the {} its dtype "
                                               "and shape take",
                                               tensor, size, expected));
  }
  Bytes bytes(expected);
  std::string why;
  if (!read_bulk_file(path, bytes.data(), expected, why)) {
    throw OracleFailure("outputs", fmt::format("cannot read the oracle's output {}: {}", tensor, why));
  }
  return bytes;
}

/// A private folder (mode 0700: the tensors are the caller's data) named after this process, so that a later
/// process can tell a folder left behind by one that was killed. Empty where it cannot be made.
std::string make_private_folder(const fs::path& parent) {
  const std::string pattern = (parent / fmt::format("kernelsmith-oracle-{}-XXXXXX", ::getpid())).string();
  std::vector<char> folder(pattern.begin(), pattern.end());
  folder.push_back('\0');
  return ::mkdtemp(folder.data()) != nullptr ? std::string(folder.data()) : std::string();
}

/// Removes the folders under `parent` that processes no longer running left there (killed in the middle of
/// a request): in shared memory they would hold their gigabytes until the machine restarts.
void remove_abandoned_folders(const fs::path& parent) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "kernelsmith-oracle-";
    if (name.rfind(prefix, 0) != 0) continue;
    const std::size_t dash = name.find('-', prefix.size());
    if (dash == std::string::npos) continue;  // the older naming, without a process id
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (end != name.c_str() + dash || pid <= 0) continue;
    struct stat info {};
    if (::stat(entry.path().c_str(), &info) != 0 || info.st_uid != ::getuid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    fs::remove_all(entry.path(), error);
  }
}

std::size_t tensor_bytes(const OracleTensor& tensor) {
  std::size_t count = 1;
  for (const std::int64_t extent : tensor.shape) count *= static_cast<std::size_t>(extent);
  return count * dtype_size(tensor.dtype);
}

/// Bytes of the buffers of one input set (a missing buffer: none).
std::uintmax_t set_bytes(const std::vector<const Bytes*>& buffers) {
  std::uintmax_t total = 0;
  for (const Bytes* buffer : buffers) total += buffer != nullptr ? buffer->size() : 0;
  return total;
}

/// Bytes free in the file system holding `folder`; 0 where that cannot be told.
std::uintmax_t free_bytes(const std::string& folder) {
  struct statvfs info {};
  if (::statvfs(folder.c_str(), &info) != 0) return 0;
  return static_cast<std::uintmax_t>(info.f_bavail) * info.f_frsize;
}

/// The memory the kernel says is available without swapping (MemAvailable); 0 where that cannot be told.
std::uintmax_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uintmax_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// The folders of the live clients: the oracle helper runs confined, and these are the ones it may write
// besides its own (docs/security.md). A helper started for another set is not reused (PythonHelperPool).
std::mutex& exchange_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<std::string>& exchange_folders_in_use() {
  static auto* folders = new std::set<std::string>();  // clients may outlive static destruction
  return *folders;
}

void register_exchange_folder(const std::string& folder) {
  if (folder.empty()) return;
  std::lock_guard<std::mutex> lock(exchange_mutex());
  exchange_folders_in_use().insert(folder);
}

void unregister_exchange_folder(const std::string& folder) {
  std::lock_guard<std::mutex> lock(exchange_mutex());
  exchange_folders_in_use().erase(folder);
}

std::vector<std::string> exchange_folders() {
  std::lock_guard<std::mutex> lock(exchange_mutex());
  return {exchange_folders_in_use().begin(), exchange_folders_in_use().end()};
}

// The shared cache of extension builds the last for_candidate() used: what the builder may write and the runner
// read (a helper kind's folders are asked through plain functions).
std::mutex& extension_cache_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::string& current_extension_cache() {
  static std::string folder;
  return folder;
}

std::vector<std::string> extension_cache_folders() {
  std::lock_guard<std::mutex> lock(extension_cache_mutex());
  if (current_extension_cache().empty()) return {};
  return {current_extension_cache()};
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (!in) return text;
  text.resize(1 << 16);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

const PythonHelperKind& extension_builder_kind() {
  static const PythonHelperKind kind{"extension_build.py", "KERNELSMITH_EXTENSION_BUILDER", "the extension builder",
                                     "building a ModelNew candidate's torch extensions", 1, extension_cache_folders};
  return kind;
}

std::string extension_cache_folder(const std::string& cache_dir, std::string* why_off) {
  auto off = [&](std::string why) {
    if (why_off != nullptr) *why_off = std::move(why);
    return std::string();
  };
  if (cache_dir.empty()) return off("the evaluator has no disk cache");
  const SandboxStatus sandbox = sandbox_status();
  if (!sandbox.enabled) return off(fmt::format("the sandbox is off ({})", sandbox.reason));
  for (const SandboxProtection& protection : sandbox.protections) {
    if (protection.name == "filesystem" && !protection.on) {
      return off(fmt::format("the sandbox's filesystem protection is off ({})", protection.detail));
    }
  }
  const fs::path folder = fs::path(cache_dir) / "torch-extensions";
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return off(fmt::format("cannot create {}: {}", folder.string(), error.message()));
  return folder.string();
}

std::string prebuild_extensions(const std::string& source, const std::string& extension_cache,
                                double timeout_seconds) {
  if (extension_cache.empty() || source.find("cpp_extension") == std::string::npos) return {};
  {
    std::lock_guard<std::mutex> lock(extension_cache_mutex());
    current_extension_cache() = extension_cache;
  }
  std::string log;
  try {
    const Json reply = ask_python_helper(extension_builder_kind(),
                                         {{"op", "prepare"}, {"cache", extension_cache}, {"source", source}},
                                         timeout_seconds);
    if (json_value_or<bool>(reply, "ok", false)) {
      for (const auto& line : reply.value("log", Json::array())) {
        if (line.is_string()) log += "builder: " + line.get<std::string>() + "\n";
      }
    } else {
      log += "builder: " + json_value_or<std::string>(reply, "message", "failed") + "\n";
    }
  } catch (const std::exception& e) {
    log += fmt::format("builder: {} (the runner builds the extensions itself)\n", e.what());
  }
  return log;
}

const PythonHelperKind& oracle_helper_kind() {
  // One idle helper is kept: it holds the built models (and torch, several hundred MB) between requests.
  static const PythonHelperKind kind{"pytorch_oracle.py", "KERNELSMITH_ORACLE_HELPER", "the PyTorch oracle helper",
                                     "computing expected outputs or timing a baseline", 1, exchange_folders};
  return kind;
}

const PythonHelperKind& model_new_runner_kind() {
  static const PythonHelperKind kind{"pytorch_oracle.py", "KERNELSMITH_ORACLE_HELPER", "the ModelNew runner",
                                     "running a ModelNew candidate", 0, nullptr, extension_cache_folders};
  return kind;
}

namespace {

// One ModelNew runner started ahead, on a GPU device, while the previous candidate runs: a fresh process that has
// imported torch (and triton) but has run no candidate's code and touched no device. A candidate then waits
// for its own runner only as long as that start has still to go (docs/kernelbench-modelnew.md, "Builds").
// Not on a CPU device: the start's imports would share the CPU with the candidate being timed.
class SpareModelNewRunner {
 public:
  static SpareModelNewRunner& instance() {
    static auto* spare = new SpareModelNewRunner();  // ends with the process, as the helper pools do
    return *spare;
  }

  /// The spare when it was started for `device` and the current settings (interpreter, script, build
  /// cache), else null; a spare of other settings is ended.
  std::unique_ptr<PythonHelper> take(const std::string& device) {
    std::future<std::unique_ptr<PythonHelper>> started;
    std::string key;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      started = std::move(next_);
      key = std::move(key_);
    }
    if (!started.valid()) return nullptr;
    std::unique_ptr<PythonHelper> helper = started.get();  // null when its start failed
    if (key != settings_key(device)) return nullptr;
    return helper;
  }

  /// Starts the next spare for `device` in the background (GPU devices only).
  void start(const std::string& device) {
    if (device.rfind("cuda", 0) != 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (next_.valid()) return;
    key_ = settings_key(device);
    next_ = std::async(std::launch::async, []() -> std::unique_ptr<PythonHelper> {
      try {
        auto helper = std::make_unique<PythonHelper>(model_new_runner_kind());
        const Json reply = helper->round_trip({{"op", "warm_up"}, {"triton", true}}, 300.0);
        if (!json_value_or<bool>(reply, "ok", false)) return nullptr;
        return helper;
      } catch (const std::exception&) {
        return nullptr;  // the candidate starts a runner of its own, which reports the failure
      }
    });
  }

 private:
  static std::string settings_key(const std::string& device) {
    const std::vector<std::string> readable = extension_cache_folders();
    return device + "\n" + helper_python_text() + "\n" + (readable.empty() ? std::string() : readable.front());
  }

  std::mutex mutex_;
  std::string key_;
  std::future<std::unique_ptr<PythonHelper>> next_;
};

}  // namespace

std::int64_t oracle_requests_sent() { return request_counter().load(); }

PytorchOracleClient::PytorchOracleClient(std::string device, double timeout_seconds)
    : device_(std::move(device)), timeout_seconds_(timeout_seconds) {
  disk_folder_ = make_private_folder(fs::temp_directory_path());
  if (disk_folder_.empty()) {
    throw Error(fmt::format("cannot create a folder for the PyTorch oracle's tensors under {}: {}",
                            fs::temp_directory_path().string(), std::strerror(errno)));
  }
  // Shared memory where the machine has it: a case of a KernelBench problem moves gigabytes each way, which a
  // disk-backed temporary folder would also write back to the disk.
  const char* shared = std::getenv("KERNELSMITH_ORACLE_SHM");
  const fs::path shared_parent = shared != nullptr ? fs::path(shared) : fs::path("/dev/shm");
  std::error_code error;
  if (!shared_parent.empty() && fs::is_directory(shared_parent, error)) {
    remove_abandoned_folders(shared_parent);
    shared_folder_ = make_private_folder(shared_parent);
  }
  folder_ = disk_folder_;
  register_exchange_folder(disk_folder_);
  register_exchange_folder(shared_folder_);
}

PytorchOracleClient::PytorchOracleClient(std::string device, double timeout_seconds,
                                         std::unique_ptr<PythonHelper> own_helper)
    : own_helper_(std::move(own_helper)), dedicated_(true), device_(std::move(device)), timeout_seconds_(timeout_seconds) {
  disk_folder_ = own_helper_->folder();
  folder_ = disk_folder_;
}

std::unique_ptr<PytorchOracleClient> PytorchOracleClient::for_candidate(std::string device, double timeout_seconds,
                                                                       const std::string& source,
                                                                       const std::string& extension_cache,
                                                                       double build_seconds) {
  // The builder runs first, in a process of its own that runs none of the candidate's code; the runner then
  // reads what it built (docs/kernelbench-modelnew.md, "Builds").
  std::string builder_log =
      prebuild_extensions(source, extension_cache, build_seconds > 0.0 ? build_seconds : timeout_seconds);
  if (!extension_cache.empty()) {
    std::lock_guard<std::mutex> lock(extension_cache_mutex());
    current_extension_cache() = extension_cache;
  }
  const auto waiting = std::chrono::steady_clock::now();
  std::unique_ptr<PythonHelper> helper = SpareModelNewRunner::instance().take(device);
  const bool started_ahead = helper != nullptr;
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting).count();
  if (!helper) {
    try {
      helper = std::make_unique<PythonHelper>(model_new_runner_kind());
    } catch (const std::exception& e) {
      throw OracleFailure("helper", e.what());
    }
  }
  SpareModelNewRunner::instance().start(device);  // the next candidate's, while this one runs
  if (!extension_cache.empty()) {
    // Read by the runner before the candidate's file runs; the runner could rewrite it, which only changes
    // where its own builds look.
    std::ofstream settings(fs::path(helper->folder()) / "extension_cache.json");
    settings << Json{{"cache", extension_cache}}.dump();
  }
  auto client = std::unique_ptr<PytorchOracleClient>(
      new PytorchOracleClient(std::move(device), timeout_seconds, std::move(helper)));
  client->builder_log_ = std::move(builder_log);
  client->account_.started_ahead = started_ahead;
  client->account_.waited_seconds = started_ahead ? waited : 0.0;
  return client;
}

std::string PytorchOracleClient::build_log() const {
  std::string log = builder_log_;
  if (dedicated_) {
    log += account_.started_ahead
               ? fmt::format("runner: started ahead (waited {:.2f} s for its imports)", account_.waited_seconds)
               : std::string("runner: started for this candidate");
    if (account_.requests > 0) {
      log += fmt::format("; {} request(s) in {:.2f} s (the first {:.2f} s), {:.2f} s of it in its handlers, by the end of the checks",
                         account_.requests, account_.round_trip_seconds, account_.first_seconds,
                         account_.handled_seconds);
    }
    log += "\n";
  }
  if (!own_helper_) return log;
  const std::string report = read_small_file((fs::path(own_helper_->folder()) / "extension_builds.json").string());
  if (report.empty()) return log;
  try {
    for (const auto& build : Json::parse(report)) {
      const std::string name = json_value_or<std::string>(build, "name", "?");
      if (json_value_or<bool>(build, "failed", false)) {
        log += fmt::format("runner: extension {}: the builder's build of this call failed (its error above)\n", name);
      } else if (json_value_or<bool>(build, "prebuilt", false)) {
        log += fmt::format("runner: extension {} loaded prebuilt from the cache\n", name);
      } else {
        log += fmt::format("runner: extension {} built by the runner ({}), {} the precompiled header\n", name,
                           json_value_or<std::string>(build, "how", "load_inline"),
                           json_value_or<bool>(build, "header", false) ? "with" : "without");
      }
    }
  } catch (const std::exception&) {
    log += "runner: its account of its builds is not JSON\n";
  }
  return log;
}

PytorchOracleClient::~PytorchOracleClient() {
  if (dedicated_) {
    remove_files();
    own_helper_.reset();  // ends the helper and removes its folder
    return;
  }
  unregister_exchange_folder(disk_folder_);
  unregister_exchange_folder(shared_folder_);
  std::error_code error;
  fs::remove_all(disk_folder_, error);
  if (!shared_folder_.empty()) fs::remove_all(shared_folder_, error);
}

void PytorchOracleClient::choose_folder(std::uintmax_t request_bytes) {
  // Shared memory is the machine's memory, which the evaluation needs too (the cases, their copies on the
  // helper's side): a request takes it only where it fits and stays under half of the memory available.
  folder_ = disk_folder_;
  if (shared_folder_.empty()) return;
  if (request_bytes <= free_bytes(shared_folder_) && request_bytes <= available_memory_bytes() / 2) {
    folder_ = shared_folder_;
  }
}

double PytorchOracleClient::take_seconds() {
  const double seconds = seconds_;
  seconds_ = 0.0;
  return seconds;
}

Json PytorchOracleClient::request(const Json& body) {
  const auto started = std::chrono::steady_clock::now();
  ++request_counter();
  try {
    if (dedicated_ && !own_helper_) throw Error("the ModelNew runner ended at an earlier request");
    Json reply = dedicated_ ? own_helper_->round_trip(body, timeout_seconds_)
                            : ask_python_helper(oracle_helper_kind(), body, timeout_seconds_);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    seconds_ += took;
    if (dedicated_) {
      if (account_.requests++ == 0) account_.first_seconds = took;
      account_.round_trip_seconds += took;
      account_.handled_seconds += json_value_or<double>(reply, "handled_seconds", 0.0);
    }
    last_reply_ = reply;
    return reply;
  } catch (const std::exception& e) {
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    remove_files();
    if (dedicated_) own_helper_.reset();  // it died or overran its deadline: finished
    throw OracleFailure("helper", e.what());
  }
}

const OracleVersion& PytorchOracleClient::version() {
  if (version_) return *version_;
  const Json reply = request({{"op", "version"}, {"device", device_}});
  OracleVersion version;
  version.python = json_value_or<std::string>(reply, "python", helper_python_text());
  if (!json_value_or<bool>(reply, "ok", false)) {
    // The device is not usable (a CPU-only torch asked for cuda:0): torch is there, the device is not.
    throw OracleFailure(json_value_or<std::string>(reply, "stage", "device"),
                        json_value_or<std::string>(reply, "message", "the oracle helper refused the device"));
  }
  version.available = json_value_or<bool>(reply, "available", false);
  version.reason = json_value_or<std::string>(reply, "reason", "");
  version.torch = json_value_or<std::string>(reply, "torch", "");
  version.device_name = json_value_or<std::string>(reply, "device_name", device_);
  version_ = version;
  return *version_;
}

Json PytorchOracleClient::write_tensors(const std::string& prefix, const std::vector<OracleTensor>& specs,
                                        const std::vector<const Bytes*>& data) {
  Json tensors = Json::array();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string path = (fs::path(folder_) / fmt::format("{}{}.bin", prefix, i)).string();
    if (i < data.size() && data[i] != nullptr) {
      std::string why;
      if (!write_bulk_file(path, data[i]->data(), data[i]->size(), why)) {
        remove_files();
        throw OracleFailure("helper", fmt::format("cannot write tensor {} for the PyTorch oracle: {} (is the "
                                                  "temporary folder's disk full?)",
                                                  specs[i].name, why));
      }
    }
    files_.push_back(path);
    tensors.push_back({{"name", specs[i].name}, {"dtype", to_string(specs[i].dtype)}, {"shape", specs[i].shape},
                       {"path", path}});
  }
  return tensors;
}

void PytorchOracleClient::remove_files() {
  for (const auto& path : files_) ::unlink(path.c_str());
  files_.clear();
}

std::vector<Bytes> PytorchOracleClient::outputs(const Json& problem, const std::string& task_key,
                                                const std::string& config, const std::vector<OracleTensor>& input_specs,
                                                const std::vector<const Bytes*>& inputs,
                                                const std::vector<OracleTensor>& output_specs) {
  Json body = {{"op", "outputs"}, {"task_key", task_key}, {"problem", problem}, {"config", config}, {"device", device_}};
  std::uintmax_t request_bytes = set_bytes(inputs);
  for (const OracleTensor& output : output_specs) request_bytes += tensor_bytes(output);
  choose_folder(request_bytes);
  body["inputs"] = write_tensors("in_", input_specs, inputs);
  body["outputs"] = write_tensors("out_", output_specs, {});
  const Json reply = request(body);
  if (!json_value_or<bool>(reply, "ok", false)) {
    remove_files();
    throw OracleFailure(json_value_or<std::string>(reply, "stage", "request"),
                        json_value_or<std::string>(reply, "message", "the oracle failed without saying why"));
  }
  std::vector<Bytes> outputs;
  try {
    for (std::size_t i = 0; i < output_specs.size(); ++i) {
      outputs.push_back(read_file_bytes(body["outputs"][i]["path"].get<std::string>(), tensor_bytes(output_specs[i]),
                                        output_specs[i].name));
    }
  } catch (...) {
    remove_files();
    throw;
  }
  remove_files();
  return outputs;
}

OracleBaseline PytorchOracleClient::time(const Json& problem, const std::string& task_key, const std::string& config,
                                         const std::string& baseline, const std::vector<OracleTensor>& input_specs,
                                         const std::vector<std::vector<const Bytes*>>& input_sets,
                                         const Json& settings) {
  OracleBaseline result;
  Json body = {{"op", "time"},         {"task_key", task_key}, {"problem", problem},  {"config", config},
               {"device", device_},    {"baseline", baseline}, {"settings", settings}};
  Json sets = Json::array();
  std::uintmax_t request_bytes = 0;
  for (const auto& set : input_sets) request_bytes += set_bytes(set);
  choose_folder(request_bytes);
  try {
    for (std::size_t set = 0; set < input_sets.size(); ++set) {
      sets.push_back(write_tensors(fmt::format("set{}_", set), input_specs, input_sets[set]));
    }
    body["input_sets"] = sets;
    const Json reply = request(body);
    remove_files();
    if (json_value_or<bool>(reply, "ok", false)) {
      result.timing = timing_report_from_json(JsonField(reply.at("timing"), "<the PyTorch oracle's reply>", "timing"));
      result.compile_seconds = json_value_or<double>(reply, "compile_seconds", 0.0);
    } else {
      result.error = json_value_or<std::string>(reply, "message", "the oracle failed without saying why");
      // A request or device problem (out of memory, say) may not recur; the problem's own failures do.
      const std::string stage = json_value_or<std::string>(reply, "stage", "request");
      result.lasting = stage != "request" && stage != "device";
    }
  } catch (const OracleFailure& e) {
    result.error = e.what();
    result.lasting = false;
  }
  return result;
}

PytorchOracleClient::CandidateTiming PytorchOracleClient::time_candidate(
    const Json& problem, const std::string& task_key, const std::string& config,
    const std::vector<OracleTensor>& input_specs, const std::vector<std::vector<const Bytes*>>& input_sets,
    const std::vector<OracleTensor>& output_specs, const Json& settings) {
  CandidateTiming result;
  Json body = {{"op", "time"},      {"task_key", task_key}, {"problem", problem},  {"config", config},
               {"device", device_}, {"baseline", "eager"},  {"settings", settings}};
  std::uintmax_t request_bytes = 0;
  for (const auto& set : input_sets) {
    request_bytes += set_bytes(set);
    for (const OracleTensor& output : output_specs) request_bytes += tensor_bytes(output);
  }
  choose_folder(request_bytes);
  try {
    Json sets = Json::array();
    Json checks = Json::array();
    for (std::size_t set = 0; set < input_sets.size(); ++set) {
      sets.push_back(write_tensors(fmt::format("set{}_", set), input_specs, input_sets[set]));
      checks.push_back(write_tensors(fmt::format("check{}_", set), output_specs, {}));
    }
    body["input_sets"] = sets;
    body["check_outputs"] = checks;
    result.reply = request(body);
    if (json_value_or<bool>(result.reply, "ok", false)) {
      result.timing =
          timing_report_from_json(JsonField(result.reply.at("timing"), "<the ModelNew runner's reply>", "timing"));
      for (std::size_t set = 0; set < input_sets.size(); ++set) {
        std::vector<Bytes> outputs;
        for (std::size_t i = 0; i < output_specs.size(); ++i) {
          outputs.push_back(read_file_bytes(checks[set][i]["path"].get<std::string>(), tensor_bytes(output_specs[i]),
                                            output_specs[i].name));
        }
        result.checked.push_back(std::move(outputs));
      }
    } else {
      result.stage = json_value_or<std::string>(result.reply, "stage", "request");
      result.error = json_value_or<std::string>(result.reply, "message", "the runner failed without saying why");
    }
  } catch (const OracleFailure& e) {
    result.stage = e.stage();
    result.error = e.what();
  } catch (const std::exception& e) {
    result.stage = "outputs";
    result.error = e.what();
  }
  remove_files();
  return result;
}

Json PytorchOracleClient::inspect(const Json& problem, const std::string& task_key, const std::string& config,
                                  const std::vector<OracleTensor>& input_specs,
                                  const std::vector<const Bytes*>& inputs) {
  Json body = {{"op", "inspect"}, {"task_key", task_key}, {"problem", problem}, {"config", config}, {"device", device_}};
  choose_folder(set_bytes(inputs));
  body["inputs"] = write_tensors("in_", input_specs, inputs);
  const Json reply = request(body);
  remove_files();
  if (!json_value_or<bool>(reply, "ok", false)) {
    throw OracleFailure(json_value_or<std::string>(reply, "stage", "request"),
                        json_value_or<std::string>(reply, "message", "the runner failed without saying why"));
  }
  return reply;
}

}  // namespace kernelsmith::detail
