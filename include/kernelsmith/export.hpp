// What the shared library exports. It is built with hidden visibility (lib/CMakeLists.txt), so a symbol
// is in its ABI only when its declaration says so: KERNELSMITH_API marks the public classes (those with
// member functions defined in the library, virtual functions or exceptions, whose type_info must be one
// across the library boundary) and the free functions declared in include/kernelsmith/. Data-only
// structs need no mark. Internals (kernelsmith::detail, lib/evaluate, the backends) stay unexported;
// the tests and the worker program reach them through the static library built from the same objects.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define KERNELSMITH_API __attribute__((visibility("default")))
#else
#define KERNELSMITH_API
#endif
