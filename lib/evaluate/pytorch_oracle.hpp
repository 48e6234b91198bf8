// The evaluator's side of the PyTorch oracle (docs/kernelbench.md, "PyTorch oracle and baselines"): a
// task with an `oracle` takes its expected outputs from its PyTorch module, run by
// python/kernelsmith/pytorch_oracle.py in a helper process (detail/python_helper.hpp), and its baselines
// (eager, torch.compile) are timed there under the evaluator's timing protocol. Tensors travel as raw
// C-order files in the client's private temporary folder, never inside JSON; a helper that overruns its
// deadline is killed, one that dies is reported with what it printed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "detail/json_util.hpp"
#include "detail/python_helper.hpp"
#include "evaluate/host_tensors.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// The oracle helper's kind (script pytorch_oracle.py, $KERNELSMITH_ORACLE_HELPER).
const PythonHelperKind& oracle_helper_kind();

/// The ModelNew runner's kind: the same script, one helper per candidate, never pooled, writing nothing but
/// its own folder (docs/kernelbench-modelnew.md).
const PythonHelperKind& model_new_runner_kind();

/// The builder of ModelNew candidates' torch extensions (script extension_build.py): a pooled helper, confined,
/// whose one writable folder besides its own is the shared cache of builds (docs/kernelbench-modelnew.md,
/// "Builds"). It reads a candidate's file as text and never runs it.
const PythonHelperKind& extension_builder_kind();

/// The shared cache of extension builds under the evaluator's disk cache (`cache_dir`/torch-extensions), or ""
/// with `why_off` saying why there is none: no disk cache, or a sandbox whose filesystem protection is off (a
/// runner could then write the cache that other candidates' builds read).
std::string extension_cache_folder(const std::string& cache_dir, std::string* why_off);

/// Has the builder build `source`'s constant load_inline calls (and the precompiled header they need) into
/// `extension_cache`, within `timeout_seconds`; returns its account, one "builder: ..." line each. Nothing
/// when the cache is "" or the source does not use torch.utils.cpp_extension. Never throws: a builder that
/// fails leaves the builds to the runner, and says so. The evaluator's compile stage calls it for a batch's
/// ModelNew candidates in parallel, ahead of the device; for_candidate() calls it again (then a lookup).
std::string prebuild_extensions(const std::string& source, const std::string& extension_cache,
                                double timeout_seconds);

/// A tensor as the helper reads or writes it.
struct OracleTensor {
  std::string name;
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
};

/// The helper interpreter's torch and the oracle device, or why torch cannot be used.
struct OracleVersion {
  bool available = false;
  std::string torch;        ///< "2.11.0+cu130"
  std::string device_name;  ///< "NVIDIA H100 80GB HBM3", the CPU's model name
  std::string reason;       ///< why not, when not available
  std::string python;       ///< the interpreter the helper runs
};

/// One baseline's timing, or why it could not be timed.
struct OracleBaseline {
  std::optional<TimingReport> timing;
  std::string error;
  /// The failure says something of the problem (torch.compile rejects it), not of this moment (the
  /// helper died or overran its deadline): it may be remembered.
  bool lasting = true;
  double compile_seconds = 0.0;
};

/// What the oracle reported about the task: the stage ("torch", "module", "build", "parameters",
/// "inputs", "forward", "outputs", "device", "helper") and its message. The evaluator turns it into a
/// TaskError naming the task.
class OracleFailure : public Error {
 public:
  OracleFailure(std::string stage, const std::string& message) : Error(message), stage_(std::move(stage)) {}
  const std::string& stage() const { return stage_; }

 private:
  std::string stage_;
};

/// Talks to oracle helpers on behalf of one harness. `device` is "cpu" or "cuda:N".
class PytorchOracleClient {
 public:
  /// Creates the private folders (mode 0700) that tensors travel through: one under the temporary directory,
  /// and one in shared memory ($KERNELSMITH_ORACLE_SHM, default /dev/shm, where it exists), which a request
  /// uses where it fits and takes at most half of the memory available. Removes folders there that killed processes left.
  /// Throws Error when the temporary directory's folder cannot be made.
  PytorchOracleClient(std::string device, double timeout_seconds);
  /// A client of a helper of its own (model_new_runner_kind()), started now and ended with the client: it runs
  /// one candidate's host code and serves nothing else. Tensors travel through the helper's own folder, which
  /// no other helper may write. Throws OracleFailure("helper", ...) when the helper cannot start.
  ///
  /// With an `extension_cache` folder (extension_cache_folder()) and a `source` that uses
  /// torch.utils.cpp_extension, the builder first builds the file's constant load_inline calls (and the
  /// precompiled header of torch/extension.h) into the cache, within `build_seconds`; the runner may then read
  /// the cache, never write it. build_log() says what happened.
  static std::unique_ptr<PytorchOracleClient> for_candidate(std::string device, double timeout_seconds,
                                                            const std::string& source = {},
                                                            const std::string& extension_cache = {},
                                                            double build_seconds = 0.0);
  /// What the builder did for this candidate, and what the runner's builds did (read from the runner's
  /// folder: its own account, for the log only). "" when neither has anything to say.
  std::string build_log() const;
  ~PytorchOracleClient();
  PytorchOracleClient(const PytorchOracleClient&) = delete;
  PytorchOracleClient& operator=(const PytorchOracleClient&) = delete;

