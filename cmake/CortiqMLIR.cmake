# cortiq_use_mlir(): call at the top of a directory whose targets use MLIR/LLVM. It applies
# LLVM's global compile options (e.g. -fno-exceptions) to that directory scope only, so ops/ and
# runtime/ keep their own flags.
macro(cortiq_use_mlir)
  # LLVM 15's TableGen.cmake writes depfiles with paths relative to the build root; CMake's
  # CMP0116 (NEW since our minimum version 3.20) would rewrite them again and make every build
  # rerun mlir-tblgen and relink everything downstream.
  cmake_policy(SET CMP0116 OLD)
  include(TableGen)
  include(AddLLVM)
  include(AddMLIR)
  include(HandleLLVMOptions)
  set(MLIR_TABLEGEN_EXE ${CORTIQ_LLVM_TOOLS_DIR}/mlir-tblgen)
  include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  include_directories(${PROJECT_BINARY_DIR})
  separate_arguments(_cortiq_llvm_defs NATIVE_COMMAND ${LLVM_DEFINITIONS})
  add_definitions(${_cortiq_llvm_defs})
endmacro()
