//===- Npy.cpp - NumPy .npy files ------------------------------------------===//

#include "runtime/Npy.h"

#include "runtime/AtomicFile.h"
#include "runtime/MemoryGuard.h"

#include <cstring>
#include <sys/stat.h>
#include <fstream>
#include <limits>
#include <sstream>

using namespace moec;

namespace {
/// The value of `key` in the header dict text, up to the next top-level
/// comma or closing brace.
std::optional<std::string> headerField(const std::string &header,
                                       const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return std::nullopt;
  size_t colon = header.find(':', at);
  if (colon == std::string::npos)
    return std::nullopt;
  size_t begin = colon + 1, depth = 0, end = begin;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  std::string value = header.substr(begin, end - begin);
  size_t first = value.find_first_not_of(" \t"), last = value.find_last_not_of(" \t");
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}
} // namespace

namespace {
/// readNpy, or with `withData` false readNpyHeader: every check of the
/// header against the file either way.
std::optional<NpyArray> readNpyFile(const std::string &path, bool withData, std::string &error) {
  // An ifstream opens a directory and reads nothing from it; a FIFO waits
  // for a writer.
  if (struct stat info; stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    error = path + ": cannot open: " + std::strerror(EISDIR);
    return std::nullopt;
  }
  if (!checkInputFile(path, error))
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return std::nullopt;
  }
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    error = path + ": not an .npy file (bad magic)";
    return std::nullopt;
  }
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    unsigned char len[2];
    in.read(reinterpret_cast<char *>(len), 2);
    headerLen = len[0] | (len[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char len[4];
    in.read(reinterpret_cast<char *>(len), 4);
    headerLen = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
  } else {
    error = path + ": unsupported .npy version " + std::to_string(int(magic[6]));
    return std::nullopt;
  }
  std::string header(headerLen, '\0');
  if (!in || !in.read(header.data(), headerLen)) {
    error = path + ": truncated .npy header";
    return std::nullopt;
  }
  auto descr = headerField(header, "descr");
  auto fortran = headerField(header, "fortran_order");
  auto shapeText = headerField(header, "shape");
  if (!descr || !fortran || !shapeText) {
    error = path + ": malformed .npy header";
    return std::nullopt;
  }
  NpyArray array;
  array.descr = descr->size() >= 2 ? descr->substr(1, descr->size() - 2) : "";
  if (*fortran != "False") {
    error = path + ": Fortran-order arrays are not supported (save np.ascontiguousarray(a))";
    return std::nullopt;
  }
  std::string dims = *shapeText;
  for (char &c : dims)
    if (c == '(' || c == ')' || c == ',')
      c = ' ';
  std::istringstream dimStream(dims);
  int64_t d;
  while (dimStream >> d) {
    if (d < 0) {
      error = path + ": negative dimension in shape " + *shapeText;
      return std::nullopt;
    }
    array.shape.push_back(d);
  }
  size_t elementSize = array.descr.size() >= 3 ? std::atoi(array.descr.c_str() + 2) : 0;
  if (elementSize == 0) {
    error = path + ": unsupported dtype '" + array.descr + "'";
    return std::nullopt;
  }
  // Check what the header promises against what the file holds before
  // allocating: a corrupt shape must not become a huge allocation.
  std::streampos dataStart = in.tellg();
  in.seekg(0, std::ios::end);
  uint64_t available = static_cast<uint64_t>(in.tellg() - dataStart);
  in.seekg(dataStart);
  uint64_t count = 1;
  bool overflow = false;
  for (int64_t dim : array.shape)
    overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count);
  uint64_t needed;
  overflow |= __builtin_mul_overflow(count, static_cast<uint64_t>(elementSize), &needed);
  if (overflow || needed > available) {
    error = path + ": truncated data: the header's shape " + *shapeText + " needs " +
            (overflow ? std::string("more than 2^64") : std::to_string(needed)) +
            " bytes, the file holds " + std::to_string(available);
    return std::nullopt;
  }
  // A file may hold more than memory (a sparse one, or a large one): refused
  // as the run's own buffers are (runtime/MemoryGuard.h), not allocated.
  if (std::string shortfall = memoryShortfall(needed); !shortfall.empty()) {
    error = path + ": the array of shape " + *shapeText + " needs " + shortfall;
    return std::nullopt;
  }
  if (!withData)
    return array;
  array.bytes.resize(needed);
  if (!in.read(array.bytes.data(), array.bytes.size())) {
    error = path + ": the data could not be read to its end (the file changed?)";
    return std::nullopt;
  }
  return array;
}
} // namespace

