// LlmAttempt: one HTTP attempt of an LLM request, as the mutator reports it with its proposal and the
// run store keeps it (table llm_attempts, docs/run-store.md).
#pragma once

#include <string>

namespace kernelsmith {

/// One HTTP attempt of an LLM request: a client retries after 429, 5xx, timeouts and dropped
/// connections, so one request may take several. Stored per step (run store table `llm_attempts`).
struct LlmAttempt {
  int http_status = 0;  ///< the status of the server's answer; 0 when none came (timeout, connection error, cancelled)
  /// Empty when the attempt brought the answer used; else what went wrong, starting with its kind:
  /// "HTTP 500 from URL: body", "timeout: ...", "connection error: ...", "bad answer: ...", "cancelled: ...".
  std::string error;
  double seconds = 0.0;  ///< from sending the request to the answer or the failure
};

}  // namespace kernelsmith
