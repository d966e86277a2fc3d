// A target written in the module is kept; `cpu` replaces it; the host's
// target lists what this host has.
// RUN: moe-opt %s -moe-attach-target | FileCheck %s --check-prefix=KEPT
// RUN: moe-opt %s -moe-attach-target=cpu=haswell | FileCheck %s --check-prefix=NAMED
// RUN: not moe-opt %s -pass-pipeline='builtin.module(moe-attach-target{cpu=pentium9000})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: echo 'module {}' | moe-opt -moe-attach-target | FileCheck %s --check-prefix=HOST
// RUN: echo 'module {}' | not moe-opt -moe-select-lowering 2>&1 | FileCheck %s --check-prefix=MISSING

// KEPT: module attributes {moe.target = #moe.target<cpu = "mycpu", features = ["avx512f"], vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576, threads = 2>}
// NAMED: module attributes {moe.target = #moe.target<cpu = "haswell", features = ["avx2", "fma"], vector_registers = 8, l1_bytes = 49152, l2_bytes = 2097152>}
// UNKNOWN: error: moe-attach-target: unknown --target-cpu 'pentium9000' (`llc-22 -mcpu=help` lists the CPUs LLVM knows)
// HOST: module attributes {moe.target = #moe.target<cpu = "{{.+}}", features = [{{.*}}], vector_registers = {{8|32}}, l1_bytes = {{[0-9]+}}, l2_bytes = {{[0-9]+}}, threads = {{[1-9][0-9]*}}>}
// MISSING: error: moe-select-lowering needs the module's 'moe.target' (run moe-attach-target first; moe-to-llvm does)
module attributes {moe.target = #moe.target<threads = 2, l2_bytes = 1048576, cpu = "mycpu", features = ["avx512f"], l1_bytes = 32768, vector_registers = 32>} {}
