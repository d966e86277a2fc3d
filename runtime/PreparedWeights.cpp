//===- PreparedWeights.cpp - a block's weights prepared once ---------------===//

#include "runtime/PreparedWeights.h"

#include <sstream>

using namespace moec;

namespace {

std::string joined(const std::vector<int64_t> &values) {
  std::string s;
  for (int64_t v : values)
    s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

/// "2,3,4" (or "" for none) as positions >= 0.
bool parsePositions(const std::string &text, std::vector<int64_t> &out) {
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 9)
      return false;
    out.push_back(std::stoll(item));
  }
  return true;
}

/// Views of `args` at `positions` (checked against f's inputs there).
std::optional<std::vector<Buffer>> viewsAt(const FunctionSignature &f, std::vector<Buffer> &args,
                                           const std::vector<int64_t> &positions, const std::string &what,
                                           std::string &error) {
  if (!checkArgumentsAt(f, args, positions, what, error))
    return std::nullopt;
  std::vector<Buffer> views;
  for (int64_t i : positions)
    views.push_back(Buffer::view(args[i].dtype(), args[i].shape(), args[i].data()));
  return views;
}

} // namespace

bool moec::checkArgumentsAt(const FunctionSignature &f, const std::vector<Buffer> &args,
                            const std::vector<int64_t> &positions, const std::string &what,
                            std::string &error) {
  if (args.size() != f.inputs.size()) {
    error = "'" + f.name + "' takes " + std::to_string(f.inputs.size()) + " inputs, got " +
            std::to_string(args.size());
    return false;
  }
  for (int64_t i : positions) {
    if (i < 0 || i >= static_cast<int64_t>(args.size())) {
      error = "'" + f.name + "' has no argument " + std::to_string(i) + " (" + what + ")";
      return false;
    }
    const Buffer &b = args[i];
    if (!b.data() && b.numBytes() > 0) {
      error = "argument " + std::to_string(i) + " of '" + f.name + "' is not given (" + what + ")";
      return false;
    }
    if (!f.checkInput(i, b, error)) {
      error += " (" + what + ")";
      return false;
    }
  }
  return true;
}

std::string PreparedWeights::weightsRead(const PreparedForm &form) {
  return "a weight '" + form.prepare + "' prepares";
}
std::string PreparedWeights::argumentsRead(const PreparedForm &form) {
  return "an argument '" + form.prepared + "' reads";
}

std::string PreparedForm::str() const {
  return function + " prepare=" + prepare + " prepared=" + prepared + " weights=" + joined(weightArgs) +
         " kept=" + joined(keptArgs) + (layout.empty() ? "" : " layout=" + layout);
}

std::optional<PreparedForm> PreparedForm::parse(const std::string &line, std::string &error) {
  PreparedForm form;
  std::istringstream words(line);
  bool ok = static_cast<bool>(words >> form.function);
  constexpr int kKeys = 5;
  bool seen[kKeys] = {};
  for (std::string word; ok && words >> word;) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    const char *keys[kKeys] = {"prepare", "prepared", "weights", "kept", "layout"};
    int k = 0;
    while (k < kKeys && key != keys[k])
      ++k;
    ok = eq != std::string::npos && eq > 0 && (k == kKeys || !seen[k]);
    if (!ok)
      break;
    if (k == kKeys)
      continue; // a key a later moec may add: not this runtime's to read
    seen[k] = true;
    if (k == 0)
      form.prepare = value;
    else if (k == 1)
      form.prepared = value;
    else if (k == 4) {
      form.layout = value;
      ok = !value.empty();
    }
    else
      ok = parsePositions(value, k == 2 ? form.weightArgs : form.keptArgs);
  }
  ok = ok && seen[0] && seen[1] && seen[2] && seen[3] && !form.prepare.empty() && !form.prepared.empty();
  if (!ok) {
    error = "not a prepared form (\"f prepare=... prepared=... weights=i,... kept=i,...\"): '" + line + "'";
    return std::nullopt;
  }
  return form;
}

