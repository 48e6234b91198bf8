# install + export + version file, so that find_package(kernelsmith) works on the installed tree: a prefix
# (`cmake --install`) or the wheel's package folder (`pip install .`). KERNELSMITH_INSTALL_*DIR, set in the
# top-level CMakeLists.txt, say where each part goes.
include(CMakePackageConfigHelpers)

# The wheel's library is one file named by its soname (lib/CMakeLists.txt); the link a linker looks for
# (libkernelsmith.so) would be a second copy there, and the exported target names the file itself.
if(SKBUILD)
  set(KERNELSMITH_NAMELINK NAMELINK_SKIP)
endif()
install(TARGETS kernelsmith EXPORT kernelsmithTargets
  LIBRARY DESTINATION ${KERNELSMITH_INSTALL_LIBDIR} ${KERNELSMITH_NAMELINK}
  ARCHIVE DESTINATION ${KERNELSMITH_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The worker sits next to the shared library: that is where the library looks for it.
install(TARGETS kernelsmith-worker kernelsmith-sandbox RUNTIME DESTINATION ${KERNELSMITH_INSTALL_LIBDIR})
# So does the MACA backend plugin, where it was built (an SDK was found).
if(TARGET kernelsmith_maca)
  install(TARGETS kernelsmith_maca LIBRARY DESTINATION ${KERNELSMITH_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kernelsmith DESTINATION ${KERNELSMITH_INSTALL_INCLUDEDIR})
install(FILES ${KERNELSMITH_GENERATED_INCLUDE_DIR}/kernelsmith/config.hpp
  DESTINATION ${KERNELSMITH_INSTALL_INCLUDEDIR}/kernelsmith)
# The tasks' float64 CPU references are test code, compiled into the test binary only.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tasks/ DESTINATION ${KERNELSMITH_INSTALL_DATADIR}/tasks
  PATTERN "cpu_reference.cpp" EXCLUDE)
# The built-in skill bank (docs/memory.md), found beside the library like the tasks.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/skills/ DESTINATION ${KERNELSMITH_INSTALL_DATADIR}/skills)

install(EXPORT kernelsmithTargets NAMESPACE kernelsmith:: DESTINATION ${KERNELSMITH_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kernelsmithConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfig.cmake INSTALL_DESTINATION ${KERNELSMITH_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfigVersion.cmake DESTINATION ${KERNELSMITH_INSTALL_CMAKEDIR})
