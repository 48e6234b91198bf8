#include "evaluate/build_failure.hpp"

#include <sstream>

namespace kernelsmith::detail {

std::string headline_of_log(const std::string& log) {
  std::istringstream lines(log);
  std::string line;
  std::string first;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos) return line;
  }
  return first;
}

std::string rename_source_in_log(const std::string& log, const std::string& name) {
  // NVRTC writes "candidate.cu(12): error", OpenCL compilers "candidate.cl:12:5: error".
  std::string renamed = log;
  for (const std::string from : {"candidate.cu(", "candidate.cl:"}) {
    const std::string to = name + from.back();
    for (std::size_t at = renamed.find(from); at != std::string::npos; at = renamed.find(from, at + to.size())) {
      renamed.replace(at, from.size(), to);
    }
  }
  return renamed;
}

}  // namespace kernelsmith::detail
