# Checks the shared library's dynamic symbol table: the public API is exported on purpose
# (KERNELSMITH_API, include/kernelsmith/export.hpp) and nothing of the internals is. Run by CTest as
# `cmake -DNM=<nm> -DLIBRARY=<libkernelsmith.so> -P check_exports.cmake`.
execute_process(COMMAND ${NM} -D -C --defined-only ${LIBRARY}
  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_VARIABLE errors)
if(rc)
  message(FATAL_ERROR "${NM} -D -C --defined-only ${LIBRARY} failed (${rc}): ${errors}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")

# kernelsmith::detail holds the internals: lib/detail, lib/evaluate and the backends (detail::cuda,
# detail::opencl). None of it may be part of the ABI.
set(leaked "")
foreach(line IN LISTS lines)
  if(line MATCHES "detail::")
    list(APPEND leaked "${line}")
  endif()
endforeach()
list(LENGTH leaked leaked_count)
if(leaked_count GREATER 0)
  list(SUBLIST leaked 0 20 shown)
  list(JOIN shown "\n  " shown)
  message(FATAL_ERROR "${LIBRARY} exports ${leaked_count} internal symbol(s) of kernelsmith::detail, e.g.\n  "
    "${shown}\nKeep internal declarations out of include/kernelsmith and unmarked (no KERNELSMITH_API).")
endif()

# What must be there: a free function, a class's member, and the type_info of exceptions that callers
# catch by type across the library boundary.
foreach(required
    "kernelsmith::version[abi:cxx11]()"
    "kernelsmith::create_evaluator(kernelsmith::EvaluatorOptions const&)"
    "kernelsmith::Task::load("
    "typeinfo for kernelsmith::Error"
    "typeinfo for kernelsmith::TaskError"
    "typeinfo for kernelsmith::PlanError")
  string(FIND "${symbols}" "${required}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${LIBRARY} does not export '${required}': mark its declaration in "
      "include/kernelsmith with KERNELSMITH_API")
  endif()
endforeach()
list(LENGTH lines exported)
message(STATUS "${LIBRARY}: ${exported} exported symbols, none internal")
