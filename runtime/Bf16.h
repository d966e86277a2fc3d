//===- Bf16.h - bf16 <-> f32 conversions, inline ------------------*- C++ -*-===//
//
// Inline and without branches, so that the loops converting whole buffers
// (a bf16 all-reduce's sums, random inputs) vectorize: out of line, the
// conversions of an in-process bf16 gradient all-reduce were a sixth of a
// data-parallel training step's samples (perf, T 512 top-8).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_BF16_H
#define MOEC_RUNTIME_BF16_H

#include <cstdint>
#include <cstring>

namespace moec {

/// f32 -> bf16, rounding to nearest even; a NaN stays a (quiet) NaN.
inline uint16_t f32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16;
  uint32_t quietNan = (u >> 16) | 0x40;
  return static_cast<uint16_t>(f != f ? quietNan : rounded);
}

inline float bf16ToF32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace moec

#endif
