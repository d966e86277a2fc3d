//===- CompilerBuiltins.h - libcalls LLVM emits that libgcc 12 lacks -*- C++ -*-===//
//
// LLVM lowers some bf16 operations it cannot do in registers (a select or
// a truncation of bf16 vectors on a CPU without AVX512_BF16) to calls of
// compiler-rt's __truncsfbf2, which GCC's libgcc only has from GCC 13 on;
// Debian 12 ships GCC 12. moe-expand-bf16-conversions removes the calls it
// can see in MLIR; these are for the ones LLVM's legalizer makes later.
// The JIT resolves them here; moec links compiler-rt's builtins into a .so.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_COMPILERBUILTINS_H
#define MOEC_RUNTIME_COMPILERBUILTINS_H

#include <utility>
#include <vector>

extern "C" {
/// __truncsfbf2: f32 -> bf16, rounded to nearest even (NaN kept quiet). The
/// x86-64 ABI returns a bf16 in the low 16 bits of xmm0; GCC 12 has no
/// __bf16 type to say so, so this returns a float whose bits are the bf16's
/// (the caller reads the low 16 bits and never computes with the float).
float moert_truncsfbf2(float value);
}

namespace moec {
/// Name -> address of each builtin, for the JIT's symbol map.
std::vector<std::pair<const char *, void *>> compilerBuiltinSymbols();
} // namespace moec

#endif // MOEC_RUNTIME_COMPILERBUILTINS_H
