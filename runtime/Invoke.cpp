//===- Invoke.cpp - calling generated code through its C interface --------===//

#include "runtime/Invoke.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>

using namespace moec;

std::optional<std::vector<Buffer>> moec::invoke(const FunctionSignature &sig,
                                                std::vector<Buffer> &inputs,
                                                const CInterfaceCall &call,
                                                std::string &error) {
  if (!sig.checkInputs(inputs, error))
    return std::nullopt;
  std::vector<std::vector<int64_t>> descriptors;
  for (Buffer &b : inputs)
    descriptors.push_back(b.descriptor());
  size_t resultWords = 0;
  for (auto &r : sig.results)
    resultWords += 3 + 2 * r.shape.size();
  std::vector<int64_t> results(resultWords, 0);

  std::vector<void *> args;
  if (!sig.results.empty())
    args.push_back(results.data());
  for (auto &d : descriptors)
    args.push_back(d.data());
  if (!call(args.data(), error))
    return std::nullopt;

  // What the program allocated for a result becomes the result's memory
  // (no copy). A second result in the same allocation is copied, so that
  // no two results alias (a caller may write one, e.g. torch accumulating
  // into a gradient); the allocation is freed once. A result that is an
  // input's memory is copied: the input is not ours.
  std::vector<Buffer> outputs;
  std::set<const void *> inputData;
  for (Buffer &b : inputs)
    inputData.insert(b.data());
  std::map<void *, std::shared_ptr<void>> allocations;
  size_t offset = 0;
  for (auto &r : sig.results) {
    const int64_t *words = results.data() + offset;
    void *allocated = reinterpret_cast<void *>(words[0]);
    void *aligned = reinterpret_cast<void *>(words[1]);
    std::shared_ptr<void> &owner = allocations[allocated];
    if (inputData.count(aligned) || owner) {
      outputs.push_back(Buffer::fromDescriptor(r.dtype, r.shape.size(), words));
    } else {
      owner.reset(allocated, [](void *p) { std::free(p); });
      outputs.push_back(Buffer::adoptDescriptor(r.dtype, r.shape.size(), words, owner));
    }
    offset += 3 + 2 * r.shape.size();
  }
  return outputs;
}

std::vector<Buffer> moec::randomInputs(const FunctionSignature &sig, uint64_t seed,
                                       int64_t dynamicSize) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<Buffer> out;
  for (const TensorSignature &t : sig.inputs) {
    std::vector<int64_t> shape = t.shape;
    for (int64_t &d : shape)
      if (d < 0)
        d = dynamicSize;
    Buffer b(t.dtype, shape);
    bool weight = shape.size() == 3 || (shape.size() == 2 && t.shape[0] >= 0);
    int64_t fanIn = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
    float scale = weight ? 1.0f / std::sqrt(float(std::max<int64_t>(fanIn, 1))) : 1.0f;
    for (int64_t i = 0; i < b.numElements(); ++i) {
      if (t.dtype == DType::I32)
        b.as<int32_t>()[i] = static_cast<int32_t>(rng() % 8);
      else if (t.dtype == DType::I8) // quantized weights: the whole range
        b.as<int8_t>()[i] = static_cast<int8_t>(static_cast<int64_t>(rng() % 255) - 127);
      else if (t.dtype == DType::F32)
        b.as<float>()[i] = normal(rng) * scale;
      else
        b.as<uint16_t>()[i] = f32ToBf16(normal(rng) * scale);
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::string moec::randomInputsRefusal(const FunctionSignature &sig, int64_t dynamicSize,
                                      const std::string &option) {
  if (dynamicSize < 0)
    return option + " must not be negative (got " + std::to_string(dynamicSize) + ")";
  uint64_t bytes = 0;
  bool overflow = false;
  for (const TensorSignature &t : sig.inputs) {
    uint64_t n = dtypeSize(t.dtype);
    for (int64_t d : t.shape)
      overflow |= __builtin_mul_overflow(n, uint64_t(d < 0 ? dynamicSize : d), &n);
    overflow |= __builtin_add_overflow(bytes, n, &bytes);
  }
  uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
  if (!overflow && bytes <= memory)
    return "";
  return "random inputs with " + option + " " + std::to_string(dynamicSize) + " need " +
         (overflow ? std::string("more than 2^64 bytes") : std::to_string(bytes >> 20) + " MiB") +
         "; this machine has " + std::to_string(memory >> 20) + " MiB";
}
