#include "kernelsmith/param_mutator.hpp"

#include "kernelsmith/device_attributes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <sstream>

#include "detail/expression.hpp"
#include "detail/random.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith {
namespace {

Bindings device_bindings(const DeviceInfo& device) {
  Bindings bindings;
  // Only what the device reports: an unknown attribute (0) must not make a requirement fail.
  for (const auto& [name, value] : device_attribute_values(device)) {
    if (value > 0) bindings[name] = value;
  }
  return bindings;
}

// True when the expression names a device attribute that `bindings` lacks.
bool needs_unknown_attribute(const detail::Expression& expression, const Bindings& bindings) {
  for (const std::string& name : expression.identifiers()) {
    if (bindings.count(name) == 0 && is_device_attribute(name)) {
      return true;
    }
  }
  return false;
}

std::string describe(const ParamValues& values) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values) parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The language a candidate's plan is read in: a candidate without one is CUDA, as LaunchPlan::parse assumes.
std::string plan_language(const Candidate& candidate) {
  return candidate.language.empty() ? "cuda" : candidate.language;
}

// "// @tune" or "# @tune": how the directive is written in `language`, for messages.
std::string tune_directive(const std::string& language) {
  const KernelLanguage* row = find_kernel_language(language);
  return (row != nullptr ? row->plan_comment : std::string("//")) + " @tune";
}

std::size_t index_of(const TunableParam& param, std::int64_t value) {
  auto found = std::find(param.values.begin(), param.values.end(), value);
  return found == param.values.end() ? 0 : static_cast<std::size_t>(found - param.values.begin());
}

}  // namespace

ParamMutator::ParamMutator(ParamMutatorOptions options) : options_(options) {
  if (options_.max_changes < 1) {
    throw ValidationError(fmt::format("ParamMutatorOptions.max_changes = {} must be at least 1", options_.max_changes));
  }
  if (!(options_.neighbour_bias >= 0.0 && options_.neighbour_bias <= 1.0)) {
    throw ValidationError(
        fmt::format("ParamMutatorOptions.neighbour_bias = {} is outside [0, 1]", options_.neighbour_bias));
  }
  if (options_.max_attempts < 1) {
    throw ValidationError(fmt::format("ParamMutatorOptions.max_attempts = {} must be at least 1", options_.max_attempts));
  }
  if (options_.proposals_per_request < 1) {
    throw ValidationError(fmt::format("ParamMutatorOptions.proposals_per_request = {} must be at least 1",
                                      options_.proposals_per_request));
  }
}

ParamValues ParamMutator::values_of(const std::string& source, const std::string& language) {
  ParamValues values;
  for (const TunableParam& param : LaunchPlan::parse(source, language).tunables) values[param.name] = param.value;
  return values;
}

std::string ParamMutator::rewrite(const std::string& source, const ParamValues& values, const std::string& language) {
  const LaunchPlan plan = LaunchPlan::parse(source, language);
  std::map<int, std::pair<const TunableParam*, std::int64_t>> by_line;
  for (const auto& [name, value] : values) {
    auto param = std::find_if(plan.tunables.begin(), plan.tunables.end(),
                              [&](const TunableParam& p) { return p.name == name; });
    if (param == plan.tunables.end()) {
      throw ValidationError(fmt::format("the source declares no tunable parameter {} (no `{} {} = ...` line)", name,
                                        tune_directive(language), name));
    }
    if (std::find(param->values.begin(), param->values.end(), value) == param->values.end()) {
      throw ValidationError(fmt::format("{} = {} is not among its allowed values {{{}}}", name, value,
                                        fmt::join(param->values, ", ")));
    }
    by_line[param->line] = {&*param, value};
  }
  std::string result;
  result.reserve(source.size() + 16);
  int line_number = 1;
  std::size_t begin = 0;
  while (begin <= source.size()) {
    std::size_t end = source.find('\n', begin);
    const bool last = end == std::string::npos;
    if (last) end = source.size();
    std::string line = source.substr(begin, end - begin);
    auto change = by_line.find(line_number);
    if (change != by_line.end()) {
      // `// @tune NAME = <value> in {...}` (or `# @tune` in Python): replace the integer after the '=' that
      // follows the name; the comment marker before `@tune` does not matter.
      const std::size_t tune = line.find("@tune");
      const std::size_t name = tune == std::string::npos ? tune : line.find(change->second.first->name, tune + 5);
      const std::size_t equals = name == std::string::npos ? name : line.find('=', name);
      if (equals == std::string::npos) {
        throw ValidationError(fmt::format("line {}: cannot find the value of {} to rewrite", line_number,
                                          change->second.first->name));
      }
      std::size_t start = line.find_first_not_of(" \t", equals + 1);
      std::size_t stop = start;
      if (stop < line.size() && (line[stop] == '-' || line[stop] == '+')) ++stop;
      while (stop < line.size() && std::isdigit(static_cast<unsigned char>(line[stop]))) ++stop;
      line.replace(start, stop - start, std::to_string(change->second.second));
    }
    result += line;
    if (last) break;
    result += '\n';
    begin = end + 1;
    ++line_number;
  }
  return result;
}

