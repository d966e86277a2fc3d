//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// The format users already have for tensors. Reads little-endian, C-order
// arrays of float32, float64, int32 and int64 into a Buffer of the element
// type the program wants (converting floats to bf16, range-checking int64);
// writes f32 and i32 as themselves and bf16 as float32, since NumPy has no
// bfloat16 type.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_NPY_H
#define MOEC_RUNTIME_NPY_H

#include "runtime/Buffer.h"

#include <optional>
#include <string>

namespace moec {

/// The array in an .npy file, as stored.
struct NpyArray {
  std::string descr; // e.g. "<f4"
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

/// Reads `path`; on failure returns nullopt and sets `error` (naming the file).
std::optional<NpyArray> readNpy(const std::string &path, std::string &error);

/// readNpy without the data (`bytes` empty): the dtype and shape, after the
/// same checks, for a caller that needs only the sizes.
std::optional<NpyArray> readNpyHeader(const std::string &path, std::string &error);

/// Converts to a buffer of `want`; on failure sets `error` (what was stored
/// and what was wanted).
std::optional<Buffer> toBuffer(const NpyArray &array, DType want, std::string &error);

/// The bytes of an .npy file holding `buffer` (bf16 as float32).
std::string npyFileBytes(const Buffer &buffer);

/// Writes `buffer` to `path` (bf16 as float32), atomically: the whole file
/// or, on failure, none. Returns false and sets `error` on failure.
bool writeNpy(const std::string &path, const Buffer &buffer, std::string &error);

} // namespace moec

#endif // MOEC_RUNTIME_NPY_H
