//===- Passes.h - moe passes and pipelines ----------------------*- C++ -*-===//
#ifndef MOEC_PASSES_PASSES_H
#define MOEC_PASSES_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "passes/Choices.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::moe {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Options of the `moe-default` pipeline.
struct DefaultPipelineOptions
    : public PassPipelineOptions<DefaultPipelineOptions> {
  PassOptions::Option<bool> expandBlocks{
      *this, "expand-blocks",
      llvm::cl::desc("Expand moe.block into the primitive ops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> lowerCollectives{
      *this, "lower-collectives",
      llvm::cl::desc("Lower named-axis collectives to the shard dialect"),
      llvm::cl::init(false)};
};

/// The pipeline moe-opt and moec run when no other is given: expand
/// composite blocks, then canonicalize and CSE the primitives.
void buildDefaultPipeline(OpPassManager &pm,
                          const DefaultPipelineOptions &options);

/// Registers the moe passes and the named pipelines (`moe-default`).
void registerMoePassesAndPipelines();

/// Why `mesh` (moe-partition's `mesh` option, "data=2,expert=2") is not a
/// mesh, or "": for tools that check their options before any pass runs.
std::string meshSpecError(llvm::StringRef mesh);
/// `mesh`'s axes and sizes in order, as moe-partition reads them (axes among
/// data, expert and model, each once, sizes >= 1); nullopt and `error`
/// (meshSpecError's message) when it is not a mesh.
std::optional<std::vector<std::pair<std::string, int64_t>>> meshAxes(llvm::StringRef mesh,
                                                                      std::string &error);

} // namespace mlir::moe

#endif // MOEC_PASSES_PASSES_H
