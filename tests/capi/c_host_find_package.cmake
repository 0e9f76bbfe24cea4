# ctest capi_c_host_find_package: configures and builds examples/c_host against the installed
# package in PREFIX (find_package(cortiq)), then runs it on MODEL with the golden TOKENS and
# checks its logits against REF (c_host exits non-zero beyond 1e-3).
#   cmake -DPREFIX= -DSOURCE_DIR= -DWORK_DIR= -DGENERATOR= -DC_COMPILER= -DMODEL= -DTOKENS= -DREF=
#         -P c_host_find_package.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
# CMAKE_FIND_USE_PACKAGE_REGISTRY=OFF and only PREFIX on the prefix path: the installed copy,
# never the build tree, is what the example finds.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run(${CMAKE_COMMAND} --build ${WORK_DIR})
run(${WORK_DIR}/c_host ${MODEL} ${TOKENS} ${REF})