std::optional<NpyArray> moec::readNpy(const std::string &path, std::string &error) {
  return readNpyFile(path, /*withData=*/true, error);
}

std::optional<NpyArray> moec::readNpyHeader(const std::string &path, std::string &error) {
  return readNpyFile(path, /*withData=*/false, error);
}

std::optional<Buffer> moec::toBuffer(const NpyArray &array, DType want,
                                     std::string &error) {
  const std::string &t = array.descr;
  bool isFloat = t == "<f4" || t == "<f8";
  bool isInt = t == "<i4" || t == "<i8";
  bool isByte = t == "|i1" || t == "<i1";
  bool wantInt = want == DType::I32 || want == DType::I8;
  if ((want == DType::I8 && !isByte) || (want == DType::I32 && !isInt) || (!wantInt && !isFloat)) {
    error = "stored dtype '" + t + "' cannot be read as " + dtypeName(want) +
            (want == DType::I8 ? " (expects int8)"
             : want == DType::I32 ? " (expects int32 or int64)"
                                  : " (expects float32 or float64)");
    return std::nullopt;
  }
  if (want == DType::I8) {
    Buffer out(want, array.shape);
    std::memcpy(out.data(), array.bytes.data(), out.numBytes());
    return out;
  }
  Buffer out(want, array.shape);
  int64_t n = out.numElements();
  const char *src = array.bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    if (want == DType::I32) {
      int64_t v;
      if (t == "<i4") {
        int32_t v32;
        std::memcpy(&v32, src + 4 * i, 4);
        v = v32;
      } else {
        std::memcpy(&v, src + 8 * i, 8);
      }
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        error = "element " + std::to_string(i) + " (" + std::to_string(v) +
                ") does not fit in i32";
        return std::nullopt;
      }
      out.as<int32_t>()[i] = static_cast<int32_t>(v);
      continue;
    }
    double v;
    if (t == "<f4") {
      float f;
      std::memcpy(&f, src + 4 * i, 4);
      v = f;
    } else {
      std::memcpy(&v, src + 8 * i, 8);
    }
    if (want == DType::F32)
      out.as<float>()[i] = static_cast<float>(v);
    else
      out.as<uint16_t>()[i] = f32ToBf16(static_cast<float>(v));
  }
  return out;
}

std::string moec::npyFileBytes(const Buffer &buffer) {
  std::string shape = "(";
  for (int64_t d : buffer.shape())
    shape += std::to_string(d) + ", ";
  if (buffer.rank() > 1)
    shape.erase(shape.size() - 2); // "(2, 3)"
  else if (buffer.rank() == 1)
    shape.erase(shape.size() - 1); // "(3,)"
  shape += ")";
  const char *descr = buffer.dtype() == DType::I32 ? "<i4" : buffer.dtype() == DType::I8 ? "|i1" : "<f4";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic, version, length, header and newline padded to 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  if (buffer.dtype() == DType::BF16) {
    std::vector<float> widened(buffer.numElements());
    for (int64_t i = 0; i < buffer.numElements(); ++i)
      widened[i] = bf16ToF32(buffer.as<uint16_t>()[i]);
    bytes.append(reinterpret_cast<const char *>(widened.data()), widened.size() * 4);
  } else {
    bytes.append(static_cast<const char *>(buffer.data()), buffer.numBytes());
  }
  return bytes;
}

bool moec::writeNpy(const std::string &path, const Buffer &buffer, std::string &error) {
  // Whole or not at all (runtime/AtomicFile.h): a failed write leaves no
  // partial .npy.
  return writeFileAtomically(path, npyFileBytes(buffer), error);
}
