#include "evaluate/pytorch_oracle.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "detail/python_helper.hpp"
#include "json_codec.hpp"

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
  std::ifstream stream(path, std::ios::binary);
  if (expected > 0 && !stream.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(expected))) {
    throw OracleFailure("outputs", fmt::format("cannot read the oracle's output {} from {}", tensor, path));
  }
  return bytes;
}

}  // namespace

const PythonHelperKind& oracle_helper_kind() {
  // One idle helper is kept: it holds the built models (and torch, several hundred MB) between requests.
  static const PythonHelperKind kind{"pytorch_oracle.py", "KERNELSMITH_ORACLE_HELPER", "the PyTorch oracle helper",
                                     "computing expected outputs or timing a baseline", 1};
  return kind;
}

std::int64_t oracle_requests_sent() { return request_counter().load(); }

PytorchOracleClient::PytorchOracleClient(std::string device, double timeout_seconds)
    : device_(std::move(device)), timeout_seconds_(timeout_seconds) {
  const std::string pattern = (fs::temp_directory_path() / "kernelsmith-oracle-XXXXXX").string();
  std::vector<char> folder(pattern.begin(), pattern.end());
  folder.push_back('\0');
  if (::mkdtemp(folder.data()) == nullptr) {  // mode 0700: the tensors are the caller's data
    throw Error(fmt::format("cannot create a folder for the PyTorch oracle's tensors ({}): {}", pattern,
                            std::strerror(errno)));
  }
  folder_ = folder.data();
}

PytorchOracleClient::~PytorchOracleClient() {
  std::error_code error;
  fs::remove_all(folder_, error);
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
    Json reply = ask_python_helper(oracle_helper_kind(), body, timeout_seconds_);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return reply;
  } catch (const std::exception& e) {
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    remove_files();
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
      std::ofstream stream(path, std::ios::binary | std::ios::trunc);
      stream.write(reinterpret_cast<const char*>(data[i]->data()), static_cast<std::streamsize>(data[i]->size()));
      if (!stream) {
        remove_files();
        throw OracleFailure("helper", fmt::format("cannot write tensor {} for the PyTorch oracle to {} (is the "
                                                  "temporary folder's disk full?)",
                                                  specs[i].name, path));
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
      std::size_t count = 1;
      for (const std::int64_t extent : output_specs[i].shape) count *= static_cast<std::size_t>(extent);
      outputs.push_back(read_file_bytes(body["outputs"][i]["path"].get<std::string>(),
                                        count * dtype_size(output_specs[i].dtype), output_specs[i].name));
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

}  // namespace kernelsmith::detail
