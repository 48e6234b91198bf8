#include "opencl/opencl_api.hpp"

#include <fmt/format.h>

#include <exception>
#include <memory>
#include <mutex>

#include "detail/dynamic_library.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail::opencl {
namespace {

struct Loaded {
  std::unique_ptr<DynamicLibrary> library;
  Api api;
  std::exception_ptr failure;
};

Loaded& loaded() {
  // Leaked on purpose: ICD drivers keep threads that may still call in while statics are destroyed.
  static Loaded* instance = new Loaded();
  return *instance;
}

void load(Loaded& state) {
  try {
    const auto candidates = library_candidates("KERNELSMITH_OPENCL_LIBRARY", {}, {},
                                               {"libOpenCL.so.1", "libOpenCL.so"}, {});
    state.library = std::make_unique<DynamicLibrary>("OpenCL ICD loader", candidates);
    Api table;
#define KERNELSMITH_OPENCL_RESOLVE(name) \
  table.name = reinterpret_cast<decltype(table.name)>(state.library->symbol(#name));
    KERNELSMITH_OPENCL_FUNCTIONS(KERNELSMITH_OPENCL_RESOLVE)
#undef KERNELSMITH_OPENCL_RESOLVE
    table.library = state.library->resolved_path();
    state.api = table;
  } catch (...) {
    // Remember the failure: every later call reports the same reason without retrying dlopen.
    state.failure = std::current_exception();
  }
}

}  // namespace

const Api& api() {
  static std::once_flag once;
  Loaded& state = loaded();
  std::call_once(once, [&state] { load(state); });
  if (state.failure) std::rethrow_exception(state.failure);
  return state.api;
}

std::string error_name(cl_int code) {
  const char* name = nullptr;
  switch (code) {
#define KERNELSMITH_CL_ERROR(symbol) \
  case symbol:                       \
    name = #symbol;                  \
    break;
    KERNELSMITH_CL_ERROR(CL_SUCCESS)
    KERNELSMITH_CL_ERROR(CL_DEVICE_NOT_FOUND)
    KERNELSMITH_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    KERNELSMITH_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    KERNELSMITH_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    KERNELSMITH_CL_ERROR(CL_OUT_OF_RESOURCES)
    KERNELSMITH_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    KERNELSMITH_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    KERNELSMITH_CL_ERROR(CL_MEM_COPY_OVERLAP)
    KERNELSMITH_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    KERNELSMITH_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    KERNELSMITH_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    KERNELSMITH_CL_ERROR(CL_MAP_FAILURE)
    KERNELSMITH_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    KERNELSMITH_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    KERNELSMITH_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    KERNELSMITH_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    KERNELSMITH_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    KERNELSMITH_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    KERNELSMITH_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    KERNELSMITH_CL_ERROR(CL_INVALID_VALUE)
    KERNELSMITH_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    KERNELSMITH_CL_ERROR(CL_INVALID_PLATFORM)
    KERNELSMITH_CL_ERROR(CL_INVALID_DEVICE)
    KERNELSMITH_CL_ERROR(CL_INVALID_CONTEXT)
    KERNELSMITH_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    KERNELSMITH_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    KERNELSMITH_CL_ERROR(CL_INVALID_HOST_PTR)
    KERNELSMITH_CL_ERROR(CL_INVALID_MEM_OBJECT)
    KERNELSMITH_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    KERNELSMITH_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    KERNELSMITH_CL_ERROR(CL_INVALID_SAMPLER)
    KERNELSMITH_CL_ERROR(CL_INVALID_BINARY)
    KERNELSMITH_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    KERNELSMITH_CL_ERROR(CL_INVALID_PROGRAM)
    KERNELSMITH_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    KERNELSMITH_CL_ERROR(CL_INVALID_KERNEL_NAME)
    KERNELSMITH_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    KERNELSMITH_CL_ERROR(CL_INVALID_KERNEL)
    KERNELSMITH_CL_ERROR(CL_INVALID_ARG_INDEX)
    KERNELSMITH_CL_ERROR(CL_INVALID_ARG_VALUE)
    KERNELSMITH_CL_ERROR(CL_INVALID_ARG_SIZE)
    KERNELSMITH_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    KERNELSMITH_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    KERNELSMITH_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    KERNELSMITH_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    KERNELSMITH_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    KERNELSMITH_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    KERNELSMITH_CL_ERROR(CL_INVALID_EVENT)
    KERNELSMITH_CL_ERROR(CL_INVALID_OPERATION)
    KERNELSMITH_CL_ERROR(CL_INVALID_GL_OBJECT)
    KERNELSMITH_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    KERNELSMITH_CL_ERROR(CL_INVALID_MIP_LEVEL)
    KERNELSMITH_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    KERNELSMITH_CL_ERROR(CL_INVALID_PROPERTY)
    KERNELSMITH_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    KERNELSMITH_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    KERNELSMITH_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    KERNELSMITH_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef KERNELSMITH_CL_ERROR
    case -1001:
      name = "CL_PLATFORM_NOT_FOUND_KHR";
      break;
    default:
      break;
  }
  if (name == nullptr) return fmt::format("OpenCL error {}", code);
  return fmt::format("{} ({})", name, code);
}

}  // namespace kernelsmith::detail::opencl
