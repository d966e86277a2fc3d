//===- CompilerBuiltins.cpp - libcalls LLVM emits that libgcc 12 lacks ----===//

#include "runtime/CompilerBuiltins.h"

#include "runtime/Buffer.h"

#include <cstdint>
#include <cstring>

float moert_truncsfbf2(float value) {
  uint32_t bits = moec::f32ToBf16(value);
  float carrier;
  std::memcpy(&carrier, &bits, sizeof carrier);
  return carrier;
}

std::vector<std::pair<const char *, void *>> moec::compilerBuiltinSymbols() {
  return {{"__truncsfbf2", reinterpret_cast<void *>(&moert_truncsfbf2)}};
}
