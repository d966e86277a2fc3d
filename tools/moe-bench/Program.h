//===- Program.h - the moe programs moe-bench compiles ---------------------===//

#ifndef MOEC_TOOLS_MOEBENCH_PROGRAM_H
#define MOEC_TOOLS_MOEBENCH_PROGRAM_H

#include "BenchChoices.h"
#include "runtime/HfLayer.h"
#include "tooling/ToolChoices.h"

#include <cstdint>
#include <string>

namespace moebench {

/// One benchmark configuration: the seeds' harness flags.
struct BlockConfig {
  int64_t tokens = 4096, hidden = 2048, mlp = 1408, experts = 60, topk = 8;
  int64_t shared = 0;
  bool sharedFused = false;
  Impl impl = Impl::fusedW13;
  mlir::moe::PackStrategy packStrategy = mlir::moe::PackStrategy::argsort;
  moec::FloatType dtype = moec::FloatType::f32;
  // Benchmark null routing: a fraction >= 0 adds the draws [T, K] argument
  // after the logits and routes through moe.null_slots.
  double nullFraction = -1;
  mlir::moe::NullPolicy nullMode = mlir::moe::NullPolicy::independent;
  bool renormalize = false;             // the real weights after nulling

  // --family: an open model's layer (shared/docs/model-families.md), its
  // routing over the distribution's logits and its experts; applyFamily()
  // sets it (its family is empty without --family). Its sizes and shared
  // width are the fields above.
  moec::HfLayer layer;

  bool nullRouting() const { return nullFraction >= 0; }

  bool fusedW13() const { return impl != Impl::baseline; }
  bool preweight() const { return impl == Impl::preweight; }
  bool scatter() const { return impl == Impl::scatter; }
  std::string element() const { return moec::kFloatTypeChoices.name(dtype).str(); }
};

/// Sets `c.layer` to `family`'s form (moec::familyLayer): its routing
/// (scoring, order, renormalisation, selection bias, groups of `groups`
/// keeping `topkGroups` when given (> 0), else the family's, routed scaling
/// when given (> 0)) and its experts (biases, GPT-OSS's activation, weighted
/// input, shared gate; a shared expert of the family's width when `c.shared`
/// is 0). Empty, or why the family does not fit `c`'s sizes.
std::string applyFamily(BlockConfig &c, const std::string &family, int64_t groups,
                        int64_t topkGroups, double routedScaling);

/// Sets `c.layer` to `layer` (a family's form, or a config.json's layer:
/// its sizes already in `c`) after checking it fits `c`'s options; `what`
/// names it in the messages ("--family gpt_oss"). Empty, or why not.
std::string useLayer(BlockConfig &c, const moec::HfLayer &layer, const std::string &what);

/// `@moe_block(x, logits[, selection bias][, draws], expert weights and
/// biases..., shared weights...) -> y`: the whole block as one moe.block.
std::string blockProgram(const BlockConfig &c);

/// `@route(logits[, selection bias][, draws]) -> (ids, weights)`: the block's routing alone,
/// nulls included (what the peers are given, and the load statistics are
/// counted from).
std::string routeProgram(const BlockConfig &c);

/// The block cut at its stages, for --stage-timing and --queue-mode prequeue,
/// each a function of the previous ones' results:
///   @pack(x, ids, w) -> (sorted_w, perm, sizes)      route is given
///   @up(x, perm, sizes, gate/up weights[, sorted_w]) -> act    (gather fused)
///   @down(act, sizes, w2) -> d
///   @combine(d, perm, w) -> y
///   @gather(x, perm) -> rows                        (prequeue's input)
///   @prequeued(rows, perm, sizes, w, expert weights...) -> y   (no sort, no gather)
std::string stageProgram(const BlockConfig &c);

} // namespace moebench

#endif
