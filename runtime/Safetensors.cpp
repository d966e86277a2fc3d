//===- Safetensors.cpp - memory-mapped safetensors checkpoints ------------===//

#include "runtime/Safetensors.h"

#include "runtime/AtomicFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace moec;

namespace {

/// Bytes per element of a safetensors dtype, 0 for one the format does not
/// have. Every standard dtype is checked for its bounds; moec reads F32,
/// BF16, F16 and I8 (read() refuses the others), so a checkpoint holding
/// tensors of other types elsewhere (GPT-OSS's MXFP4 blocks, FP8) opens.
size_t storedSize(const std::string &dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64")
    return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32")
    return 4;
  if (dtype == "BF16" || dtype == "F16" || dtype == "I16" || dtype == "U16")
    return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" ||
      dtype == "F8_E5M2")
    return 1;
  return 0;
}

bool readable(const std::string &dtype) {
  return dtype == "F32" || dtype == "BF16" || dtype == "F16" || dtype == "I8";
}

/// IEEE half to float, exactly (subnormals, infinities and NaN included).
float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // subnormal: normalise
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::string tensorError(const std::string &file, const std::string &name, const std::string &what) {
  return file + ": tensor '" + name + "': " + what;
}

} // namespace

std::optional<std::vector<CheckpointTensor>>
moec::parseSafetensors(const uint8_t *bytes, uint64_t size, const std::string &file,
                       std::string &error) {
  if (size < 8) {
    error = file + ": not a safetensors file: " + std::to_string(size) +
            " bytes, shorter than the 8-byte header length";
    return std::nullopt;
  }
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = headerLength << 8 | bytes[i];
  if (headerLength > size - 8) {
    error = file + ": the header claims " + std::to_string(headerLength) + " bytes but the file has " +
            std::to_string(size - 8) + " after the length (truncated, or not a safetensors file)";
    return std::nullopt;
  }
  nlohmann::json header = nlohmann::json::parse(bytes + 8, bytes + 8 + headerLength, nullptr,
                                                /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    error = file + ": the header is not a JSON object";
    return std::nullopt;
  }
  const uint8_t *data = bytes + 8 + headerLength;
  uint64_t dataSize = size - 8 - headerLength;
  std::vector<CheckpointTensor> tensors;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    auto fail = [&](const std::string &what) {
      error = tensorError(file, name, what);
      return std::nullopt;
    };
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets"))
      return fail("its entry needs \"dtype\", \"shape\" and \"data_offsets\"");
    const auto &dtype = entry["dtype"], &shape = entry["shape"], &offsets = entry["data_offsets"];
    if (!dtype.is_string())
      return fail("\"dtype\" is not a string");
    CheckpointTensor t;
    t.name = name;
    t.file = file;
    t.dtype = dtype.get<std::string>();
    size_t element = storedSize(t.dtype);
    if (!element)
      return fail("dtype " + t.dtype + " is not a safetensors dtype");
    if (!shape.is_array())
      return fail("\"shape\" is not a list");
    // The element count, refusing sizes whose product overflows.
    uint64_t count = 1;
    for (const auto &d : shape) {
      if (!d.is_number_unsigned())
        return fail("\"shape\" holds " + d.dump() + ", not a size");
      uint64_t v = d.get<uint64_t>();
      if (v > (uint64_t(1) << 48) || (v && count > (uint64_t(1) << 62) / v))
        return fail("shape " + shape.dump() + " is too large");
      count *= v;
      t.shape.push_back(int64_t(v));
    }
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      return fail("\"data_offsets\" is not [begin, end]");
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > dataSize)
      return fail("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] lie outside the " + std::to_string(dataSize) + " data bytes (truncated file?)");
    // (The count is checked against the data first: count * element could
    // wrap for a shape whose product is near 2^62.)
    if (count > dataSize / element)
      return fail("shape " + shape.dump() + " of " + t.dtype + " needs more than the " +
                  std::to_string(dataSize) + " data bytes");
    if (end - begin != count * element)
      return fail("data_offsets hold " + std::to_string(end - begin) + " bytes but shape " +
                  shape.dump() + " of " + t.dtype + " needs " + std::to_string(count * element));
    t.data = data + begin;
    t.bytes = end - begin;
    tensors.push_back(std::move(t));
  }
  // Tensors must not share bytes: a header whose offsets overlap lies.
  std::vector<const CheckpointTensor *> byOffset;
  for (const CheckpointTensor &t : tensors)
    if (t.bytes)
      byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const CheckpointTensor *a, const CheckpointTensor *b) { return a->data < b->data; });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i]->data < byOffset[i - 1]->data + byOffset[i - 1]->bytes) {
      error = tensorError(file, byOffset[i]->name,
                          "its data overlaps tensor '" + byOffset[i - 1]->name + "'");
      return std::nullopt;
    }
  return tensors;
}

struct Checkpoint::Mapping {
  void *address = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (address && size)
      munmap(address, size);
  }
};

Checkpoint::~Checkpoint() = default;

