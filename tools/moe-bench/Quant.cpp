//===- Quant.cpp - moe-bench's int8 modes ---------------------------------===//

#include "Quant.h"
#include "Session.h"

#include <cmath>

using namespace moebench;

std::string QuantChoice::pipeline(bool training) const {
  return "moe-quantize{mode=" + modeName() + " weight-scales=" + scalesName() +
         (training ? " hoist-weights=false" : "") + "}";
}

double moebench::relativeError(const moec::Buffer &a, const moec::Buffer &ref) {
  if (a.shape() != ref.shape())
    return -1;
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < ref.numElements(); ++i) {
    double r = ref.at(i), d = a.at(i) - r;
    diff += d * d, norm += r * r;
  }
  if (norm == 0)
    return diff == 0 ? 0 : INFINITY;
  return std::sqrt(diff / norm);
}

moec::Buffer moebench::widenToF32(const moec::Buffer &b) {
  moec::Buffer out(moec::DType::F32, b.shape());
  for (int64_t i = 0; i < b.numElements(); ++i)
    out.as<float>()[i] = static_cast<float>(b.at(i));
  return out;
}
