// The scoped owners of device buffers and modules (lib/device_guard.hpp): driven through a backend that
// fails on cue (allocation N fails, load fails, giving back throws) to show that nothing leaks and no
// exception leaves a destructor, then through the real OpenCL backend (PoCL in CI).
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "device_guard.hpp"
#include "gpu_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"

using namespace kernelsmith;
using detail::DeviceBuffer;
using detail::DeviceModule;

static_assert(!std::is_copy_constructible_v<DeviceBuffer> && !std::is_copy_assignable_v<DeviceBuffer>);
static_assert(std::is_nothrow_move_constructible_v<DeviceBuffer> && std::is_nothrow_move_assignable_v<DeviceBuffer>);
static_assert(std::is_nothrow_destructible_v<DeviceBuffer> && std::is_nothrow_destructible_v<DeviceModule>);
static_assert(!std::is_copy_constructible_v<DeviceModule> && std::is_nothrow_move_constructible_v<DeviceModule>);

namespace {

// A backend with no device behind it that keeps the books: what is live, and how often each handle was
// given back. It fails on cue.
class FaultyBackend final : public Backend {
 public:
  int fail_allocation = 0;     ///< the 1-based allocate() call that throws DeviceError; 0: none does
  bool fail_load = false;      ///< load() throws DeviceError
  bool fail_give_back = false;  ///< free() and unload() throw DeviceFault, as after a lost context

  std::set<std::uint64_t> live_buffers;
  std::set<std::uint64_t> live_modules;
  std::map<std::uint64_t, int> given_back;  ///< free() and unload() calls per handle, failed ones too
  int allocations = 0;

  std::string name() const override { return "faulty"; }
  std::string language() const override { return "opencl"; }
  const DeviceInfo& device() const override { return info_; }

  CompiledProgram compile(const std::string&, const CompileOptions&) override {
    CompiledProgram program;
    program.language = "opencl";
    program.report.ok = true;
    return program;
  }
  std::uint64_t load(const CompiledProgram&) override {
    if (fail_load) throw DeviceError("load failed on cue");
    return *live_modules.insert(next_handle_++).first;
  }
  void unload(std::uint64_t module) override {
    ++given_back[module];
    if (fail_give_back) throw DeviceFault("unload failed on cue");
    if (live_modules.erase(module) == 0) throw NotFoundError("unload: not a live module");
  }
  std::uint64_t kernel(std::uint64_t, const std::string& name) override {
    throw NotFoundError("the faulty backend has no kernel " + name);
  }
  std::vector<KernelParam> kernel_params(std::uint64_t) override { return {}; }
  KernelResources kernel_resources(std::uint64_t) override { return {}; }

  std::uint64_t allocate(std::size_t) override {
    if (++allocations == fail_allocation) throw DeviceError("allocation failed on cue");
    return *live_buffers.insert(next_handle_++).first;
  }
  std::uint64_t adopt_external(std::uint64_t, std::size_t) override {
    return *live_buffers.insert(next_handle_++).first;
  }
  void free(std::uint64_t buffer) override {
    ++given_back[buffer];
    if (fail_give_back) throw DeviceFault("free failed on cue");
    if (live_buffers.erase(buffer) == 0) throw NotFoundError("free: not a live buffer");
  }
  void write(std::uint64_t, const void*, std::size_t) override {}
  void read(std::uint64_t, void*, std::size_t) override {}
  void fill(std::uint64_t, std::uint8_t, std::size_t) override {}
  void launch(std::uint64_t, Dim3, Dim3, std::size_t, const std::vector<KernelArg>&) override {}
  void synchronize() override {}
  void timer_start() override {}
  double timer_stop_ms() override { return 0.0; }

  // Every handle ever handed out was given back exactly once.
  bool each_given_back_once() const {
    for (const auto& [handle, count] : given_back) {
      if (count != 1) return false;
    }
    return static_cast<std::uint64_t>(given_back.size()) == next_handle_ - 1;
  }

 private:
  DeviceInfo info_;
  std::uint64_t next_handle_ = 1;
};

}  // namespace

TEST_CASE("device buffers and modules are given back when their owners go out of scope", "[device_guard]") {
  FaultyBackend backend;
  {
    const DeviceBuffer first = detail::allocate_buffer(backend, 64);
    const DeviceBuffer adopted = detail::adopt_buffer(backend, 0x1000, 64);
    const DeviceModule module = detail::load_module(backend, backend.compile("", {}));
    CHECK(first);
    CHECK(backend.live_buffers == std::set<std::uint64_t>{first.get(), adopted.get()});
    CHECK(backend.live_modules == std::set<std::uint64_t>{module.get()});
  }
  CHECK(backend.live_buffers.empty());
  CHECK(backend.live_modules.empty());
  CHECK(backend.each_given_back_once());
}

TEST_CASE("moving an owner hands the handle on: only the last owner gives it back", "[device_guard]") {
  FaultyBackend backend;
  DeviceBuffer kept;
  CHECK_FALSE(kept);
  {
    DeviceBuffer original = detail::allocate_buffer(backend, 64);
    const std::uint64_t handle = original.get();
    DeviceBuffer moved(std::move(original));
    CHECK_FALSE(original);  // NOLINT(bugprone-use-after-move): the moved-from state is what is checked
    CHECK(moved.get() == handle);
    kept = std::move(moved);
    CHECK(kept.get() == handle);
  }
  CHECK(backend.live_buffers.size() == 1);  // the moved-from owners gave nothing back

  // Assigning over an owner gives its old handle back at once.
  const std::uint64_t replaced = kept.get();
  kept = detail::allocate_buffer(backend, 64);
  CHECK(backend.live_buffers.count(replaced) == 0);
  CHECK(backend.live_buffers.size() == 1);

  // A vector that grows moves its owners; none is given back twice.
  {
    std::vector<DeviceBuffer> many;
    for (int i = 0; i < 40; ++i) many.push_back(detail::allocate_buffer(backend, 64));
    CHECK(backend.live_buffers.size() == 41);
  }
  kept.reset();
  CHECK_FALSE(kept);
  CHECK(backend.live_buffers.empty());
  CHECK(backend.each_given_back_once());
}

