# libcortiq.so: the C API (cortiq.h, c_api.cc) over cortiq_runtime, exporting only cortiq_*
# symbols, and its install rules (component "cortiq"): headers in include/cortiq/, the library,
# a CMake package (find_package(cortiq) -> cortiq::cortiq) and a pkg-config file (cortiq.pc).
# Included from runtime/CMakeLists.txt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The library version is the API version of cortiq.h (one source of truth): VERSION <major>.<minor>.0,
# SOVERSION = API major (libcortiq.so.1), bumped exactly when the ABI breaks.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cortiq.h)
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/cortiq.h _cortiq_version_lines
     REGEX "^#define CORTIQ_API_VERSION_(MAJOR|MINOR) [0-9]+$")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*" "\\1" CORTIQ_API_VERSION_MAJOR "${_cortiq_version_lines}")
string(REGEX REPLACE ".*MINOR ([0-9]+).*" "\\1" CORTIQ_API_VERSION_MINOR "${_cortiq_version_lines}")
if(NOT CORTIQ_API_VERSION_MAJOR MATCHES "^[0-9]+$" OR NOT CORTIQ_API_VERSION_MINOR MATCHES "^[0-9]+$")
  message(FATAL_ERROR "runtime/cortiq.h: cannot read CORTIQ_API_VERSION_MAJOR/MINOR "
                      "(each must be a line '#define CORTIQ_API_VERSION_<X> <number>')")
endif()
set(CORTIQ_API_VERSION_STRING "${CORTIQ_API_VERSION_MAJOR}.${CORTIQ_API_VERSION_MINOR}.0")

add_library(cortiq SHARED c_api.cc c_api_text.cc)
add_library(cortiq::cortiq ALIAS cortiq)
target_link_libraries(cortiq PRIVATE cortiq_generation cortiq_runtime)
target_include_directories(cortiq INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(cortiq PROPERTIES
  VERSION ${CORTIQ_API_VERSION_STRING}
  SOVERSION ${CORTIQ_API_VERSION_MAJOR}
  C_VISIBILITY_PRESET hidden
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
  LINK_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/c_api.map)
# -fvisibility=hidden covers c_api.cc; the version script also hides everything the static
# cortiq_runtime / cortiq_ops archives bring in. --no-undefined: the library resolves all of
# its symbols itself (not with the sanitizers or the fuzz build, whose runtime the executable
# provides).
target_link_options(cortiq PRIVATE "LINKER:--version-script=${CMAKE_CURRENT_SOURCE_DIR}/c_api.map")
if(NOT CORTIQ_SANITIZE AND NOT CORTIQ_FUZZ)
  target_link_options(cortiq PRIVATE "LINKER:--no-undefined")
endif()

set(_cortiq_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/cortiq)
install(TARGETS cortiq EXPORT cortiqTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT cortiq
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cortiq)
install(FILES cortiq.h cortiq.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cortiq COMPONENT cortiq)
install(EXPORT cortiqTargets NAMESPACE cortiq::
  DESTINATION ${_cortiq_cmake_dir} COMPONENT cortiq)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cortiqConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cortiqConfig.cmake INSTALL_DESTINATION ${_cortiq_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cortiqConfigVersion.cmake
  VERSION ${CORTIQ_API_VERSION_STRING} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cortiqConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/cortiqConfigVersion.cmake
  DESTINATION ${_cortiq_cmake_dir} COMPONENT cortiq)
# cortiq.pc finds the prefix from its own location (${pcfiledir}), so one file serves any
# `cmake --install --prefix`.
file(RELATIVE_PATH CORTIQ_PC_PREFIX_FROM_PCDIR
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/cortiq.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cortiq.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cortiq.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT cortiq)
