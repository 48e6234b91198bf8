// Task::infer_sizes and Task::add_case, and the "cases" key of task manifests.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "detail/base64.hpp"
#include "task_cases.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace kernelsmith {
namespace {

using Shape = std::vector<std::int64_t>;

std::string shape_text(const Shape& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

std::string expression_shape_text(const TensorSpec& spec) { return fmt::format("[{}]", fmt::join(spec.shape, ", ")); }

bool is_size_name(const std::string& text, const SizeMap& timing_sizes) { return timing_sizes.count(text) > 0; }

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  const auto end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

Shape shape_at(const TensorSpec& spec, const SizeMap& sizes) {
  Shape shape;
  for (const auto& dim : spec.shape) shape.push_back(evaluate_expression(dim, sizes));
  return shape;
}

std::shared_ptr<const std::vector<std::uint8_t>> host_copy(const std::string& what, const TensorRef& ref) {
  if (ref.on_device) {
    throw ValidationError(fmt::format("{} is in device memory; a task's data cases are kept in host memory: copy "
                                      "it to the host first (e.g. tensor.cpu())",
                                      what));
  }
  const std::size_t bytes = ref.byte_count();
  if (bytes > 0 && ref.data == nullptr) throw ValidationError(fmt::format("{} has no data (a null pointer)", what));
  const auto* begin = static_cast<const std::uint8_t*>(ref.data);
  return std::make_shared<const std::vector<std::uint8_t>>(begin, begin + bytes);
}

}  // namespace

SizeMap Task::infer_sizes(const std::map<std::string, std::vector<std::int64_t>>& shapes, const SizeMap& given) const {
  for (const auto& [size, value] : given) {
    if (!timing_sizes.sizes.count(size)) {
      std::vector<std::string> known;
      for (const auto& [known_size, known_value] : timing_sizes.sizes) known.push_back(known_size);
      throw ValidationError(fmt::format("task {} has no size \"{}\"; its sizes are {}", name, size,
                                        fmt::join(known, ", ")));
    }
    if (value <= 0) throw ValidationError(fmt::format("size {} = {}: sizes must be positive", size, value));
  }
  SizeMap sizes = given;
  // Where each size was learnt, for messages about disagreements.
  std::map<std::string, std::string> source;
  for (const auto& [size, value] : given) source[size] = "the sizes given";
  for (const auto& [tensor_name, shape] : shapes) {
    const TensorSpec& spec = tensor(tensor_name);
    if (shape.size() != spec.shape.size()) {
      throw ValidationError(fmt::format("tensor {} has shape {} ({} dimension{}); task {} declares it {} ({} "
                                        "dimension{})",
                                        tensor_name, shape_text(shape), shape.size(), shape.size() == 1 ? "" : "s",
                                        name, expression_shape_text(spec), spec.shape.size(),
                                        spec.shape.size() == 1 ? "" : "s"));
    }
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const std::string dim = trimmed(spec.shape[d]);
      if (!is_size_name(dim, timing_sizes.sizes)) continue;
      const std::string here = fmt::format("dimension {} of {} {}", d, tensor_name, shape_text(shape));
      const auto found = sizes.find(dim);
      if (found == sizes.end()) {
        if (shape[d] <= 0) {
          throw ValidationError(fmt::format("{} gives {} = {}; sizes must be positive (empty tensors cannot run)",
                                            here, dim, shape[d]));
        }
        sizes[dim] = shape[d];
        source[dim] = here;
      } else if (found->second != shape[d]) {
        throw ValidationError(fmt::format("inconsistent size {}: {} says {}, but {} says {}", dim, source[dim],
                                          found->second, here, shape[d]));
      }
    }
  }
  std::vector<std::string> unknown;
  for (const auto& [size, value] : timing_sizes.sizes) {
    if (!sizes.count(size)) unknown.push_back(size);
  }
  if (!unknown.empty()) {
    throw ValidationError(fmt::format("cannot infer the size{} {} of task {} from the tensors' shapes; pass {} "
                                      "explicitly (sizes={{...}})",
                                      unknown.size() == 1 ? "" : "s", fmt::join(unknown, ", "), name,
                                      unknown.size() == 1 ? "it" : "them"));
  }
  // Every dimension, including expressions such as "2*N", must now match.
  for (const auto& [tensor_name, shape] : shapes) {
    const TensorSpec& spec = tensor(tensor_name);
    const Shape expected = shape_at(spec, sizes);
    if (expected != shape) {
      std::vector<std::string> assignment;
      for (const auto& [size, value] : sizes) assignment.push_back(fmt::format("{}={}", size, value));
      throw ValidationError(fmt::format("tensor {} has shape {}; with {} task {} expects {} = {}", tensor_name,
                                        shape_text(shape), fmt::join(assignment, ", "), name,
                                        expression_shape_text(spec), shape_text(expected)));
    }
  }
  return sizes;
}