bool ParamMutator::satisfies(const LaunchPlan& plan, const ParamValues& values, const MutationRequest& request,
                             std::string* reason) const {
  Bindings bindings = device_bindings(request.device);
  for (const auto& [name, value] : request.task().timing_sizes.sizes) bindings[name] = value;
  for (const auto& [name, value] : values) bindings[name] = value;
  for (const std::string& requirement : plan.requirements) {
    try {
      detail::Expression expression(requirement);
      if (needs_unknown_attribute(expression, bindings)) continue;
      if (expression.evaluate(bindings) == 0) {
        if (reason != nullptr) *reason = fmt::format("@require {}", requirement);
        return false;
      }
    } catch (const PlanError& error) {
      if (reason != nullptr) *reason = fmt::format("@require {}: {}", requirement, error.what());
      return false;
    }
  }
  auto limit = bindings.find("MAX_THREADS_PER_BLOCK");
  if (options_.check_block_size && limit != bindings.end()) {
    for (const LaunchDecl& launch : plan.launches) {
      try {
        std::int64_t threads = 1;
        for (const std::string& dimension : launch.block) threads *= evaluate_expression(dimension, bindings);
        if (threads > limit->second) {
          if (reason != nullptr) {
            *reason = fmt::format("the block of {} has {} threads, above MAX_THREADS_PER_BLOCK = {}", launch.kernel,
                                  threads, limit->second);
          }
          return false;
        }
      } catch (const PlanError&) {
        // An expression over something only the harness knows: leave it to the evaluation.
      }
    }
  }
  return true;
}

bool ParamMutator::can_mutate(const Candidate& parent) const {
  try {
    const LaunchPlan plan = LaunchPlan::parse(parent.source, plan_language(parent));
    return std::any_of(plan.tunables.begin(), plan.tunables.end(),
                       [](const TunableParam& param) { return param.values.size() > 1; });
  } catch (const Error&) {
    return false;  // propose() would only report the parse error (or the unknown language)
  }
}

