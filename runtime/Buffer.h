//===- Buffer.h - host tensors the runtime passes to generated code -*- C++ -*-===//
//
// A Buffer owns a 64-byte aligned, row-major array of f32, bf16, i32 or i8
// elements with a shape. It can describe itself as the memref descriptor
// the generated code's C interface takes ({allocated, aligned, offset,
// sizes[rank], strides[rank]}), and be filled from one such descriptor.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_BUFFER_H
#define MOEC_RUNTIME_BUFFER_H

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace moec {

enum class DType { F32, BF16, I32, I8 };

const char *dtypeName(DType t);
size_t dtypeSize(DType t);

/// bf16 <-> f32, rounding to nearest even (NaN stays NaN).
uint16_t f32ToBf16(float f);
float bf16ToF32(uint16_t b);

/// "2x3x?" style shape text, for messages.
std::string shapeString(const std::vector<int64_t> &shape);

/// A 64-bit hash of `bytes` bytes (FNV-1a over 8-byte words: GB/s), for
/// ranks that compare what they were given.
uint64_t contentHash(const void *data, size_t bytes);

class Buffer {
public:
  Buffer() = default;
  Buffer(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const;
  size_t numBytes() const { return numElements() * dtypeSize(dtype_); }
  void *data() { return data_.get(); }
  const void *data() const { return data_.get(); }
  template <typename T> T *as() { return static_cast<T *>(data()); }
  template <typename T> const T *as() const { return static_cast<const T *>(data()); }

  /// Element i as a double, whatever the storage type.
  double at(int64_t i) const;

  /// contentHash of the bytes, for ranks that check they were given the
  /// same inputs.
  uint64_t contentHash() const;

  /// The memref descriptor of this buffer, laid out as the C interface's
  /// struct: 3 + 2 * rank 64-bit words.
  std::vector<int64_t> descriptor();

  /// Copies the data a descriptor of `rank` dimensions points to (any
  /// strides) into a new buffer.
  static Buffer fromDescriptor(DType dtype, int64_t rank, const int64_t *words);

private:
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::unique_ptr<void, Free> data_;
};

} // namespace moec

#endif // MOEC_RUNTIME_BUFFER_H
