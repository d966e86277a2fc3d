//===- PreparedWeights.h - a block's weights prepared once -------*- C++ -*-===//
//
// A block compiled with prepared weights (moe-prepare-weights, or
// moe-quantize's int8 split) has, beside `f`, two functions: `prepare`,
// run once when the weights are loaded (it packs them into the kernels'
// layout, or quantizes them), and `prepared`, run per batch on f's other
// arguments and what `prepare` returned. PreparedForm says which of f's
// arguments each half takes; PreparedWeights holds what `prepare` returned
// and makes `prepared`'s argument list from f's.
//
// The hosts share it: moec run, the Python module's JIT programs, and
// Library (an AOT library lists its forms in `moec_prepared_forms`).
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_RUNTIME_PREPAREDWEIGHTS_H
#define MOEC_RUNTIME_PREPAREDWEIGHTS_H

#include "runtime/Signature.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace moec {

/// How to call function `function`'s prepared form: `prepare` once on f's
/// arguments at `weightArgs`, then `prepared` on f's arguments at
/// `keptArgs` followed by what `prepare` returned.
struct PreparedForm {
  std::string function, prepare, prepared;
  std::vector<int64_t> weightArgs, keptArgs;
  /// What `prepare` makes, as a fingerprint of it (its ops and their
  /// layouts): weights prepared by a form of another layout are not what
  /// this form's `prepared` reads, though they may have the same shapes.
  /// Empty: not known (a library from before moec recorded it).
  std::string layout;

  /// "moe_block prepare=moe_block_prepare_weights prepared=moe_block_prepared
  /// weights=2,3,4 kept=0,1 layout=5f0e...": a line of a library's
  /// moec_prepared_forms (parse ignores keys it does not know, which a later
  /// moec may add; layout is optional).
  std::string str() const;
  static std::optional<PreparedForm> parse(const std::string &line, std::string &error);

  /// Why this form cannot be called for `f` (an argument position past f's
  /// arguments, halves whose signatures do not take what the form says), or "".
  std::string mismatch(const FunctionSignature &f, const FunctionSignature &prepareSig,
                       const FunctionSignature &preparedSig) const;
};

/// f's whole argument list `args` (their count), and those at `positions`
/// (given, of f's types and static sizes), as a call with prepared weights
/// reads them; `what` ends a message (which half reads them).
bool checkArgumentsAt(const FunctionSignature &f, const std::vector<Buffer> &args,
                      const std::vector<int64_t> &positions, const std::string &what,
                      std::string &error);

/// A call of one function of a compiled program by name: the Library's, a
/// JIT program's. Returns the results, or nullopt with `error` set.
using CallByName = std::function<std::optional<std::vector<Buffer>>(
    const std::string &name, std::vector<Buffer> &args, std::string &error)>;

/// f's weights, prepared: what `form.prepare` returned for them.
class PreparedWeights {
public:
  /// Runs `form.prepare` once on f's arguments `args` (f's whole list, as f
  /// takes it; only those at weightArgs are read, after checking them
  /// against `f`).
  static std::optional<PreparedWeights> prepare(const PreparedForm &form, const FunctionSignature &f,
                                                std::vector<Buffer> &args, const CallByName &call,
                                                std::string &error);

  /// Runs `form.prepared` on f's arguments `args` (f's whole list; those
  /// only prepare read are not read again: a default-constructed Buffer
  /// will do there) and the prepared weights. `here` is the prepared form
  /// of f that `call` calls into (the library's, the program's): refused
  /// unless it is the one these weights were prepared by, layout included.
  std::optional<std::vector<Buffer>> run(const PreparedForm &here, const FunctionSignature &f,
                                         std::vector<Buffer> &args, const CallByName &call,
                                         std::string &error) const;

  const PreparedForm &form() const { return form_; }
  /// What prepare's and run's checks of `args` say they check.
  static std::string weightsRead(const PreparedForm &form);
  static std::string argumentsRead(const PreparedForm &form);
  /// What prepare returned (packed or quantized weights, and any reshaped
  /// weight the prepared function reads).
  const std::vector<Buffer> &buffers() const { return buffers_; }
  size_t bytes() const;

private:
  PreparedForm form_;
  std::vector<Buffer> buffers_;
};

} // namespace moec

#endif // MOEC_RUNTIME_PREPAREDWEIGHTS_H
