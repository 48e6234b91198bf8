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

}  // namespace kernelsmith::detail
