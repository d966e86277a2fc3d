# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MOE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.moe_obj_root, "test")
# The GoogleTest suite runs under ctest, not lit.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs", "reference"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%moe_src_root", config.moe_src_root))
config.substitutions.append(("%moe_obj_root", config.moe_obj_root))
config.substitutions.append(("%examples", os.path.join(config.moe_src_root, "examples")))

# Sanitizer settings chosen by scripts/test.sh reach every test.
for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.moe_tools_dir, config.llvm_tools_dir]
tools = ["moe-opt", "moec", "moe-bench", "moe-kernel-bench", "run_block"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The host's bf16 and int8 instruction sets (what moec compiles for): tests of the
# code paths that need them say REQUIRES, the refusals UNSUPPORTED.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((l.split(":", 1)[1].split() for l in cpuinfo if l.startswith("flags")), [])
except OSError:
    flags = []
for flag, feature in (("avx2", "avx2"), ("avx512_bf16", "avx512bf16"), ("amx_bf16", "amx-bf16"),
                      ("avx512_fp16", "avx512fp16"), ("avx512_vnni", "avx512vnni"),
                      ("amx_int8", "amx-int8")):
    if flag in flags:
        config.available_features.add(feature)

# moe-bench --plot draws with Debian's matplotlib (scripts/setup.sh).
import subprocess
if subprocess.call(["/usr/bin/python3", "-c", "import matplotlib"], stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("matplotlib")

# Built with AddressSanitizer: its allocator (quarantine, redzones) makes
# memory measurements meaningless, so tests of them do not run there.
if getattr(config, "moe_sanitizers", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("asan")

# moec built with the MPI launcher, and mpiexec: the tests of sharded runs
# under mpirun (as root in CI, more ranks than cores on 2-core machines).
mpiexec = getattr(config, "moe_mpiexec", "")
if mpiexec:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", mpiexec + " --allow-run-as-root --oversubscribe"))

# Root (CI runs as root): tests that make device nodes with mknod.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    config.available_features.add("root")
# A tmpfs can be mounted in a private mount namespace (root, and a kernel
# or sandbox that allows it): the full-disk tests.
if subprocess.call(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("tmpfs-mount")
