//===- Buffer.cpp - host tensors -------------------------------------------===//

#include "runtime/Buffer.h"
#include "runtime/HugePages.h"

#include <cassert>
#include <cstring>
#include <cstdio>

using namespace moec;

const char *moec::dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I8:
    return "i8";
  }
  return "?";
}

size_t moec::dtypeSize(DType t) {
  switch (t) {
  case DType::BF16:
    return 2;
  case DType::I8:
    return 1;
  default:
    return 4;
  }
}

std::string moec::shapeString(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += "x";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s.empty() ? "scalar" : s;
}

Buffer::Buffer(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  // 64-byte aligned, rounded up to whole lines; at least one line so that an
  // empty tensor still has a distinct address.
  size_t bytes = (numBytes() + 63) / 64 * 64;
  // malloc and a 64-byte step, not aligned_alloc: with moe-bench's malloc
  // settings (HostMemory.h: no mmap, no trimming) glibc 2.36 does not
  // reuse a freed block of a GiB for the next aligned_alloc of that size
  // but grows the heap, so a buffer made afresh each call (moe-bench's
  // assembled results of a sharded run, 2 GB of f32 weight gradients)
  // took new memory each call, which the kernel then cleared: in-process
  // data-parallel training spent a third of its samples in clear_page.
  // malloc gives the freed block back (a loop of 1 GiB buffers, touched
  // and freed: 0.05 s a turn from the second on, against 2-4 s a turn and
  // a GiB more of RSS each with aligned_alloc on this VM).
  void *raw = std::malloc((bytes ? bytes : 64) + 64);
  void *p = raw ? reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(raw) + 64) & ~uintptr_t(63))
                : nullptr;
  if (!p) {
    std::fprintf(stderr, "moec runtime: cannot allocate %zu bytes for a %s %s tensor\n",
                 bytes, shapeString(shape_).c_str(), dtypeName(dtype_));
    std::abort();
  }
  // Large tensors (weights, a batch's activations) on huge pages, advised
  // before the memset touches them (HugePages.h).
  adviseHugePages(p, bytes);
  std::memset(p, 0, bytes ? bytes : 64);
  storage_.reset(raw, [](void *q) { std::free(q); });
  data_ = p;
}

Buffer Buffer::view(DType dtype, std::vector<int64_t> shape, void *data) {
  Buffer b;
  b.dtype_ = dtype;
  b.shape_ = std::move(shape);
  b.data_ = data;
  return b;
}

Buffer Buffer::sharing(const Buffer &owner, std::vector<int64_t> shape, size_t byteOffset) {
  Buffer b;
  b.dtype_ = owner.dtype_;
  b.shape_ = std::move(shape);
  assert(byteOffset + b.numBytes() <= owner.numBytes() && "a block outside its owner");
  b.storage_ = owner.storage_;
  b.data_ = static_cast<char *>(owner.data_) + byteOffset;
  return b;
}

int64_t Buffer::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_)
    n *= d;
  return n;
}

double Buffer::at(int64_t i) const {
  switch (dtype_) {
  case DType::F32:
    return as<float>()[i];
  case DType::BF16:
    return bf16ToF32(as<uint16_t>()[i]);
  case DType::I32:
    return as<int32_t>()[i];
  case DType::I8:
    return as<int8_t>()[i];
  }
  return 0;
}

std::vector<int64_t> Buffer::descriptor() {
  std::vector<int64_t> words(3 + 2 * shape_.size());
  auto ptr = reinterpret_cast<int64_t>(data());
  words[0] = ptr;
  words[1] = ptr;
  words[2] = 0;
  int64_t stride = 1;
  for (int64_t i = rank() - 1; i >= 0; --i) {
    words[3 + i] = shape_[i];
    words[3 + rank() + i] = stride;
    stride *= shape_[i];
  }
  return words;
}

namespace {
/// Whether a descriptor's data is row-major without gaps (what the
/// generated code allocates).
bool rowMajor(int64_t rank, const int64_t *words) {
  const int64_t *shape = words + 3, *strides = words + 3 + rank;
  bool contiguous = true;
  for (int64_t d = rank - 1, expected = 1; d >= 0; expected *= shape[d], --d)
    contiguous &= shape[d] == 1 || strides[d] == expected;
  return contiguous;
}
} // namespace

Buffer Buffer::adoptDescriptor(DType dtype, int64_t rank, const int64_t *words,
                               const std::shared_ptr<void> &allocation) {
  if (!rowMajor(rank, words))
    return fromDescriptor(dtype, rank, words);
  Buffer b;
  b.dtype_ = dtype;
  b.shape_.assign(words + 3, words + 3 + rank);
  b.storage_ = allocation;
  b.data_ = reinterpret_cast<char *>(words[1]) + words[2] * int64_t(dtypeSize(dtype));
  return b;
}

Buffer Buffer::fromDescriptor(DType dtype, int64_t rank, const int64_t *words) {
  std::vector<int64_t> shape(words + 3, words + 3 + rank);
  const int64_t *strides = words + 3 + rank;
  Buffer out(dtype, shape);
  size_t size = dtypeSize(dtype);
  auto *base = reinterpret_cast<const char *>(words[1]) + words[2] * size;
  auto *dst = static_cast<char *>(out.data());
  int64_t n = out.numElements();
  // Row-major without gaps: one copy. An element at a time costs ~10 ns
  // each, tens of milliseconds for one block's result, which the benchmarks
  // would time as the block's.
  if (rowMajor(rank, words)) {
    if (n > 0)
      std::memcpy(dst, base, n * size);
    return out;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += index[d] * strides[d];
    std::memcpy(dst + e * size, base + offset * size, size);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

uint64_t moec::contentHash(const void *data, size_t n) {
  // FNV-1a over 8-byte words, then the tail bytes.
  uint64_t h = 1469598103934665603ull ^ n;
  const unsigned char *p = static_cast<const unsigned char *>(data);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    h = (h ^ word) * 1099511628211ull;
  }
  for (; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t Buffer::contentHash() const { return moec::contentHash(data(), numBytes()); }
