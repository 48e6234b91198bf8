// The error model: every exception the library throws derives from kernelsmith::Error.
//
// Messages say what was wrong, where (file, field, line, library) and what to do. Problems with a
// *candidate* kernel are never exceptions: they come back as an Evaluation with a status. Exceptions
// are for problems of the caller's inputs or the environment.
#pragma once

#include <stdexcept>
#include <string>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// Root of the hierarchy; derived from std::runtime_error so `catch (const std::exception&)` works.
class KERNELSMITH_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Malformed input from the caller: a task manifest, a JSON document, an option value.
class KERNELSMITH_API ValidationError : public Error {
 public:
  using Error::Error;
};

/// A mistake in a launch plan or an expression: the harness turns it into an `invalid_launch`
/// evaluation; outside an evaluation (a task's shapes, a work model) it reaches the caller.
class KERNELSMITH_API PlanError : public ValidationError {
 public:
  PlanError(const std::string& message, int line) : ValidationError(message), line_(line) {}
  /// 1-based source line, 0 when the mistake is not tied to one line.
  int line() const { return line_; }

 private:
  int line_;
};

/// A problem of the task rather than of a candidate: its reference does not compile or fails, or its
/// output is near-constant on random inputs. The evaluator throws it to the caller instead of
/// returning an Evaluation, since no candidate can be judged against a broken task.
class KERNELSMITH_API TaskError : public ValidationError {
 public:
  using ValidationError::ValidationError;
};

/// Something named does not exist: a task name, a file, a program id, a device index.
class KERNELSMITH_API NotFoundError : public Error {
 public:
  using Error::Error;
};

/// The feature exists in the API but is not implemented for this case (e.g. the MACA backend).
class KERNELSMITH_API NotSupportedError : public Error {
 public:
  using Error::Error;
};

/// A backend cannot be used here. Subclasses separate the three ways a run-time library fails.
class KERNELSMITH_API BackendUnavailableError : public Error {
 public:
  using Error::Error;
};

/// No file of the library could be found (e.g. "CUDA driver libcuda.so.1 not found").
class KERNELSMITH_API LibraryNotFoundError : public BackendUnavailableError {
 public:
  using BackendUnavailableError::BackendUnavailableError;
};

/// The library was found but dlopen failed (wrong architecture, missing dependency, ...).
class KERNELSMITH_API LibraryLoadError : public BackendUnavailableError {
 public:
  using BackendUnavailableError::BackendUnavailableError;
};

/// The library loaded but lacks a function we need (too old a driver or toolkit).
class KERNELSMITH_API SymbolMissingError : public BackendUnavailableError {
 public:
  using BackendUnavailableError::BackendUnavailableError;
};

/// A call into a device API failed outside a candidate's evaluation (e.g. cuInit, clGetPlatformIDs).
class KERNELSMITH_API DeviceError : public Error {
 public:
  using Error::Error;
};

/// The run store (SQLite) failed: cannot open, schema mismatch, a write error.
class KERNELSMITH_API StoreError : public Error {
 public:
  using Error::Error;
};

/// An operation did not finish within its deadline (e.g. an LLM request, a worker handshake).
class KERNELSMITH_API TimeoutError : public Error {
 public:
  using Error::Error;
};

}  // namespace kernelsmith
