// Task::infer_sizes, Task::add_case and the "cases" of task manifests (lib/task_cases.cpp): sizes read from
// the caller's shapes, the caller's data cases checked against the task, and their JSON.
#include <cstdint>
#include <map>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/task.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;
using test::host_ref;
using test::random_floats;

TEST_CASE("Task::infer_sizes reads sizes from shapes and names every mismatch", "[task_cases]") {
  const Task row_sum = Task::load("row_sum");
  CHECK(row_sum.infer_sizes({{"x", {3, 1023}}}) == SizeMap{{"M", 3}, {"K", 1023}});
  CHECK(row_sum.infer_sizes({{"x", {3, 5}}, {"y", {3}}}) == SizeMap{{"M", 3}, {"K", 5}});
  CHECK(row_sum.infer_sizes({{"y", {7}}}, {{"K", 2}}) == SizeMap{{"M", 7}, {"K", 2}});

  auto message_of = [&](const std::map<std::string, std::vector<std::int64_t>>& shapes, const SizeMap& given) {
    try {
      row_sum.infer_sizes(shapes, given);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string rank = message_of({{"x", {12}}}, {});
  CHECK(rank.find("tensor x has shape (12) (1 dimension)") != std::string::npos);
  CHECK(rank.find("[M, K]") != std::string::npos);
  const std::string inconsistent = message_of({{"x", {3, 5}}, {"y", {4}}}, {});
  CHECK(inconsistent.find("inconsistent size M") != std::string::npos);
  CHECK(inconsistent.find("says 3") != std::string::npos);
  CHECK(inconsistent.find("says 4") != std::string::npos);
  CHECK(message_of({{"y", {3}}}, {}).find("cannot infer the size K") != std::string::npos);
  CHECK(message_of({{"x", {3, 5}}}, {{"K", 6}}).find("inconsistent size K") != std::string::npos);
  CHECK(message_of({{"z", {3}}}, {}).find("no tensor \"z\"") != std::string::npos);
  CHECK(message_of({{"x", {3, 5}}}, {{"Q", 1}}).find("no size \"Q\"") != std::string::npos);
  CHECK(message_of({{"x", {0, 5}}}, {}).find("must be positive") != std::string::npos);
}


TEST_CASE("Task data cases: add_case, JSON round trip and validation", "[task_cases]") {
  Task task = Task::load("relu");
  const std::size_t configs_before = task.all_size_configs().size();
  std::vector<float> x = {1.0f, -2.0f, 1234.5f, 0.5f};
  std::vector<float> y = {1.0f, 0.0f, 1234.5f, 0.5f};
  const DataCase& first = task.add_case({{"x", host_ref(x, {4})}});
  CHECK(first.name == "user case 0");
  CHECK(first.sizes == "user case 0");  // N = 4 is no configuration of relu's: one is added
  CHECK(task.all_size_configs().size() == configs_before + 1);
  std::vector<float> x1023 = random_floats(1023, 4);
  const DataCase& second = task.add_case({{"x", host_ref(x1023, {1023})}});
  CHECK(second.sizes == "odd_1023");  // an existing configuration is reused
  const DataCase& third = task.add_case({{"x", host_ref(x, {4})}}, {{"y", host_ref(y, {4})}});
  CHECK(third.sizes == "user case 0");  // the configuration the first case added
  CHECK(task.all_size_configs().size() == configs_before + 1);

  const Task back = Task::from_json(task.to_json());
  REQUIRE(back.cases.size() == 3);
  CHECK(back.cases[2].name == "user case 2");
  CHECK(*back.cases[2].expected.at("y") == *task.cases[2].expected.at("y"));
  CHECK(*back.cases[1].inputs.at("x") == *task.cases[1].inputs.at("x"));
  CHECK(back.to_json() == task.to_json());

  {
    const std::string message = error_of([&] { task.add_case({}); });
    INFO(message);
    CHECK((contains(message, "x is missing")));
  }
  {
    const std::string message = error_of([&] { task.add_case({{"y", host_ref(y, {4})}}); });
    INFO(message);
    CHECK((contains(message, "y is an output")));
  }
  {
    const std::string message = error_of([&] { task.add_case({{"x", host_ref(x, {4})}}, {{"y", host_ref(y, {3})}}); });
    INFO(message);
    CHECK((contains(message, "inconsistent size N")));
  }
  Task broken = task;
  broken.cases[0].inputs["x"] = std::make_shared<const std::vector<std::uint8_t>>(3, std::uint8_t(0));
  {
    const std::string message = error_of([&] { broken.validate(); });
    INFO(message);
    CHECK((contains(message, "cases[0].inputs.x") && contains(message, "holds 3 bytes")));
  }
  broken = task;
  broken.cases[1].sizes = "nowhere";
  {
    const std::string message = error_of([&] { broken.validate(); });
    INFO(message);
    CHECK((contains(message, "no size configuration is named \"nowhere\"")));
  }
}

TEST_CASE("Task::infer_sizes checks dimensions that are expressions of the sizes", "[task_cases]") {
  Task task = Task::load("relu");
  task.tensors.at(0).shape = {"2 * N"};  // x holds twice as many values as y: N is read from y alone
  CHECK(task.infer_sizes({{"x", {8}}, {"y", {4}}}) == SizeMap{{"N", 4}});
  const std::string message = error_of([&] { task.infer_sizes({{"x", {7}}, {"y", {4}}}); });
  INFO(message);
  CHECK(contains(message, "tensor x has shape (7); with N=4 task relu expects [2 * N] = (8)"));
  CHECK(contains(error_of([&] { task.infer_sizes({{"x", {8}}}); }), "cannot infer the size N"));
}

TEST_CASE("Task::add_case refuses what it cannot keep: wrong dtype or role, device memory, no data",
          "[task_cases]") {
  Task task = Task::load("relu");
  std::vector<float> x = {1.0f, -2.0f, 3.0f, -4.0f};
  std::vector<double> wide = {1.0, -2.0, 3.0, -4.0};
  TensorRef doubles{DType::float64, {4}, wide.data(), false};
  CHECK(contains(error_of([&] { task.add_case({{"x", doubles}}); }), "input x is float64; task relu declares it float32"));
  CHECK(contains(error_of([&] { task.add_case({{"x", host_ref(x, {4})}}, {{"y", doubles}}); }),
                 "expected output y is float64; task relu declares it float32"));
  CHECK(contains(error_of([&] { task.add_case({{"x", host_ref(x, {4})}}, {{"x", host_ref(x, {4})}}); }),
                 "x is an input of task relu; give it under inputs="));
  TensorRef on_device = host_ref(x, {4});
  on_device.on_device = true;
  CHECK(contains(error_of([&] { task.add_case({{"x", on_device}}); }), "input x is in device memory"));
  TensorRef null_data = host_ref(x, {4});
  null_data.data = nullptr;
  CHECK(contains(error_of([&] { task.add_case({{"x", null_data}}); }), "input x has no data (a null pointer)"));
  CHECK(task.cases.empty());  // a refused case leaves no trace

  // A kept case is a copy: the caller's array may change afterwards.
  const DataCase& kept = task.add_case({{"x", host_ref(x, {4})}});
  x[0] = 99.0f;
  const auto& bytes = *kept.inputs.at("x");
  REQUIRE(bytes.size() == 4 * sizeof(float));
  float first = 0.0f;
  std::memcpy(&first, bytes.data(), sizeof(float));
  CHECK(first == 1.0f);
  CHECK(kept.expected.empty());
}

TEST_CASE("a manifest's cases are validated: names, size configurations, tensors and byte counts",
          "[task_cases]") {
  Task task = Task::load("relu");
  std::vector<float> x = random_floats(4, 7);
  task.add_case({{"x", host_ref(x, {4})}});
  task.add_case({{"x", host_ref(x, {4})}});
  const auto problem = [&task](auto&& change) {
    Task broken = task;
    change(broken.cases);
    return error_of([&] { broken.validate(); });
  };
  CHECK(contains(problem([](auto& cases) { cases[0].name.clear(); }), "cases[0].name: expected a non-empty name"));
  CHECK(contains(problem([](auto& cases) { cases[1].name = cases[0].name; }),
                 "cases[1].name: the name \"user case 0\" is used twice"));
  CHECK(contains(problem([](auto& cases) { cases[0].inputs["z"] = cases[0].inputs.at("x"); }),
                 "cases[0].inputs.z: the task has no input tensor of this name"));
  CHECK(contains(problem([](auto& cases) { cases[1].expected["x"] = cases[1].inputs.at("x"); }),
                 "cases[1].expected.x: the task has no output tensor of this name"));
  CHECK(contains(problem([](auto& cases) { cases[0].inputs.erase("x"); }), "cases[0].inputs: missing the input x"));
  CHECK(contains(problem([](auto& cases) {
                   cases[1].expected["y"] = std::make_shared<const std::vector<std::uint8_t>>(15, std::uint8_t(0));
                 }),
                 "cases[1].expected.y: holds 15 bytes; float32 [N] at the sizes 'user case 0' needs 16"));
  CHECK(error_of([&] { task.validate(); }) == "no error");
}

TEST_CASE("a manifest's cases keep their bytes through JSON, and bad base64 is named by its path", "[task_cases]") {
  Task task = Task::load("relu");
  std::vector<float> x = random_floats(1023, 3);
  std::vector<float> y = x;
  task.add_case({{"x", host_ref(x, {1023})}}, {{"y", host_ref(y, {1023})}});
  const std::string json = task.to_json();
  CHECK(contains(json, "\"cases\""));
  CHECK(contains(json, "\"base64\""));
  const Task back = Task::from_json(json);
  REQUIRE(back.cases.size() == 1);
  CHECK(back.cases[0].sizes == "odd_1023");
  CHECK(*back.cases[0].inputs.at("x") == *task.cases[0].inputs.at("x"));
  CHECK(*back.cases[0].expected.at("y") == *task.cases[0].expected.at("y"));

  std::string damaged = json;
  const std::size_t at = damaged.find("\"base64\"");
  REQUIRE(at != std::string::npos);
  const std::size_t value = damaged.find('"', damaged.find(':', at) + 1);
  damaged.insert(value + 1, "!");
  const std::string message = error_of([&] { Task::from_json(damaged); });
  INFO(message);
  CHECK(contains(message, "cases[0].inputs.x.base64"));
}