const DataCase& Task::add_case(const std::map<std::string, TensorRef>& inputs,
                               const std::map<std::string, TensorRef>& expected, const SizeMap& given) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& [tensor_name, ref] : inputs) {
    const TensorSpec& spec = tensor(tensor_name);
    if (spec.role != TensorRole::input) {
      throw ValidationError(fmt::format("{} is an output of task {}; give it under expected=, not inputs=", tensor_name,
                                        name));
    }
    shapes[tensor_name] = ref.shape;
  }
  for (const auto& [tensor_name, ref] : expected) {
    const TensorSpec& spec = tensor(tensor_name);
    if (spec.role != TensorRole::output) {
      throw ValidationError(fmt::format("{} is an input of task {}; give it under inputs=, not expected=", tensor_name,
                                        name));
    }
    shapes[tensor_name] = ref.shape;
  }
  for (const auto& spec : tensors) {
    if (spec.role == TensorRole::input && !inputs.count(spec.name)) {
      throw ValidationError(fmt::format("a data case needs every input of task {}; {} is missing", name, spec.name));
    }
  }
  for (const auto& [tensor_name, ref] : inputs) {
    const TensorSpec& spec = tensor(tensor_name);
    if (ref.dtype != spec.dtype) {
      throw ValidationError(fmt::format("input {} is {}; task {} declares it {}", tensor_name, to_string(ref.dtype),
                                        name, to_string(spec.dtype)));
    }
  }
  for (const auto& [tensor_name, ref] : expected) {
    const TensorSpec& spec = tensor(tensor_name);
    if (ref.dtype != spec.dtype) {
      throw ValidationError(fmt::format("expected output {} is {}; task {} declares it {}", tensor_name,
                                        to_string(ref.dtype), name, to_string(spec.dtype)));
    }
  }
  const SizeMap sizes = infer_sizes(shapes, given);

  DataCase data;
  data.name = fmt::format("user case {}", cases.size());
  for (const auto& config : all_size_configs()) {
    if (config.sizes == sizes) {
      data.sizes = config.name;
      break;
    }
  }
  for (const auto& [tensor_name, ref] : inputs) data.inputs[tensor_name] = host_copy("input " + tensor_name, ref);
  for (const auto& [tensor_name, ref] : expected) {
    data.expected[tensor_name] = host_copy("expected output " + tensor_name, ref);
  }
  if (data.sizes.empty()) {
    data.sizes = data.name;
    check_sizes.push_back(SizeConfig{data.name, sizes});
  }
  cases.push_back(std::move(data));
  return cases.back();
}

