//===- SafetensorsTest.cpp - the checkpoint reader and its refusals -------===//
//
// Files written here byte by byte (the format has no writer in moec): a
// valid file read back in every dtype, a sharded checkpoint through its
// index, and each corruption the reader must refuse with the file and the
// tensor named; then a fuzz round of mutated headers that must each end in
// tensors or an error.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace moec;

namespace {

/// A temporary directory, removed with its files.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/moec-safetensors-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

/// header JSON + data, with the 8-byte little-endian length in front.
std::string safetensors(const std::string &header, const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = char((n >> (8 * i)) & 0xff);
  return out + header + data;
}

void write(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string floats(std::initializer_list<float> values) {
  std::string s;
  for (float v : values)
    s.append(reinterpret_cast<const char *>(&v), 4);
  return s;
}

std::string halves(std::initializer_list<uint16_t> values) {
  std::string s;
  for (uint16_t v : values)
    s.append(reinterpret_cast<const char *>(&v), 2);
  return s;
}

/// "a": F32 [2, 2]; "b": BF16 [3]; "c": F16 [2]; "q": I8 [4].
std::string validFile() {
  std::string data = floats({1.0f, -2.5f, 3.0f, 0.5f}) + halves({0x3f80, 0xc000, 0x4049}) +
                     halves({0x3c00, 0x0001}) + std::string("\x01\xff\x7f\x80", 4);
  std::string header = R"({"__metadata__": {"format": "pt"},)"
                       R"("a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},)"
                       R"("b": {"dtype": "BF16", "shape": [3], "data_offsets": [16, 22]},)"
                       R"("c": {"dtype": "F16", "shape": [2], "data_offsets": [22, 26]},)"
                       R"("q": {"dtype": "I8", "shape": [4], "data_offsets": [26, 30]}})";
  return safetensors(header, data);
}

std::string openError(const std::string &path) {
  std::string error;
  EXPECT_EQ(Checkpoint::open(path, error), nullptr) << path;
  return error;
}

TEST(Safetensors, ReadsEveryDtypeAndConverts) {
  TempDir dir;
  write(dir.file("model.safetensors"), validFile());
  std::string error;
  auto c = Checkpoint::open(dir.path, error); // the directory: its model.safetensors
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->names(), (std::vector<std::string>{"a", "b", "c", "q"}));
  Buffer a, b, cf, cb, q;
  ASSERT_TRUE(c->read("a", DType::F32, a, error)) << error;
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.at(1), -2.5);
  ASSERT_TRUE(c->read("a", DType::BF16, b, error)) << error; // F32 -> BF16
  EXPECT_EQ(b.at(3), 0.5);
  ASSERT_TRUE(c->read("b", DType::F32, b, error)) << error; // BF16 -> F32, exact
  EXPECT_EQ(b.at(0), 1.0);
  EXPECT_EQ(b.at(1), -2.0);
  EXPECT_FLOAT_EQ(b.at(2), 3.140625f);
  ASSERT_TRUE(c->read("c", DType::F32, cf, error)) << error; // F16 -> F32, a subnormal too
  EXPECT_EQ(cf.at(0), 1.0);
  EXPECT_EQ(cf.at(1), std::ldexp(1.0, -24));
  ASSERT_TRUE(c->read("c", DType::BF16, cb, error)) << error;
  EXPECT_EQ(cb.at(0), 1.0);
  ASSERT_TRUE(c->read("q", DType::I8, q, error)) << error;
  EXPECT_EQ(q.at(1), -1);
  EXPECT_EQ(q.at(3), -128);
  std::vector<int64_t> wrong = {4, 1};
  EXPECT_FALSE(c->read("a", DType::F32, a, error, &wrong));
  EXPECT_NE(error.find("model.safetensors: tensor 'a': shape 2x2, expected 4x1"), std::string::npos)
      << error;
  EXPECT_FALSE(c->read("q", DType::F32, a, error));
  EXPECT_NE(error.find("tensor 'q': stored as I8, wanted as f32"), std::string::npos) << error;
  EXPECT_FALSE(c->read("missing", DType::F32, a, error));
  EXPECT_NE(error.find("no tensor 'missing'"), std::string::npos) << error;
  // Other dtypes open (a checkpoint's MXFP4 blocks, say) and are refused
  // only when read.
  TempDir other;
  write(other.file("u8.safetensors"),
        safetensors(R"({"blocks": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})", "ab"));
  auto u8 = Checkpoint::open(other.file("u8.safetensors"), error);
  ASSERT_TRUE(u8) << error;
  EXPECT_FALSE(u8->read("blocks", DType::F32, a, error));
  EXPECT_NE(error.find("tensor 'blocks': stored as U8, which moec does not read"), std::string::npos)
      << error;
  EXPECT_FALSE(c->read("missing", DType::F32, a, error));
  EXPECT_NE(error.find("no tensor 'missing'"), std::string::npos) << error;
}

