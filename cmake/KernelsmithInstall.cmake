# install + export + version file, so that find_package(kernelsmith) works on the installed tree.
include(CMakePackageConfigHelpers)

install(TARGETS kernelsmith EXPORT kernelsmithTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The worker sits next to the shared library: that is where the library looks for it.
install(TARGETS kernelsmith-worker kernelsmith-sandbox RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR})
# So does the MACA backend plugin, where it was built (an SDK was found).
if(TARGET kernelsmith_maca)
  install(TARGETS kernelsmith_maca LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kernelsmith DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${KERNELSMITH_GENERATED_INCLUDE_DIR}/kernelsmith/config.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kernelsmith)
# The tasks' float64 CPU references are test code, compiled into the test binary only.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tasks/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kernelsmith/tasks
  PATTERN "cpu_reference.cpp" EXCLUDE)
# The built-in skill bank (docs/memory.md), found beside the library like the tasks.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/skills/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kernelsmith/skills)

set(KERNELSMITH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kernelsmith)
install(EXPORT kernelsmithTargets NAMESPACE kernelsmith:: DESTINATION ${KERNELSMITH_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kernelsmithConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfig.cmake INSTALL_DESTINATION ${KERNELSMITH_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/kernelsmithConfigVersion.cmake DESTINATION ${KERNELSMITH_CMAKE_DIR})
