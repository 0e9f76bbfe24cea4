# ctest fixture capi_install: installs the "cortiq" component (headers, libcortiq, CMake package,
# cortiq.pc) of BUILD_DIR into a fresh PREFIX.
#   cmake -DBUILD_DIR=... -DPREFIX=... -P install_package.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(
  COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component cortiq
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