std::vector<Proposal> ParamMutator::propose(const MutationRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  auto finish = [&](Proposal proposal) {
    proposal.mutation = "param";
    proposal.latency_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return proposal;
  };
  auto failed = [&](std::string why) {
    Proposal proposal;
    proposal.failure = std::move(why);
    return std::vector<Proposal>{finish(std::move(proposal))};
  };

  const std::string language = plan_language(request.parent);
  if (request.child_language() != language) {
    // The children of a parameter change are the parent's code: they cannot be in another language.
    std::vector<Proposal> refused = failed(fmt::format(
        "the parameter mutator only changes @tune values, so it cannot write the {} parent in {}; it works from "
        "the run's {} programs",
        language, request.child_language(), request.child_language()));
    refused.front().exhausted_ids = {request.parent.id()};
    return refused;
  }
  LaunchPlan plan;
  try {
    plan = LaunchPlan::parse(request.parent.source, language);
  } catch (const PlanError& error) {
    return failed(fmt::format("the parent's launch plan does not parse (line {}): {}", error.line(), error.what()));
  } catch (const ValidationError& error) {
    return failed(fmt::format("the parent's launch plan cannot be read: {}", error.what()));
  }
  std::vector<const TunableParam*> mutable_params;
  for (const TunableParam& param : plan.tunables) {
    if (param.values.size() > 1) mutable_params.push_back(&param);
  }
  if (mutable_params.empty()) {
    return failed(plan.tunables.empty()
                      ? "the parent declares no tunable parameters: the parameter mutator needs `// @tune NAME = "
                        "value in {v1, v2, ...}` lines"
                      : "every tunable parameter of the parent has a single allowed value: nothing to vary");
  }
  ParamValues current;
  for (const TunableParam& param : plan.tunables) current[param.name] = param.value;

  // Crossover partner: the second parent's values for the parameters both declare.
  ParamValues partner;
  std::string partner_id;
  // A partner in another language has no values to give.
  if (request.second_parent && plan_language(*request.second_parent) == language) {
    try {
      const LaunchPlan other = LaunchPlan::parse(request.second_parent->source, language);
      for (const TunableParam& param : other.tunables) {
        auto mine = std::find_if(plan.tunables.begin(), plan.tunables.end(),
                                 [&](const TunableParam& p) { return p.name == param.name; });
        if (mine != plan.tunables.end() &&
            std::find(mine->values.begin(), mine->values.end(), param.value) != mine->values.end()) {
          partner[param.name] = param.value;
        }
      }
      partner_id = request.second_parent->id();
    } catch (const PlanError&) {
      partner.clear();  // a partner whose plan does not parse has nothing to give
    }
  }
  bool partner_differs = false;
  for (const auto& [name, value] : partner) partner_differs = partner_differs || current.at(name) != value;

  std::mt19937_64 rng(detail::mix_seed(request.seed, 0x7061726d));  // "parm"
  auto mutate = [&](ParamValues values) {
    const std::size_t changes =
        std::min<std::size_t>(mutable_params.size(),
                              options_.max_changes >= 2 && detail::uniform01(rng) < 0.5 ? 2 : 1);
    std::vector<const TunableParam*> pool = mutable_params;
    for (std::size_t change = 0; change < changes; ++change) {
      const std::size_t pick = detail::uniform_index(rng, pool.size());
      const TunableParam& param = *pool[pick];
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(pick));
      const std::size_t at = index_of(param, values.at(param.name));
      std::size_t next = at;
      if (detail::uniform01(rng) < options_.neighbour_bias) {
        std::vector<std::size_t> neighbours;
        if (at > 0) neighbours.push_back(at - 1);
        if (at + 1 < param.values.size()) neighbours.push_back(at + 1);
        next = neighbours[detail::uniform_index(rng, neighbours.size())];
      } else {
        next = detail::uniform_index(rng, param.values.size() - 1);
        if (next >= at) ++next;
      }
      values[param.name] = param.values[next];
    }
    return values;
  };
  auto crossover = [&]() {
    ParamValues values = current;
    for (const auto& [name, value] : partner) {
      if (detail::uniform01(rng) < 0.5) values[name] = value;
    }
    ParamValues partner_full = current;
    for (const auto& [name, value] : partner) partner_full[name] = value;
    if (values == current || values == partner_full) values = mutate(values);
    return values;
  };

  std::set<ParamValues> offered{current};
  std::vector<Proposal> proposals;
  for (int index = 0; index < options_.proposals_per_request; ++index) {
    int rejected = 0;
    std::vector<std::string> known_ids;  // the combinations already in the run, as programs
    std::string first_rejection;
    std::optional<ParamValues> chosen;
    std::optional<Candidate> child;
    bool crossed = false;
    auto consider = [&](const ParamValues& values, bool from_crossover) {
      if (offered.count(values) != 0) return false;
      std::string reason;
      if (!satisfies(plan, values, request, &reason)) {
        ++rejected;
        if (first_rejection.empty()) first_rejection = fmt::format("{} breaks {}", describe(values), reason);
        offered.insert(values);
        return false;
      }
      Candidate candidate;
      candidate.language = request.parent.language;
      candidate.source = rewrite(request.parent.source, values, language);
      if (request.is_known && request.is_known(candidate)) {
        known_ids.push_back(candidate.id());
        offered.insert(values);
        return false;
      }
      chosen = values;
      child = std::move(candidate);
      crossed = from_crossover;
      return true;
    };
    for (int attempt = 0; attempt < options_.max_attempts && !chosen; ++attempt) {
      const bool use_crossover = partner_differs && attempt % 2 == 0;
      consider(use_crossover ? crossover() : mutate(current), use_crossover);
    }
    std::int64_t space = 1;
    for (const TunableParam* param : mutable_params) {
      space = space > options_.enumeration_limit ? space : space * static_cast<std::int64_t>(param->values.size());
    }
    if (!chosen && space <= options_.enumeration_limit) {
      // Random draws found nothing: look at every combination, nearest to the parent first.
      std::vector<std::pair<int, ParamValues>> valid;
      std::vector<std::size_t> digits(mutable_params.size(), 0);
      for (std::int64_t n = 0; n < space; ++n) {
        ParamValues values = current;
        int distance = 0;
        for (std::size_t d = 0; d < mutable_params.size(); ++d) {
          values[mutable_params[d]->name] = mutable_params[d]->values[digits[d]];
          distance += values[mutable_params[d]->name] != current.at(mutable_params[d]->name) ? 1 : 0;
        }
        if (offered.count(values) == 0) valid.emplace_back(distance, std::move(values));
        for (std::size_t d = 0; d < digits.size(); ++d) {
          if (++digits[d] < mutable_params[d]->values.size()) break;
          digits[d] = 0;
        }
      }
      std::stable_sort(valid.begin(), valid.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::size_t start = 0;
      while (start < valid.size() && !chosen) {
        std::size_t stop = start;
        while (stop < valid.size() && valid[stop].first == valid[start].first) ++stop;
        // Random order within one distance, so that repeated requests spread over the neighbours.
        for (std::size_t i = stop - start; i > 1; --i) {
          std::swap(valid[start + i - 1], valid[start + detail::uniform_index(rng, i)]);
        }
        for (std::size_t i = start; i < stop && !consider(valid[i].second, false); ++i) {
        }
        start = stop;
      }
    }
    if (!chosen) {
      if (!proposals.empty()) break;  // the earlier proposals of this request stand
      std::string why = fmt::format(
          "no valid new combination of {} from the parent's {}: {} rejected by constraints, {} already in the "
          "run",
          fmt::join([&] {
            std::vector<std::string> names;
            for (const TunableParam* param : mutable_params) names.push_back(param->name);
            return names;
          }(), ", "),
          describe(current), rejected, known_ids.size());
      if (!first_rejection.empty()) why += fmt::format(" (e.g. {})", first_rejection);
      if (space > options_.enumeration_limit) {
        why += fmt::format("; the space ({}+ combinations) was sampled, not enumerated", options_.enumeration_limit);
        return failed(why);
      }
      // The whole space was enumerated: nothing new will come from this parent, nor from the programs
      // of the same space (the known combinations), whose requests would enumerate the same space.
      std::vector<Proposal> exhausted = failed(why);
      exhausted.front().exhausted_ids = std::move(known_ids);
      exhausted.front().exhausted_ids.push_back(request.parent.id());
      return exhausted;
    }
    offered.insert(*chosen);
    child->lineage.parent_ids = {request.parent.id()};
    if (crossed && !partner_id.empty()) child->lineage.parent_ids.push_back(partner_id);
    child->lineage.island = request.island;
    child->lineage.generation = request.generation;
    child->lineage.origin = "param";
    Proposal proposal;
    proposal.candidate = std::move(child);
    proposals.push_back(finish(std::move(proposal)));
  }
  return proposals;
}

}  // namespace kernelsmith
