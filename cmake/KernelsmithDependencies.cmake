# Third-party dependencies. fmt, nlohmann-json, Eigen and SQLite are used inside the library only
# (linked PRIVATE), so a consumer of the installed package needs none of their headers.
find_package(Threads REQUIRED)

if(NOT TARGET fmt::fmt)
  find_package(fmt REQUIRED)
endif()

find_package(nlohmann_json 3.9 QUIET)
if(NOT nlohmann_json_FOUND)
  find_path(KERNELSMITH_NLOHMANN_INCLUDE_DIR nlohmann/json.hpp REQUIRED)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${KERNELSMITH_NLOHMANN_INCLUDE_DIR})
endif()

find_package(Eigen3 3.3 QUIET NO_MODULE)
if(NOT TARGET Eigen3::Eigen)
  find_path(KERNELSMITH_EIGEN_INCLUDE_DIR Eigen/Core PATH_SUFFIXES eigen3 REQUIRED)
  add_library(Eigen3::Eigen INTERFACE IMPORTED)
  target_include_directories(Eigen3::Eigen INTERFACE ${KERNELSMITH_EIGEN_INCLUDE_DIR})
endif()

# The GPU machine has libsqlite3.so.0 but no sqlite3.h: SQLITE3_INCLUDE_DIR may point at a
# carried header, and the runtime library is found by its soname.
find_package(SQLite3 QUIET)
if(NOT SQLite3_FOUND)
  find_path(KERNELSMITH_SQLITE_INCLUDE_DIR sqlite3.h HINTS ${SQLITE3_INCLUDE_DIR} REQUIRED)
  find_library(KERNELSMITH_SQLITE_LIBRARY NAMES sqlite3 libsqlite3.so.0 REQUIRED)
  add_library(SQLite::SQLite3 UNKNOWN IMPORTED)
  set_target_properties(SQLite::SQLite3 PROPERTIES
    IMPORTED_LOCATION ${KERNELSMITH_SQLITE_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${KERNELSMITH_SQLITE_INCLUDE_DIR})
endif()

if(KERNELSMITH_BUILD_TESTS)
  # Catch2 v3 (Ubuntu 24.04) ships a CMake package; Debian 12 ships the v2 single header.
  find_package(Catch2 3 QUIET)
  if(Catch2_FOUND)
    set(KERNELSMITH_CATCH2_VERSION 3)
  else()
    find_path(KERNELSMITH_CATCH2_INCLUDE_DIR catch2/catch.hpp REQUIRED)
    set(KERNELSMITH_CATCH2_VERSION 2)
  endif()
endif()
