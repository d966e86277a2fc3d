//===- Signature.cpp - the tensor signature of a compiled function --------===//

#include "runtime/Signature.h"

#include <cstdlib>

using namespace moec;

std::string TensorSignature::str() const {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

std::string FunctionSignature::str() const {
  auto list = [](const std::vector<TensorSignature> &ts) {
    std::string s = "(";
    for (size_t i = 0; i < ts.size(); ++i)
      s += (i ? "," : "") + ts[i].str();
    return s + ")";
  };
  return name + list(inputs) + "->" + list(results);
}

namespace {
bool parseTensor(const std::string &text, size_t &at, TensorSignature &out,
                 std::string &error) {
  size_t open = text.find('[', at);
  if (open == std::string::npos) {
    error = "expected '[' after an element type at offset " + std::to_string(at);
    return false;
  }
  std::string dtype = text.substr(at, open - at);
  if (dtype == "f32")
    out.dtype = DType::F32;
  else if (dtype == "bf16")
    out.dtype = DType::BF16;
  else if (dtype == "i32")
    out.dtype = DType::I32;
  else if (dtype == "i8")
    out.dtype = DType::I8;
  else {
    error = "unknown element type '" + dtype + "'";
    return false;
  }
  size_t close = text.find(']', open);
  if (close == std::string::npos) {
    error = "unterminated shape";
    return false;
  }
  out.shape.clear();
  std::string dims = text.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start < dims.size()) {
    size_t comma = dims.find(',', start);
    std::string d = dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.shape.push_back(d == "?" ? -1 : std::strtoll(d.c_str(), nullptr, 10));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  at = close + 1;
  return true;
}

bool parseList(const std::string &text, size_t &at, std::vector<TensorSignature> &out,
               std::string &error) {
  if (at >= text.size() || text[at] != '(') {
    error = "expected '(' at offset " + std::to_string(at);
    return false;
  }
  ++at;
  while (at < text.size() && text[at] != ')') {
    TensorSignature t;
    if (!parseTensor(text, at, t, error))
      return false;
    out.push_back(t);
    if (at < text.size() && text[at] == ',')
      ++at;
  }
  if (at >= text.size()) {
    error = "unterminated list";
    return false;
  }
  ++at;
  return true;
}
} // namespace

std::optional<FunctionSignature> FunctionSignature::parse(const std::string &text,
                                                          std::string &error) {
  FunctionSignature sig;
  size_t open = text.find('(');
  if (open == std::string::npos || open == 0) {
    error = "malformed signature '" + text + "'";
    return std::nullopt;
  }
  sig.name = text.substr(0, open);
  size_t at = open;
  if (!parseList(text, at, sig.inputs, error) || text.compare(at, 2, "->") != 0) {
    error = "malformed signature '" + text + "': " + (error.empty() ? "expected '->'" : error);
    return std::nullopt;
  }
  at += 2;
  if (!parseList(text, at, sig.results, error) || at != text.size()) {
    error = "malformed signature '" + text + "'" + (error.empty() ? "" : ": " + error);
    return std::nullopt;
  }
  return sig;
}

bool FunctionSignature::checkInputs(const std::vector<Buffer> &given,
                                    std::string &error) const {
  if (given.size() != inputs.size()) {
    error = "'" + name + "' takes " + std::to_string(inputs.size()) + " inputs, got " +
            std::to_string(given.size());
    return false;
  }
  for (size_t i = 0; i < given.size(); ++i)
    if (!checkInput(i, given[i], error))
      return false;
  return true;
}

bool FunctionSignature::checkInput(size_t i, const Buffer &got, std::string &error) const {
  if (i >= inputs.size()) {
    error = "'" + name + "' has no argument " + std::to_string(i) + " (it takes " +
            std::to_string(inputs.size()) + ")";
    return false;
  }
  const TensorSignature &want = inputs[i];
  bool ok = got.dtype() == want.dtype && got.rank() == (int64_t)want.shape.size();
  for (size_t d = 0; ok && d < want.shape.size(); ++d)
    ok = want.shape[d] < 0 || want.shape[d] == got.shape()[d];
  if (!ok) {
    error = "argument " + std::to_string(i) + " of '" + name + "' expects " +
            shapeString(want.shape) + "x" + dtypeName(want.dtype) + ", got " +
            shapeString(got.shape()) + "x" + dtypeName(got.dtype());
    return false;
  }
  return true;
}
