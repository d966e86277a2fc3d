//===- Buffer.h - host tensors the runtime passes to generated code -*- C++ -*-===//
//
// A Buffer is a row-major array of f32, bf16, i32 or i8 elements with a
// shape. Usually it owns its memory (64-byte aligned); it can also be a view
// of memory someone else keeps alive for as long as the Buffer is used (a
// NumPy array or torch tensor the Python module passes without copying),
// own memory generated code allocated for a result (adopted, not copied), or
// share another Buffer's (a shard's block of an input, at an element's
// alignment: generated code assumes no more). It
// can describe itself as the memref descriptor the generated code's C
// interface takes ({allocated, aligned, offset, sizes[rank], strides[rank]}),
// and be made from one such descriptor.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_BUFFER_H
#define MOEC_RUNTIME_BUFFER_H

#include "runtime/Bf16.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace moec {

enum class DType { F32, BF16, I32, I8 };

const char *dtypeName(DType t);
size_t dtypeSize(DType t);

/// "2x3x?" style shape text, for messages.
std::string shapeString(const std::vector<int64_t> &shape);

/// A 64-bit hash of `bytes` bytes (FNV-1a over 8-byte words: GB/s), for
/// ranks that compare what they were given.
uint64_t contentHash(const void *data, size_t bytes);

class Buffer {
public:
  Buffer() = default;
  /// Owned, zeroed, 64-byte aligned memory.
  Buffer(DType dtype, std::vector<int64_t> shape);
  /// A view of `data` (row-major, numElements() elements), which the caller
  /// keeps alive and unchanged while the Buffer is used. Generated code
  /// loads without assuming more than the element's alignment.
  static Buffer view(DType dtype, std::vector<int64_t> shape, void *data);
  /// `shape` of `owner`'s memory from byte `byteOffset` on (a run of it that
  /// owner holds), sharing its ownership: the memory lives while either
  /// does (a view's, while its caller keeps it). A write through either
  /// shows in the other: for blocks only read, such as the inputs a rank's
  /// generated code is given (its arguments are read-only, see
  /// codegen/EmitCInterface.cpp).
  static Buffer sharing(const Buffer &owner, std::vector<int64_t> shape, size_t byteOffset);
  // A moved-from Buffer is empty (no data), not a view of what it held.
  Buffer(Buffer &&other) noexcept { *this = std::move(other); }
  Buffer &operator=(Buffer &&other) noexcept {
    dtype_ = other.dtype_;
    shape_ = std::exchange(other.shape_, {});
    storage_ = std::move(other.storage_);
    data_ = std::exchange(other.data_, nullptr);
    return *this;
  }
  // A copy would share the memory: say so with view() instead.
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  /// Whether the Buffer owns (or shares ownership of) its memory.
  bool ownsMemory() const { return storage_ != nullptr; }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const;
  size_t numBytes() const { return numElements() * dtypeSize(dtype_); }
  void *data() { return data_; }
  const void *data() const { return data_; }
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
  /// The buffer a descriptor describes, taking over `allocation` (memory
  /// generated code malloc'ed, freed with std::free when the last Buffer
  /// sharing it goes) when the data is row-major without gaps; else a copy
  /// (and `allocation` is left alone).
  static Buffer adoptDescriptor(DType dtype, int64_t rank, const int64_t *words,
                                const std::shared_ptr<void> &allocation);

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  /// What keeps data_ alive (null for a view).
  std::shared_ptr<void> storage_;
  void *data_ = nullptr;
};

} // namespace moec

#endif // MOEC_RUNTIME_BUFFER_H