TEST_CASE("release() hands the handle to the caller, who then gives it back", "[device_guard]") {
  FaultyBackend backend;
  std::uint64_t handle = 0;
  {
    DeviceBuffer buffer = detail::allocate_buffer(backend, 64);
    handle = buffer.release();
    CHECK_FALSE(buffer);
    CHECK(buffer.get() == 0);
  }
  CHECK(backend.live_buffers.count(handle) == 1);
  backend.free(handle);
  CHECK(backend.each_given_back_once());
}

TEST_CASE("when allocation N fails, the buffers made before it are given back", "[device_guard]") {
  for (int failing = 1; failing <= 4; ++failing) {
    FaultyBackend backend;
    backend.fail_allocation = failing;
    std::vector<DeviceBuffer> made;
    try {
      std::vector<DeviceBuffer> buffers;
      for (int i = 0; i < 4; ++i) buffers.push_back(detail::allocate_buffer(backend, 64));
      made = std::move(buffers);
    } catch (const DeviceError& error) {
      CHECK(std::string(error.what()) == "allocation failed on cue");
    }
    INFO("allocation " << failing << " fails");
    CHECK(made.empty());
    CHECK(backend.allocations == failing);
    CHECK(backend.live_buffers.empty());
    CHECK(backend.each_given_back_once());
  }
}

TEST_CASE("a load that fails leaves nothing to unload, and the buffers of the scope are given back",
          "[device_guard]") {
  FaultyBackend backend;
  backend.fail_load = true;
  const auto load_after_allocating = [&backend] {
    const DeviceBuffer input = detail::allocate_buffer(backend, 64);
    const DeviceBuffer output = detail::allocate_buffer(backend, 64);
    const DeviceModule module = detail::load_module(backend, backend.compile("", {}));
  };
  CHECK_THROWS_AS(load_after_allocating(), DeviceError);
  CHECK(backend.live_buffers.empty());
  CHECK(backend.live_modules.empty());
  CHECK(backend.each_given_back_once());  // the two buffers; no unload of a module never loaded
  CHECK(backend.given_back.size() == 2);
}

TEST_CASE("giving back that throws never leaves a destructor, even while another exception unwinds",
          "[device_guard]") {
  FaultyBackend backend;
  backend.fail_give_back = true;
  CHECK_NOTHROW([&backend] {
    const DeviceBuffer buffer = detail::allocate_buffer(backend, 64);
    const DeviceModule module = detail::load_module(backend, backend.compile("", {}));
  }());
  CHECK(backend.given_back.size() == 2);

  // A destructor that threw here would call std::terminate; the original error must reach the caller.
  try {
    const DeviceBuffer buffer = detail::allocate_buffer(backend, 64);
    const DeviceModule module = detail::load_module(backend, backend.compile("", {}));
    throw std::runtime_error("the original error");
  } catch (const std::runtime_error& error) {
    CHECK(std::string(error.what()) == "the original error");
  }
  CHECK(backend.given_back.size() == 4);
  CHECK(backend.each_given_back_once());  // tried once each, not retried

  // reset() gives back early, with the same no-throw promise.
  DeviceBuffer early = detail::allocate_buffer(backend, 64);
  CHECK_NOTHROW(early.reset());
  CHECK_FALSE(early);
}

TEST_CASE("the owners give real OpenCL buffers and programs back", "[device_guard][opencl]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  auto backend = create_backend("opencl", 0);
  CompileOptions options;
  options.kernels = {"add_one"};
  const CompiledProgram program = backend->compile(R"(
__kernel void add_one(__global int* x) { x[get_global_id(0)] += 1; }
)",
                                                   options);
  REQUIRE(program.report.ok);

  std::uint64_t buffer_handle = 0;
  std::uint64_t module_handle = 0;
  {
    const DeviceBuffer buffer = detail::allocate_buffer(*backend, 4 * sizeof(int));
    const DeviceModule module = detail::load_module(*backend, program);
    std::vector<int> values{1, 2, 3, 4};
    backend->write(buffer.get(), values.data(), values.size() * sizeof(int));
    backend->launch(backend->kernel(module.get(), "add_one"), {4, 1, 1}, {1, 1, 1}, 0,
                    {{KernelArg::Kind::buffer, buffer.get(), 0}});
    backend->synchronize();
    backend->read(buffer.get(), values.data(), values.size() * sizeof(int));
    CHECK(values == std::vector<int>{2, 3, 4, 5});
    buffer_handle = buffer.get();
    module_handle = module.get();
  }
  int value = 0;
  CHECK_THROWS_AS(backend->read(buffer_handle, &value, sizeof(value)), ValidationError);  // freed
  CHECK_THROWS_AS(backend->kernel(module_handle, "add_one"), ValidationError);          // unloaded

  // A program the OpenCL compiler rejects: load throws, and the buffer made before it is given back.
  CompiledProgram broken = backend->compile("__kernel void broken(__global int* x) { x[0] = ; }", options);
  const auto load_broken = [&] {
    const DeviceBuffer buffer = detail::allocate_buffer(*backend, sizeof(int));
    buffer_handle = buffer.get();
    const DeviceModule module = detail::load_module(*backend, broken);
  };
  CHECK_THROWS_AS(load_broken(), Error);
  CHECK_THROWS_AS(backend->read(buffer_handle, &value, sizeof(value)), ValidationError);
}
