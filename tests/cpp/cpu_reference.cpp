#include "cpu_reference.hpp"

#include <fmt/format.h>

#include <map>

#include "kernelsmith/error.hpp"

namespace kernelsmith::testing {
namespace {

// A function-local static, so that registrations from other translation units' static initialisers
// never see it unconstructed.
std::map<std::string, CpuReference>& registry() {
  static std::map<std::string, CpuReference> references;
  return references;
}

}  // namespace

bool register_cpu_reference(const std::string& task, CpuReference reference) {
  if (!registry().emplace(task, std::move(reference)).second) {
    throw Error(fmt::format("a CPU reference for the task {} is registered twice", task));
  }
  return true;
}

const CpuReference* find_cpu_reference(const std::string& task) {
  const auto found = registry().find(task);
  return found == registry().end() ? nullptr : &found->second;
}

std::vector<std::string> cpu_reference_names() {
  std::vector<std::string> names;
  for (const auto& [name, reference] : registry()) names.push_back(name);
  return names;
}

std::int64_t size_of(const SizeMap& sizes, const std::string& name) {
  const auto found = sizes.find(name);
  if (found == sizes.end()) throw NotFoundError(fmt::format("the size configuration has no size \"{}\"", name));
  return found->second;
}

}  // namespace kernelsmith::testing