std::string PreparedForm::mismatch(const FunctionSignature &f, const FunctionSignature &prepareSig,
                                   const FunctionSignature &preparedSig) const {
  for (const std::vector<int64_t> *list : {&weightArgs, &keptArgs})
    for (int64_t i : *list)
      if (i < 0 || i >= static_cast<int64_t>(f.inputs.size()))
        return "'" + (list == &weightArgs ? prepare : prepared) + "' takes argument " + std::to_string(i) +
               " of '" + function + "', which has " + std::to_string(f.inputs.size());
  auto same = [](const TensorSignature &a, const TensorSignature &b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  };
  if (prepareSig.inputs.size() != weightArgs.size())
    return "'" + prepare + "' takes " + std::to_string(prepareSig.inputs.size()) + " inputs, not the " +
           std::to_string(weightArgs.size()) + " weights its form names";
  for (size_t q = 0; q < weightArgs.size(); ++q)
    if (!same(prepareSig.inputs[q], f.inputs[weightArgs[q]]))
      return "input " + std::to_string(q) + " of '" + prepare + "' is " + prepareSig.inputs[q].str() +
             ", not argument " + std::to_string(weightArgs[q]) + " of '" + function + "' (" +
             f.inputs[weightArgs[q]].str() + ")";
  size_t kept = keptArgs.size(), made = prepareSig.results.size();
  if (preparedSig.inputs.size() != kept + made)
    return "'" + prepared + "' takes " + std::to_string(preparedSig.inputs.size()) + " inputs, not " +
           std::to_string(kept) + " kept arguments and " + std::to_string(made) + " prepared weights";
  for (size_t q = 0; q < kept + made; ++q) {
    const TensorSignature &want = q < kept ? f.inputs[keptArgs[q]] : prepareSig.results[q - kept];
    if (!same(preparedSig.inputs[q], want))
      return "input " + std::to_string(q) + " of '" + prepared + "' is " + preparedSig.inputs[q].str() +
             ", not " + want.str();
  }
  return "";
}

std::optional<PreparedWeights> PreparedWeights::prepare(const PreparedForm &form, const FunctionSignature &f,
                                                        std::vector<Buffer> &args, const CallByName &call,
                                                        std::string &error) {
  auto weights = viewsAt(f, args, form.weightArgs, weightsRead(form), error);
  if (!weights)
    return std::nullopt;
  auto made = call(form.prepare, *weights, error);
  if (!made)
    return std::nullopt;
  PreparedWeights p;
  p.form_ = form;
  p.buffers_ = std::move(*made);
  return p;
}

std::optional<std::vector<Buffer>> PreparedWeights::run(const PreparedForm &here, const FunctionSignature &f,
                                                        std::vector<Buffer> &args, const CallByName &call,
                                                        std::string &error) const {
  if (here.function != form_.function || here.prepared != form_.prepared || here.layout != form_.layout) {
    auto layoutOf = [](const PreparedForm &form) {
      return form.layout.empty() ? std::string("not recorded") : form.layout;
    };
    error = "these weights were prepared for '" + form_.function + "' by another library or program (layout " +
            layoutOf(form_) + "), not for '" + here.function + "' here (layout " + layoutOf(here) +
            "): prepare them with the one that runs them";
    return std::nullopt;
  }
  auto inputs = viewsAt(f, args, form_.keptArgs, argumentsRead(form_), error);
  if (!inputs)
    return std::nullopt;
  for (const Buffer &b : buffers_)
    inputs->push_back(Buffer::view(b.dtype(), b.shape(), const_cast<void *>(b.data())));
  return call(form_.prepared, *inputs, error);
}

size_t PreparedWeights::bytes() const {
  size_t n = 0;
  for (const Buffer &b : buffers_)
    n += b.numBytes();
  return n;
}
