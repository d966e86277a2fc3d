//===- moe-fuzz-mutate.cpp - FuzzCompile's target without libFuzzer -------===//
//
// The byte fuzz target (FuzzCompile.cpp: parse, verify, moe-default,
// moe-to-llvm) driven by a plain random mutator, so that it runs in the
// normal build with any compiler and CI gets a short round of it every run
// (libFuzzer's coverage-guided search needs the clang build: scripts/fuzz.sh).
// Each input is a seed program (every .mlir under the given directories,
// each `// -----` piece on its own) with one to four mutations: bytes
// flipped, ranges deleted or repeated, a dictionary token inserted, a piece
// of another seed spliced in, a number replaced by an extreme one.
//
// A crash or hang ends the process: the input being tried is always in
// --current (written before each try), the seed is printed first, and
// `--replay FILE` runs one file. Repeat a run with --seed.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

using namespace llvm;

namespace {

cl::OptionCategory category("moe-fuzz-mutate options");
cl::list<std::string> seedDirs(cl::Positional, cl::desc("<directories of .mlir seeds>"),
                               cl::cat(category));
cl::opt<std::string> dictFile("dict", cl::desc("Tokens to insert (libFuzzer's dictionary format)"),
                              cl::init(""), cl::cat(category));
cl::opt<double> seconds("seconds", cl::desc("How long to fuzz"), cl::init(30), cl::cat(category));
cl::opt<uint64_t> seedOption("seed", cl::desc("Random seed (default: from the clock, printed)"),
                             cl::init(0), cl::cat(category));
cl::opt<std::string> currentFile("current",
                                 cl::desc("Where the input being tried is kept (for a crash)"),
                                 cl::init("moe-fuzz-mutate-current.mlir"), cl::cat(category));
cl::opt<std::string> replay("replay", cl::desc("Run this one file and stop"), cl::init(""),
                            cl::cat(category));

int fail(const std::string &message) {
  errs() << "moe-fuzz-mutate: error: " << message << "\n";
  return 1;
}

/// `"token"` lines of a libFuzzer dictionary (with \" and \\ escapes).
std::vector<std::string> readDictionary(StringRef path, std::string &error) {
  std::vector<std::string> tokens;
  auto file = MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    error = path.str() + ": " + file.getError().message();
    return tokens;
  }
  SmallVector<StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (StringRef line : lines) {
    line = line.trim();
    size_t open = line.find('"');
    if (line.starts_with("#") || open == StringRef::npos || !line.ends_with("\""))
      continue;
    StringRef quoted = line.drop_front(open + 1).drop_back();
    std::string token;
    for (size_t i = 0; i < quoted.size(); ++i)
      token += quoted[i] == '\\' && i + 1 < quoted.size() ? quoted[++i] : quoted[i];
    tokens.push_back(token);
  }
  return tokens;
}

std::vector<std::string> readSeeds(std::string &error) {
  std::vector<std::string> seeds;
  for (const std::string &dir : seedDirs) {
    std::error_code ec;
    for (sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec)) {
      if (sys::path::extension(it->path()) != ".mlir")
        continue;
      auto file = MemoryBuffer::getFile(it->path(), /*IsText=*/true);
      if (!file)
        continue;
      SmallVector<StringRef> pieces;
      (*file)->getBuffer().split(pieces, "\n// -----\n");
      for (StringRef piece : pieces)
        if (piece.size() <= 16384)
          seeds.push_back(piece.str());
    }
    if (ec) {
      error = dir + ": " + ec.message();
      return {};
    }
  }
  return seeds;
}

struct Mutator {
  std::mt19937_64 rng;
  const std::vector<std::string> &seeds, &tokens;

  size_t below(size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng) : 0; }

  void mutate(std::string &s) {
    switch (below(6)) {
    case 0: // flip bits of a few bytes
      for (size_t i = 0, n = 1 + below(4); i < n && !s.empty(); ++i)
        s[below(s.size())] ^= char(1u << below(8));
      break;
    case 1: { // delete a range
      size_t at = below(s.size() + 1), n = below(std::min<size_t>(s.size() - at, 64) + 1);
      s.erase(at, n);
      break;
    }
    case 2: { // repeat a range
      size_t at = below(s.size() + 1), n = below(std::min<size_t>(s.size() - at, 64) + 1);
      s.insert(at, s.substr(at, n));
      break;
    }
    case 3: // a dictionary token
      if (!tokens.empty())
        s.insert(below(s.size() + 1), tokens[below(tokens.size())]);
      break;
    case 4: { // a piece of another seed
      const std::string &other = seeds[below(seeds.size())];
      size_t from = below(other.size() + 1), n = below(std::min<size_t>(other.size() - from, 256) + 1);
      s.insert(below(s.size() + 1), other.substr(from, n));
      break;
    }
    default: { // a number made extreme
      static const char *extremes[] = {"0", "-1", "9223372036854775807", "-9223372036854775808",
                                       "4294967296", "1e308", "nan", "2147483648"};
      size_t at = s.find_first_of("0123456789", below(s.size() + 1));
      if (at == std::string::npos)
        break;
      size_t end = s.find_first_not_of("0123456789", at);
      s.replace(at, (end == std::string::npos ? s.size() : end) - at, extremes[below(8)]);
      break;
    }
    }
  }
};

bool writeCurrent(const std::string &input) {
  std::error_code ec;
  raw_fd_ostream os(currentFile, ec);
  if (ec)
    return false;
  os << input;
  return true;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "moe-fuzz-mutate: FuzzCompile's target on mutated seed programs\n");
  if (!replay.empty()) {
    auto file = MemoryBuffer::getFile(replay, /*IsText=*/false);
    if (!file)
      return fail(replay + ": " + file.getError().message());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>((*file)->getBufferStart()),
                           (*file)->getBufferSize());
    outs() << "moe-fuzz-mutate: " << replay << " ran to its end\n";
    return 0;
  }
  std::string error;
  std::vector<std::string> tokens;
  if (!dictFile.empty() && (tokens = readDictionary(dictFile, error), !error.empty()))
    return fail(error);
  std::vector<std::string> seeds = readSeeds(error);
  if (!error.empty())
    return fail(error);
  if (seeds.empty())
    return fail("no .mlir seeds under the directories given");
  uint64_t seed = seedOption ? uint64_t(seedOption)
                             : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  outs() << "moe-fuzz-mutate: seed " << seed << ", " << seeds.size() << " seed programs, "
         << tokens.size() << " tokens, " << format("%.0f", double(seconds)) << " s; the input being tried is in "
         << currentFile << "\n";
  outs().flush();
  Mutator mutator{std::mt19937_64(seed), seeds, tokens};
  auto start = std::chrono::steady_clock::now();
  uint64_t tries = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    std::string input = seeds[mutator.below(seeds.size())];
    for (size_t i = 0, n = 1 + mutator.below(4); i < n; ++i)
      mutator.mutate(input);
    if (!writeCurrent(input))
      return fail("cannot write " + currentFile);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()), input.size());
    ++tries;
  }
  sys::fs::remove(currentFile);
  outs() << "moe-fuzz-mutate: " << tries << " inputs, no crash (seed " << seed << ")\n";
  return 0;
}