TEST(Safetensors, ShardedThroughTheIndex) {
  TempDir dir;
  write(dir.file("model-00001-of-00002.safetensors"),
        safetensors(R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                    floats({7.0f})));
  write(dir.file("model-00002-of-00002.safetensors"),
        safetensors(R"({"y": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
                    floats({1.0f, 2.0f})));
  write(dir.file("model.safetensors.index.json"),
        R"({"metadata": {"total_size": 12}, "weight_map": {"x": "model-00001-of-00002.safetensors",)"
        R"( "y": "model-00002-of-00002.safetensors"}})");
  std::string error;
  auto c = Checkpoint::open(dir.path, error);
  ASSERT_TRUE(c) << error;
  Buffer y;
  ASSERT_TRUE(c->read("y", DType::F32, y, error)) << error;
  EXPECT_EQ(y.at(1), 2.0);
  // An index naming a tensor its file lacks.
  write(dir.file("model.safetensors.index.json"),
        R"({"weight_map": {"x": "model-00001-of-00002.safetensors", "z": "model-00001-of-00002.safetensors"}})");
  EXPECT_NE(openError(dir.path).find("tensor 'z' is listed in model-00001-of-00002.safetensors but "
                                     "is not in it"),
            std::string::npos);
  // One naming a file that is not there, or outside its directory.
  write(dir.file("model.safetensors.index.json"), R"({"weight_map": {"x": "gone.safetensors"}})");
  EXPECT_NE(openError(dir.path).find("gone.safetensors"), std::string::npos);
  write(dir.file("model.safetensors.index.json"), R"({"weight_map": {"x": "../x.safetensors"}})");
  EXPECT_NE(openError(dir.path).find("tensor 'x': its file is not a file name in the index's directory"),
            std::string::npos);
  write(dir.file("model.safetensors.index.json"), R"([1, 2])");
  EXPECT_NE(openError(dir.path).find("not a safetensors index"), std::string::npos);
}

TEST(Safetensors, RefusesEachCorruptionNamingFileAndTensor) {
  TempDir dir;
  struct Case {
    std::string name, bytes, message;
  };
  std::string valid = validFile();
  std::vector<Case> cases = {
      {"short", "abc", "not a safetensors file: 3 bytes, shorter than the 8-byte header length"},
      {"truncated-header", valid.substr(0, 40), "the header claims"},
      {"truncated-data", valid.substr(0, valid.size() - 3),
       "tensor 'q': data_offsets [26, 30] lie outside the 27 data bytes (truncated file?)"},
      {"not-json", safetensors("{nope", ""), "the header is not a JSON object"},
      {"size-lie",
       safetensors(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", floats({1, 2})),
       "tensor 'a': shape [3] of F32 needs more than the 8 data bytes"},
      {"offsets-lie",
       safetensors(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}})", floats({1, 2})),
       "tensor 'a': data_offsets hold 8 bytes but shape [1] of F32 needs 4"},
      {"offsets-backwards",
       safetensors(R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})", floats({1, 2})),
       "tensor 'a': data_offsets [8, 4] lie outside"},
      {"overlap",
       safetensors(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                   R"("b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                   floats({1, 2, 3})),
       "its data overlaps tensor"},
      {"dtype", safetensors(R"({"a": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})",
                            floats({1, 2, 3, 4})),
       "tensor 'a': dtype F128 is not a safetensors dtype"},
      {"wrapping-size",
       safetensors(R"({"a": {"dtype": "F32", "shape": [2147483648, 2147483648], "data_offsets": [0, 0]}})",
                   ""),
       "tensor 'a': shape [2147483648,2147483648] of F32 needs more than the 0 data bytes"},
      {"negative-shape",
       safetensors(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", floats({1})),
       "tensor 'a': \"shape\" holds -1, not a size"},
      {"huge-shape",
       safetensors(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})",
                   floats({1})),
       "tensor 'a': shape [4294967296,4294967296] is too large"},
      {"missing-key", safetensors(R"({"a": {"dtype": "F32", "shape": [1]}})", floats({1})),
       "tensor 'a': its entry needs \"dtype\", \"shape\" and \"data_offsets\""},
  };
  for (const Case &c : cases) {
    std::string path = dir.file(c.name + ".safetensors");
    write(path, c.bytes);
    std::string error = openError(path);
    EXPECT_NE(error.find(path + ": "), std::string::npos) << c.name << ": " << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.name << ": " << error;
  }
  // Not a regular file: a FIFO would block.
  std::string fifo = dir.file("fifo.safetensors");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(openError(fifo).empty());
}

// Mutated headers and lengths (bytes flipped, cut, lengths changed): each
// ends in tensors whose bytes lie in the file, or an error; never a crash
// (ASan checks the reads in the sanitizer build).
TEST(Safetensors, FuzzedHeadersEndInTensorsOrAnError) {
  std::string valid = validFile();
  std::mt19937_64 rng(12345);
  int parsed = 0, refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = valid;
    int edits = 1 + int(rng() % 4);
    for (int i = 0; i < edits; ++i) {
      size_t at = rng() % bytes.size();
      switch (rng() % 4) {
      case 0:
        bytes[at] = char(rng());
        break;
      case 1:
        bytes[at] = "0123456789[]{},:\"-"[rng() % 18];
        break;
      case 2:
        bytes.resize(at + 1);
        break;
      default:
        bytes.insert(at, 1, char("0123456789"[rng() % 10]));
        break;
      }
    }
    std::string error;
    auto tensors = parseSafetensors(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
                                    "fuzz", error);
    if (!tensors) {
      ++refused;
      EXPECT_EQ(error.rfind("fuzz: ", 0), 0u) << error;
      continue;
    }
    ++parsed;
    const uint8_t *begin = reinterpret_cast<const uint8_t *>(bytes.data());
    for (const CheckpointTensor &t : *tensors)
      EXPECT_TRUE(t.data >= begin && t.data + t.bytes <= begin + bytes.size()) << t.name;
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(refused, 0);
}

} // namespace
