//===- run_block.cpp - call an AOT-compiled MoE block from C++ -------------===//
//
// The worked example of docs/moec.md: load a library built by
//   moec examples/small-e60-top8.mlir -o libblock.so
// list its entry points, bind random inputs (or your own Buffers), prepare
// the weights once (when the library has the function's prepared form),
// run, and read the outputs.
//
//   run_block LIB.so [FUNCTION] [TOKENS] [SEED] [OUTPUT_DIR]
//
//===----------------------------------------------------------------------===//

#include "runtime/Invoke.h"
#include "runtime/Library.h"
#include "runtime/Npy.h"
#include "runtime/ThreadLimit.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
/// `text` as a whole number >= 0, or a message naming `what`.
bool parseCount(const char *text, const char *what, int64_t &value) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || v < 0) {
    std::fprintf(stderr, "run_block: %s must be a whole number >= 0 (got '%s')\n", what, text);
    return false;
  }
  value = v;
  return true;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 6) {
    std::fprintf(stderr, "usage: %s LIB.so [FUNCTION] [TOKENS] [SEED] [OUTPUT_DIR]\n", argv[0]);
    return 2;
  }
  int64_t tokens = 256, seed = 0;
  if ((argc > 3 && !parseCount(argv[3], "TOKENS", tokens)) ||
      (argc > 4 && !parseCount(argv[4], "SEED", seed)))
    return 2;
  // The library's parallel loops start OMP_NUM_THREADS threads.
  if (std::string why = moec::ompNumThreadsRefusal(); !why.empty()) {
    std::fprintf(stderr, "run_block: %s\n", why.c_str());
    return 2;
  }
  std::string error;
  auto lib = moec::Library::open(argv[1], error);
  if (!lib) {
    std::fprintf(stderr, "run_block: %s\n", error.c_str());
    return 1;
  }
  if (lib->functions().empty()) {
    std::fprintf(stderr, "run_block: %s has no entry points\n", argv[1]);
    return 1;
  }
  for (const moec::FunctionSignature &f : lib->functions())
    std::printf("entry point: %s\n", f.str().c_str());

  std::string name = argc > 2 ? argv[2] : lib->functions().at(0).name;
  const moec::FunctionSignature *sig = lib->find(name);
  if (!sig) {
    std::fprintf(stderr, "run_block: no entry point '%s'\n", name.c_str());
    return 1;
  }
  // Inputs beyond memory are refused before they are made.
  if (std::string why = moec::randomInputsRefusal(*sig, tokens, "TOKENS"); !why.empty()) {
    std::fprintf(stderr, "run_block: %s\n", why.c_str());
    return 1;
  }

  // Inputs in argument order; here random, with every dynamic dimension (the
  // token count) set to `tokens`. Your own data goes in the same way:
  // moec::Buffer x(moec::DType::F32, {tokens, 64}); fill x.as<float>() ...
  std::vector<moec::Buffer> inputs = moec::randomInputs(*sig, seed, tokens);

  // The weights into the kernels' layout once, as a program that loads
  // them once would do; each run then packs nothing.
  std::optional<moec::PreparedWeights> weights;
  if (const moec::PreparedForm *form = lib->preparedForm(name)) {
    auto start = std::chrono::steady_clock::now();
    weights = lib->prepare(name, inputs, error);
    if (!weights) {
      std::fprintf(stderr, "run_block: %s\n", error.c_str());
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("prepare: %s in %.3f ms (%.1f MiB); the run calls %s\n", form->prepare.c_str(), ms,
                weights->bytes() / 1048576.0, form->prepared.c_str());
    // The run reads the packed copy: the raw weights it does not read may go.
    for (int64_t i : form->weightArgs)
      if (std::find(form->keptArgs.begin(), form->keptArgs.end(), i) == form->keptArgs.end())
        inputs[i] = moec::Buffer();
  }

  auto start = std::chrono::steady_clock::now();
  auto outputs = weights ? lib->run(*weights, inputs, error) : lib->run(name, inputs, error);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputs) {
    std::fprintf(stderr, "run_block: %s\n", error.c_str());
    return 1;
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    const moec::Buffer &out = (*outputs)[i];
    double sum = 0;
    for (int64_t e = 0; e < out.numElements(); ++e)
      sum += out.at(e);
    std::printf("out%zu: %sx%s sum %.6e\n", i, moec::shapeString(out.shape()).c_str(),
                moec::dtypeName(out.dtype()), sum);
    if (argc > 5) {
      std::string path = std::string(argv[5]) + "/out" + std::to_string(i) + ".npy";
      if (!moec::writeNpy(path, out, error)) {
        std::fprintf(stderr, "run_block: %s\n", error.c_str());
        return 1;
      }
    }
  }
  std::printf("time: %.3f ms\n", ms);
  return 0;
}
