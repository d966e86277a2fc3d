//===- ProgramOptions.h - what a tool does to a program before lowering -*- C++ -*-===//
//
// The steps between reading a moe program and lowering it that every way in
// shares (moec, moec run, the Python module): partition it for a mesh
// (moe-partition), add the backward (moe-generate-backward) and choose what
// it recomputes (moe-remat). The options are checked before any work, each
// wrong one a message naming it as the tools spell it.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_TOOLING_PROGRAMOPTIONS_H
#define MOEC_TOOLING_PROGRAMOPTIONS_H

#include "compiler/Compiler.h"
#include "passes/Choices.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <string>

namespace moec {

struct ProgramOptions {
  /// "data=2,expert=2": partition each block function (empty: one device).
  std::string mesh;
  mlir::moe::EpDispatch epDispatch = mlir::moe::EpDispatch::compact;
  double capacityFactor = 0;
  int64_t capacityRound = 1;
  /// Add <f>_forward_backward for this loss (none: no backward).
  std::optional<mlir::moe::BackwardLoss> backward;
  bool routingGrad = false;
  mlir::moe::RematPolicy remat = mlir::moe::RematPolicy::none;
  std::optional<int64_t> activationBudget; // bytes; none: no budget
};

/// `text` as a value of `table`'s choice into `out`; "" or the message
/// (option `name` as `spell` writes it must be ... (got '...')).
template <typename Enum, size_t N>
std::string parseChoiceOption(const mlir::moe::ChoiceTable<Enum, N> &table,
                              const std::string &text, const std::string &name,
                              std::string (*spell)(const std::string &), Enum &out) {
  if (std::optional<Enum> value = table.parse(text)) {
    out = *value;
    return "";
  }
  return spell(name) + " must be " + table.list() + " (got '" + text + "')";
}

/// How a tool spells option `name` ("backward", "activation-budget", ...)
/// in its messages: "--backward" for the command-line tools,
/// "backward=" for Python.
using OptionSpelling = std::string (*)(const std::string &name);
std::string commandLineSpelling(const std::string &name);

/// Why `options` cannot be used, or "": a negative budget, remat options
/// without a backward, a mesh that does not parse.
std::string programOptionsRefusal(const ProgramOptions &options,
                                  OptionSpelling spell = commandLineSpelling);

/// Selects the CPU code is compiled for (strategy/TargetCpu.h; "" for this
/// host) and checks the gmm choices against it; "" or why not. `runHere`:
/// the code will run on this host (the JIT), so the CPU must be one this
/// host can stand in for. `tuningTableFromEnv`: the table came from
/// $MOEC_TUNING_TABLE (said in the message).
std::string selectTarget(const std::string &targetCpu, const GmmChoices &gmm, bool runHere,
                         bool tuningTableFromEnv = false,
                         OptionSpelling spell = commandLineSpelling);

/// Partitions, differentiates and plans recomputation as `options` say.
/// Diagnostics go to the module's context.
mlir::LogicalResult prepareProgram(mlir::ModuleOp module, const ProgramOptions &options);

} // namespace moec

#endif // MOEC_TOOLING_PROGRAMOPTIONS_H
