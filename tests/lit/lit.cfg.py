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

# llama.cpp's GGUF converter (the prebuilt reference of ../shared/reference, or
# $CORTIQ_LLAMA_CPP) with its Python dependencies: the tests that convert a synthetic checkpoint
# (REQUIRES: llama-converter) run only where both are present, never on a fresh CI machine.
import subprocess
llama_cpp = os.environ.get("CORTIQ_LLAMA_CPP", os.path.join(
    os.path.dirname(config.cortiq_src_root), "shared", "reference", "llama.cpp"))
converter = os.path.join(llama_cpp, "bin", "convert-hf-to-gguf")
if os.access(converter, os.X_OK) and subprocess.run(
        ["/usr/bin/python3", "-c", "import numpy, torch, yaml, tqdm"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("llama-converter")
    config.substitutions.append(("%convert_hf_to_gguf", converter))

# The reference's binaries are built for AVX-512 (its README) and die of SIGILL elsewhere: the
# tests that run them (REQUIRES: llama-tools) need a host where one starts.
if os.access(converter, os.X_OK) and subprocess.run(
        [os.path.join(config.cortiq_src_root, "scripts", "llama-cpp.sh"), "llama-tokenize",
         "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode in (0, 1):
    config.available_features.add("llama-tools")