bool Checkpoint::addFile(const std::string &file, std::string &error) {
  // A FIFO or device would block or never end.
  if (!checkInputFile(file, error))
    return false;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = file + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = file + ": not a regular file";
    ::close(fd);
    return false;
  }
  auto mapping = std::make_unique<Mapping>();
  mapping->size = size_t(st.st_size);
  if (mapping->size) {
    mapping->address = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapping->address == MAP_FAILED) {
      mapping->address = nullptr;
      error = file + ": cannot map it: " + std::strerror(errno);
      ::close(fd);
      return false;
    }
  }
  ::close(fd);
  auto tensors = parseSafetensors(static_cast<const uint8_t *>(mapping->address), mapping->size,
                                  file, error);
  if (!tensors)
    return false;
  for (CheckpointTensor &t : *tensors) {
    auto [it, inserted] = tensors_.try_emplace(t.name, t);
    if (!inserted) {
      error = tensorError(file, t.name, "also in " + it->second.file);
      return false;
    }
  }
  mappings_.push_back(std::move(mapping));
  return true;
}

std::unique_ptr<Checkpoint> Checkpoint::open(const std::string &path, std::string &error) {
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  c->path_ = path;
  std::string file = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  if (S_ISDIR(st.st_mode)) {
    std::string index = path + "/model.safetensors.index.json";
    file = ::stat(index.c_str(), &st) == 0 ? index : path + "/model.safetensors";
  }
  std::string suffix = ".index.json";
  bool isIndex = file.size() >= suffix.size() &&
                 file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (!isIndex) {
    if (!c->addFile(file, error))
      return nullptr;
    return c;
  }
  // A sharded checkpoint: each file the weight map names, once.
  if (!checkInputFile(file, error))
    return nullptr;
  std::ifstream in(file);
  if (!in) {
    error = file + ": " + std::strerror(errno);
    return nullptr;
  }
  nlohmann::json index = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object()) {
    error = file + ": not a safetensors index (a JSON object with a \"weight_map\")";
    return nullptr;
  }
  std::string dir = file.substr(0, file.find_last_of('/') == std::string::npos
                                       ? 0
                                       : file.find_last_of('/') + 1);
  std::map<std::string, std::vector<std::string>> namesOfFile;
  for (auto &[name, shard] : index["weight_map"].items()) {
    if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos) {
      error = file + ": tensor '" + name + "': its file is not a file name in the index's directory";
      return nullptr;
    }
    namesOfFile[shard.get<std::string>()].push_back(name);
  }
  for (const auto &[shard, names] : namesOfFile) {
    if (!c->addFile(dir + shard, error))
      return nullptr;
    for (const std::string &name : names) {
      const CheckpointTensor *t = c->find(name);
      if (!t || t->file != dir + shard) {
        error = file + ": tensor '" + name + "' is listed in " + shard + " but is not in it";
        return nullptr;
      }
    }
  }
  return c;
}

const CheckpointTensor *Checkpoint::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto &entry : tensors_)
    out.push_back(entry.first);
  return out;
}

bool Checkpoint::read(const std::string &name, DType dtype, Buffer &out, std::string &error,
                      const std::vector<int64_t> *shape) const {
  const CheckpointTensor *t = find(name);
  if (!t) {
    error = path_ + ": no tensor '" + name + "'";
    return false;
  }
  if (shape && *shape != t->shape) {
    error = tensorError(t->file, name, "shape " + shapeString(t->shape) + ", expected " +
                                           shapeString(*shape));
    return false;
  }
  if (!readable(t->dtype)) {
    error = tensorError(t->file, name, "stored as " + t->dtype +
                                           ", which moec does not read (F32, BF16, F16, I8)");
    return false;
  }
  bool intStored = t->dtype == "I8";
  if (intStored != (dtype == DType::I8) || dtype == DType::I32) {
    error = tensorError(t->file, name, "stored as " + t->dtype + ", wanted as " + dtypeName(dtype));
    return false;
  }
  out = Buffer(dtype, t->shape);
  int64_t n = out.numElements();
  const uint8_t *src = t->data;
  // Unaligned little-endian loads: the data need not be aligned in the file.
  auto u16 = [&](int64_t i) {
    uint16_t v;
    std::memcpy(&v, src + 2 * i, 2);
    return v;
  };
  auto f32 = [&](int64_t i) {
    float v;
    std::memcpy(&v, src + 4 * i, 4);
    return v;
  };
  if (dtype == DType::I8) {
    std::memcpy(out.data(), src, size_t(n));
  } else if (t->dtype == "F32") {
    if (dtype == DType::F32)
      std::memcpy(out.data(), src, size_t(n) * 4);
    else
      for (int64_t i = 0; i < n; ++i)
        out.as<uint16_t>()[i] = f32ToBf16(f32(i));
  } else if (t->dtype == "BF16") {
    if (dtype == DType::BF16)
      std::memcpy(out.data(), src, size_t(n) * 2);
    else
      for (int64_t i = 0; i < n; ++i)
        out.as<float>()[i] = bf16ToF32(u16(i));
  } else { // F16
    for (int64_t i = 0; i < n; ++i) {
      float v = halfToFloat(u16(i));
      if (dtype == DType::F32)
        out.as<float>()[i] = v;
      else
        out.as<uint16_t>()[i] = f32ToBf16(v);
    }
  }
  return true;
}
