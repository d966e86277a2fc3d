//===- Safetensors.h - memory-mapped safetensors checkpoints ----*- C++ -*-===//
//
// A checkpoint as Hugging Face stores it: one `.safetensors` file, or
// several listed in `model.safetensors.index.json` (its "weight_map" names
// each tensor's file). A file is an 8-byte little-endian header length, a
// JSON header mapping each tensor name to {"dtype", "shape",
// "data_offsets": [begin, end]} (plus an optional "__metadata__"), then the
// raw little-endian data, offsets relative to the end of the header.
//
// Files are mapped read-only and their headers checked whole when opened:
// a truncated file, a header that lies about sizes or offsets (past the
// data, overlapping another tensor, not the shape's byte count), an
// unknown dtype or a malformed entry is an error naming the file and the
// tensor. Tensors are read (converted to f32 or bf16) only when asked for.
// The JSON is nlohmann-json's (Debian's nlohmann-json3-dev, header-only):
// the runtime links no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_SAFETENSORS_H
#define MOEC_RUNTIME_SAFETENSORS_H

#include "runtime/Buffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace moec {

/// A tensor's entry in a checkpoint.
struct CheckpointTensor {
  std::string name;
  std::string dtype; // F32, BF16, F16 or I8
  std::vector<int64_t> shape;
  std::string file;         // the file holding it
  const uint8_t *data = nullptr; // its bytes, in the file's mapping
  uint64_t bytes = 0;
};

class Checkpoint {
public:
  /// Opens `path`: a `.safetensors` file, a `model.safetensors.index.json`,
  /// or a directory holding either (the index first). Null with the reason
  /// in `error`.
  static std::unique_ptr<Checkpoint> open(const std::string &path, std::string &error);
  ~Checkpoint();

  /// The tensor named `name`, or null.
  const CheckpointTensor *find(const std::string &name) const;

  /// Tensor `name` as a buffer of `dtype` (F32 or BF16; I8 tensors only as
  /// I8), converted from its stored type (to F32 exactly; to BF16 rounding
  /// to nearest even). Its shape must be `shape` when given.
  /// False with "<file>: tensor '<name>': ..." in `error`.
  bool read(const std::string &name, DType dtype, Buffer &out, std::string &error,
            const std::vector<int64_t> *shape = nullptr) const;

  /// Every tensor's name, sorted.
  std::vector<std::string> names() const;

  /// What the checkpoint was opened from (for messages).
  const std::string &path() const { return path_; }

private:
  struct Mapping;
  Checkpoint() = default;
  bool addFile(const std::string &file, std::string &error);

  std::string path_;
  std::vector<std::unique_ptr<Mapping>> mappings_;
  std::map<std::string, CheckpointTensor> tensors_;
};

/// Parses one safetensors file held in memory (`bytes` of `size`) as
/// `file` names it: the tensors, or nullopt with the reason. What
/// Checkpoint::open checks of each file; the header fuzz test drives it.
std::optional<std::vector<CheckpointTensor>> parseSafetensors(const uint8_t *bytes, uint64_t size,
                                                              const std::string &file,
                                                              std::string &error);

} // namespace moec

#endif // MOEC_RUNTIME_SAFETENSORS_H