  const std::string& device() const { return device_; }
  void set_timeout(double seconds) { timeout_seconds_ = seconds; }

  /// Asks the helper once (then remembers). Throws OracleFailure when no helper can start.
  const OracleVersion& version();

  /// Runs the problem's forward on `inputs` (one buffer per tensor of `input_specs`) and returns one
  /// buffer per tensor of `output_specs`, each of its dtype and shape. Throws OracleFailure.
  std::vector<Bytes> outputs(const Json& problem, const std::string& task_key, const std::string& config,
                             const std::vector<OracleTensor>& input_specs, const std::vector<const Bytes*>& inputs,
                             const std::vector<OracleTensor>& output_specs);

  /// Times one baseline ("eager", "compile", "compile_max_autotune"), the runs cycling through
  /// `input_sets` (each one buffer per tensor of `input_specs`). `settings` is the helper's timing settings
  /// object (pytorch_oracle.py). Never throws for a baseline that fails: its error says why.
  OracleBaseline time(const Json& problem, const std::string& task_key, const std::string& config,
                      const std::string& baseline, const std::vector<OracleTensor>& input_specs,
                      const std::vector<std::vector<const Bytes*>>& input_sets, const Json& settings);

  /// A ModelNew candidate timed (its runner's "time" request, baseline "eager"): every run on inputs it has not
  /// seen, then one more timed run per input set on that set's exact values, whose outputs (one buffer per
  /// tensor of `output_specs`, per set) come back in `checked` for the caller to compare (pytorch_oracle.py,
  /// measure). Never throws for a failure the runner reports: `stage` and `error` say what.
  struct CandidateTiming {
    std::optional<TimingReport> timing;
    std::string stage;
    std::string error;
    std::vector<std::vector<Bytes>> checked;
    Json reply;  ///< the runner's reply ("custom_calls", "flags", "notes")
  };
  CandidateTiming time_candidate(const Json& problem, const std::string& task_key, const std::string& config,
                                 const std::vector<OracleTensor>& input_specs,
                                 const std::vector<std::vector<const Bytes*>>& input_sets,
                                 const std::vector<OracleTensor>& output_specs, const Json& settings);

  /// A ModelNew candidate's forward inspected on `inputs` (the runner's "inspect" request): the kernels it ran,
  /// the ablation run, flags. Returns the reply; throws OracleFailure when the runner refuses or fails.
  Json inspect(const Json& problem, const std::string& task_key, const std::string& config,
               const std::vector<OracleTensor>& input_specs, const std::vector<const Bytes*>& inputs);

  /// The last reply a request got (a candidate's outputs request adds "custom_calls" and "flags").
  const Json& last_reply() const { return last_reply_; }

  /// Sends the next request's tensors through shared memory when `request_bytes` fit there (see the
  /// constructor), else through the disk; request_folder() says which.
  void choose_folder(std::uintmax_t request_bytes);
  const std::string& request_folder() const { return folder_; }

  /// Seconds spent waiting for helpers since the last call (the evaluation's "oracle" stage).
  double take_seconds();

 private:
  /// One request through a pooled helper. Throws OracleFailure("helper", ...) when the helper cannot
  /// start, dies or overruns its deadline.
  Json request(const Json& body);
  /// Writes tensors into the folder; returns their descriptions for a request, paths included.
  Json write_tensors(const std::string& prefix, const std::vector<OracleTensor>& specs,
                     const std::vector<const Bytes*>& data);
  void remove_files();
  PytorchOracleClient(std::string device, double timeout_seconds, std::unique_ptr<PythonHelper> own_helper);
  std::unique_ptr<PythonHelper> own_helper_;  // for_candidate(): its helper; null for the pooled oracle
  Json last_reply_;
  bool dedicated_ = false;
  std::string builder_log_;  // for_candidate(): what the builder said
  std::string device_;
  std::string disk_folder_;
  std::string shared_folder_;  // empty: no shared memory
  std::string folder_;         // the current request's
  std::vector<std::string> files_;
  double timeout_seconds_;
  std::optional<OracleVersion> version_;
  double seconds_ = 0.0;
  // for_candidate(): the account of its runner that build_log() gives (docs/kernelbench-modelnew.md, "Builds").
  struct RunnerAccount {
    bool started_ahead = false;
    double waited_seconds = 0.0;   // for the runner started ahead to finish its imports
    int requests = 0;
    double first_seconds = 0.0;    // the first request's round trip (a fresh runner's imports included)
    double round_trip_seconds = 0.0;
    double handled_seconds = 0.0;  // inside the runner's handlers
  } account_;
};

/// How many requests oracle helpers were sent in this process (tests and measurements).
std::int64_t oracle_requests_sent();

}  // namespace kernelsmith::detail
