//===- Passes.td - moe passes ------------------------------*- tablegen -*-===//

#ifndef MOE_PASSES_TD
#define MOE_PASSES_TD

include "mlir/Pass/PassBase.td"

def MoeExpandBlock : Pass<"moe-expand-block"> {
  let summary = "Expand moe.block into route, pack, gmm, swiglu and combine";
  let description = [{
    Replaces every `moe.block` by the primitive ops it stands for, so that
    pass authors work on one set of ops whatever the user wrote:

    - the router (`linalg.matmul` for `router(...)`, then `moe.route`),
    - `moe.pack` with the block's pack strategy,
    - the up projection: one `moe.gmm` with w13 (`fused_w13`) or two with w1
      and w3 (`baseline`), then `moe.swiglu`,
    - `moe.scale_rows` by the sorted routing weights when `preweight`,
    - the down `moe.gmm` and `moe.combine`,
    - the shared expert as `linalg.matmul`s with f32 accumulators around
      `moe.swiglu`, added to the routed output.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let statistics = [
    Statistic<"numBlocksExpanded", "blocks-expanded", "Number of moe.block ops expanded">,
  ];
}

def MoeCollectivesToShard : Pass<"moe-collectives-to-shard"> {
  let summary = "Lower named-axis moe collectives to the upstream shard dialect";
  let description = [{
    Rewrites `moe.psum`, `moe.all_gather` and `moe.reduce_scatter`, which name
    grid axes (`over @mesh ["expert"]`), into `shard.all_reduce` (sum),
    `shard.all_gather` and `shard.reduce_scatter` on the same grid with the
    axis indices, from where upstream's `-convert-shard-to-mpi` takes them.
    `moe.all_to_all` is ragged and has no upstream counterpart; it stays.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

#endif // MOE_PASSES_TD
