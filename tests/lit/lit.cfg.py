# lit configuration of cortiq's FileCheck tests: the tools under test come from this build's
# bin/ directory, FileCheck/not/count from LLVM 15.
import os
import lit.formats

config.name = "cortiq"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cortiq_obj_root, "tests", "lit")

path = os.pathsep.join([config.cortiq_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["PATH"] = path
config.substitutions.append(("%data", config.test_data_dir))
config.substitutions.append(("%src", config.cortiq_src_root))