namespace detail {

namespace {
Json tensor_bytes_json(const std::map<std::string, std::shared_ptr<const std::vector<std::uint8_t>>>& tensors) {
  Json json = Json::object();
  for (const auto& [tensor_name, bytes] : tensors) json[tensor_name] = Json{{"base64", base64_encode(*bytes)}};
  return json;
}

std::map<std::string, std::shared_ptr<const std::vector<std::uint8_t>>> tensor_bytes_from_json(const JsonField& field) {
  std::map<std::string, std::shared_ptr<const std::vector<std::uint8_t>>> tensors;
  for (const auto& [tensor_name, value] : field.members()) {
    value.expect_object({"base64"});
    const JsonField encoded = value["base64"];
    try {
      tensors[tensor_name] = std::make_shared<const std::vector<std::uint8_t>>(base64_decode(encoded.string()));
    } catch (const ValidationError& e) {
      encoded.fail(e.what());
    }
  }
  return tensors;
}
}  // namespace

Json cases_to_json(const std::vector<DataCase>& cases) {
  Json json = Json::array();
  for (const auto& data : cases) {
    json.push_back(Json{{"name", data.name},
                        {"sizes", data.sizes},
                        {"inputs", tensor_bytes_json(data.inputs)},
                        {"expected", tensor_bytes_json(data.expected)}});
  }
  return json;
}

std::vector<DataCase> cases_from_json(const JsonField& field) {
  std::vector<DataCase> cases;
  for (const auto& element : field.elements()) {
    element.expect_object({"name", "sizes", "inputs", "expected"});
    DataCase data;
    data.name = element["name"].string();
    data.sizes = element["sizes"].string();
    data.inputs = tensor_bytes_from_json(element["inputs"]);
    if (auto expected = element.optional("expected")) data.expected = tensor_bytes_from_json(*expected);
    cases.push_back(std::move(data));
  }
  return cases;
}

void validate_cases(const Task& task, const std::string& origin) {
  const auto configs = task.all_size_configs();
  std::set<std::string> names;
  for (std::size_t i = 0; i < task.cases.size(); ++i) {
    const DataCase& data = task.cases[i];
    const auto fail = [&](const std::string& path, const std::string& message) {
      throw ValidationError(fmt::format("{}: cases[{}]{}: {}", origin, i, path, message));
    };
    if (data.name.empty()) fail(".name", "expected a non-empty name");
    if (!names.insert(data.name).second) fail(".name", fmt::format("the name \"{}\" is used twice", data.name));
    const auto config = std::find_if(configs.begin(), configs.end(),
                                     [&](const SizeConfig& c) { return c.name == data.sizes; });
    if (config == configs.end()) {
      fail(".sizes", fmt::format("no size configuration is named \"{}\"", data.sizes));
    }
    for (const auto& [tensor_name, bytes] : data.inputs) {
      if (std::none_of(task.tensors.begin(), task.tensors.end(), [&](const TensorSpec& spec) {
            return spec.name == tensor_name && spec.role == TensorRole::input;
          })) {
        fail(".inputs." + tensor_name, "the task has no input tensor of this name");
      }
    }
    for (const auto& [tensor_name, bytes] : data.expected) {
      if (std::none_of(task.tensors.begin(), task.tensors.end(), [&](const TensorSpec& spec) {
            return spec.name == tensor_name && spec.role == TensorRole::output;
          })) {
        fail(".expected." + tensor_name, "the task has no output tensor of this name");
      }
    }
    for (const auto& spec : task.tensors) {
      const auto& group = spec.role == TensorRole::input ? data.inputs : data.expected;
      const auto found = group.find(spec.name);
      if (found == group.end()) {
        if (spec.role == TensorRole::input) fail(".inputs", fmt::format("missing the input {}", spec.name));
        continue;
      }
      const std::size_t bytes =
          static_cast<std::size_t>(task.element_count(spec, config->sizes)) * dtype_size(spec.dtype);
      if (!found->second || found->second->size() != bytes) {
        fail(fmt::format(".{}.{}", spec.role == TensorRole::input ? "inputs" : "expected", spec.name),
             fmt::format("holds {} bytes; {} {} at the sizes '{}' needs {}", found->second ? found->second->size() : 0,
                         to_string(spec.dtype), expression_shape_text(spec), data.sizes, bytes));
      }
    }
  }
}

}  // namespace detail
}  // namespace kernelsmith
