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

def MoeGenerateBackward : Pass<"moe-generate-backward", "::mlir::ModuleOp"> {
  let summary = "Add <f>_forward_backward: the loss and the gradients of a block function";
  let description = [{
    For each public function with moe ops (or each of `functions`) that
    returns the block output `[T, H]`, adds `@<name>_forward_backward`: the
    forward (moe.block expanded), then the adjoint of each op in reverse
    (rules in passes/GenerateBackward.cpp): gmm (rows: gmm with transposed
    group weights; weights: tgmm), swiglu (swiglu_grad), scale_rows, combine
    (gather the token gradients, scale by the sorted routing weights), pack
    and gather_rows (each token sums its K row gradients), the shared
    expert's linalg.matmul, casts and the residual add, and the collectives
    per shard (psum: psum; all_gather and reduce_scatter: each other;
    all_to_all: back by the counts received). By default routing is fixed,
    as in the seeds' forward_backward: route and the routing weights get no
    gradient. `routing-grad`: the routing weights get one too (combine: each
    slot's row dotted with its token's gradient; scale_rows: the same for the
    scale; pack's sorted weights: back to token order with
    moe.scatter_slots) and route carries it to the logits (moe.route_grad:
    through softmax or sigmoid, nulling, renormalisation and the top-k held
    fixed), so the logits, or x and the router weight that computed them,
    get the router's gradient.

    `loss=mean-square` (default): the function returns loss = mean(y^2) as
    `tensor<f32>`, then the gradients. `loss=cotangent`: it takes dL/dy as a
    last argument and returns y, then the gradients. The gradients follow in
    argument order, one for each argument the output depends on
    differentiably (x and the expert and shared weights; the logits or the
    router weight only with `routing-grad`);
    `moe.gradient_args` on the function lists their argument numbers.
    Every op of the backward carries `moe.adjoint`; every forward value it
    reads is kept (remat policy `none`) until `moe-remat` says otherwise.

    A per-shard function (`moe.mesh`, from moe-partition) gets the backward
    of the global loss: mean-square sums the local sums of squares over the
    axes splitting y (a psum) and divides by the global element count; each
    shard holding a replica of y seeds 1/replicas of dy (or of the given
    cotangent, which is placed like y); the gradient of an argument is
    summed over the axes the argument is replicated on (DP: the weights over
    data; EP: x over expert) and placed like the argument (`moe.split`); the
    loss is a replicated scalar. Hand-written per-shard functions without
    `moe.mesh` keep the per-shard convention: each shard's loss is its own
    and the collectives' adjoints sum over the shards.
  }];
  let options = [
    Option<"loss", "loss", "::mlir::moe::BackwardLoss", "::mlir::moe::BackwardLoss::meanSquare",
           "what is differentiated", "::mlir::moe::kBackwardLossChoices.values()">,
    ListOption<"functions", "functions", "std::string",
               "functions to differentiate (default: every public one with moe ops)">,
    Option<"routingGrad", "routing-grad", "bool", "false",
           "differentiate through the routing weights and the router (default: routing fixed)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
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

def MoePartition : Pass<"moe-partition", "::mlir::ModuleOp"> {
  let summary = "Turn a single-device block function into one shard's program on a mesh";
  let description = [{
    For each public function made of one `moe.block` over its arguments
    (or each of `functions`), rewrites it into the SPMD program every shard
    of the mesh runs (passes/Partition.cpp):

    - no expert axis (or expert=1): data parallel: tokens (x, logits) split
      over `data`, weights replicated, the same block over the shard's tokens;
    - expert > 1: routed expert weights split over `expert` (L = E / expert
      per shard), tokens split over `data`, and by `ep-dispatch`:
      - `dense`: the seeds' first, slow EP: every shard computes every
        assignment row, other shards' rows in a dummy group of zero weights
        with their routing weight masked to 0; psum over expert;
      - `compact` (default): each shard packs only its own experts' rows
        (ids shifted by its first expert), into `capacity-factor` x its fair
        share of rows if given (dropping the rest from the last group's end,
        so padding never shifts a group), computes them; psum over expert;
      - `ring`: tokens split over expert too; all_gather the tokens (and
        logits), local experts, reduce_scatter back to token shards;
      - `a2a`: tokens split over expert too; each assignment row goes only
        to the shard owning its expert (ragged all-to-all with its local
        expert id), is computed there and comes back; the routing weights
        apply at home. Needs a static token count.
    The shared expert, if any, is replicated and computed on each shard's
    tokens.

    The mesh is `mesh` (axes among data, expert, model; declared as
    `shard.grid @<grid>` with `moe.axes`), or the module's one shard.grid.
    Each argument and the result get `moe.split` (per dimension, the mesh
    axes splitting it), the function `moe.mesh` (its grid) and
    `moe.parallel` (the mode).
  }];
  let options = [
    Option<"meshOption", "mesh", "std::string", "\"\"",
           "mesh axes and sizes, e.g. data=2,expert=2 (default: the module's grid)">,
    Option<"gridOption", "grid", "std::string", "\"mesh\"",
           "name of the shard.grid to declare for `mesh`">,
    Option<"epDispatch", "ep-dispatch", "::mlir::moe::EpDispatch", "::mlir::moe::EpDispatch::compact",
           "expert-parallel dispatch", "::mlir::moe::kEpDispatchChoices.values()">,
    Option<"capacityFactor", "capacity-factor", "double", "0",
           "compact/ring/a2a buffer rows = cf x the fair share (0: room for every row)">,
    Option<"capacityRound", "capacity-round", "int64_t", "1",
           "round the capacity up to a multiple of this">,
    ListOption<"functions", "functions", "std::string",
               "functions to partition (default: every public one with a moe.block)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def MoeFuseW13 : Pass<"moe-fuse-w13"> {
  let summary = "Fuse the gate and up grouped matmuls into one over [w1 | w3]";
  let description = [{
    `moe.swiglu(moe.gmm(rows, w1, sizes), moe.gmm(rows, w3, sizes))` becomes
    `moe.swiglu(moe.gmm(rows, w13, sizes))` with w13 = w1 and w3 concatenated
    along their last axis: the rows are read once and one grouped kernel runs
    instead of two (the seeds' `fused_w13`). Constant weights are
    concatenated at compile time; others by a `tensor.concat` in the
    function. The same rewrite for the shared expert's two dense matmuls is
    `-moe-fuse-shared-expert`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MoeFuseSharedExpert : Pass<"moe-fuse-shared-expert"> {
  let summary = "Fuse the shared expert's matmuls, or fold it into the routed experts";
  let description = [{
    `mode=matmul` (default): the shared expert's gate and up projections,
    two `linalg.matmul`s of the same tokens feeding `moe.swiglu`, become one
    matmul against [sw1 | sw3] (the seeds' `shared_fused`).

    `mode=grouped`: every `moe.block` with a shared expert of size S is
    expanded so that the shared expert runs inside the routed grouped matmul:
    its weights become c = ceil(S / M) extra experts of width M (zero-padded
    to c * M), every token is routed to all of them with weight 1, and null
    ids move past them. One grouped kernel computes routed and shared work;
    the result is the same function.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"matmul\"",
           "matmul: one dense matmul for gate and up; grouped: the shared "
           "expert as always-selected groups of the routed gmm">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MoeQuantize : Pass<"moe-quantize", "::mlir::ModuleOp"> {
  let summary = "int8 for the routed and shared matmuls, weights quantized once";
  let description = [{
    Symmetric int8 without zero points (shared/docs/moe-semantics.md,
    section 7): activations scaled per row (on the fly, inside the int8
    `moe.gmm`), weights per expert or per output channel (`moe.quantize`).
    Blocks are expanded first.

    - `mode=int8`: every forward routed `moe.gmm` over float weights becomes
      `moe.gmm` over `moe.quantize`d weights (i32 sums, dequantised output),
      and each shared-expert `linalg.matmul` (gate, up, down; not the
      router's) a one-group int8 `moe.gmm` over the weight as `[1, H, N]`.
    - `mode=int8_routed`: the routed gmms only.
    - `mode=fake_int8`: the same matmuls in float over `moe.fake_quant` rows
      and quantized-then-dequantized weights: int8's rounding for accuracy
      studies, float kernels.

    With `hoist-weights` (default), each public function `@f` whose weights
    were quantized is split: `@f_prepare_weights` takes the weight arguments
    and returns the quantized weights (and scales), `@f_prepared` takes the
    other arguments and those, and `@f` keeps its signature as the two calls.
    A host calls `@f_prepare_weights` once when it loads the weights.
    Training (`moe-generate-backward` after this pass) wants
    `hoist-weights=false`: the weights change every step, and the gradient
    is taken through `@f` itself (straight-through estimator for the
    rounding, float gradient for the weights).
  }];
  let options = [
    Option<"mode", "mode", "::mlir::moe::QuantMode", "::mlir::moe::QuantMode::int8",
           "int8 (routed gmms and the shared expert's matmuls on int8 kernels), "
           "int8_routed (the routed gmms only) or fake_int8 (int8 rounding, float kernels)",
           "::mlir::moe::kQuantModeChoices.values()">,
    Option<"weightScales", "weight-scales", "::mlir::moe::QuantWeightScales",
           "::mlir::moe::QuantWeightScales::channel",
           "one scale per expert (expert) or per expert output channel (channel)",
           "::mlir::moe::kQuantWeightScalesChoices.values()">,
    Option<"hoistWeights", "hoist-weights", "bool", "true",
           "move the weights' quantization into <f>_prepare_weights">,
  ];
  let statistics = [
    Statistic<"numMatmulsQuantized", "matmuls-quantized",
              "Routed gmms and shared matmuls rewritten">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MoeRemat : Pass<"moe-remat", "::mlir::func::FuncOp"> {
  let summary = "Choose which forward values the backward recomputes instead of keeping";
  let description = [{
    Works on the `<f>_forward_backward` functions moe-generate-backward
    makes (other functions are left alone). The backward of such a function
    reads forward values, which a training step keeps alive from the forward
    into the backward; this pass makes the backward recompute some of them
    from what is kept instead (semantics doc, section 3):

    - `none`: keep everything the backward reads;
    - `expert_mlp`: keep only the expert MLP's inputs (sorted rows, group
      sizes, weights); the up gmm, the activation, the preweight scaling and
      the down gmm run again in the backward where it reads their outputs;
    - `combine`: keep only combine's inputs; combine runs again where the
      backward reads its output;
    - `auto`: per value, the set of recomputations with the fewest FLOPs that
      keeps at most `activation-budget` bytes (cost model in
      passes/Remat.cpp: matmul FLOPs 2mnk, elementwise per element).

    With a fixed policy, `activation-budget` is a check: the pass fails when
    the policy keeps more. The decision is recorded on the function as
    `moe.remat = {policy, kept_bytes, recomputed_flops, kept_dynamic}`. `moe-remat-report` prints what each policy keeps
    and recomputes.
  }];
  let options = [
    Option<"policy", "policy", "::mlir::moe::RematPolicy", "::mlir::moe::RematPolicy::none",
           "what the backward recomputes", "::mlir::moe::kRematPolicyChoices.values()">,
    Option<"activationBudget", "activation-budget", "int64_t", "-1",
           "bytes the backward may keep from the forward (auto: required)">,
  ];
}

def MoeRematReport : Pass<"moe-remat-report", "::mlir::ModuleOp"> {
  let summary = "Print, for each remat policy, the bytes kept for the backward and the FLOPs recomputed";
  let description = [{
    For every forward_backward function in the module, prints a table on
    stdout: for each policy (none, expert_mlp, combine, and auto when
    `activation-budget` is given) the bytes of forward values the backward
    keeps, the FLOPs it recomputes, and which values are kept. The IR is not
    changed; use `-o /dev/null` to see only the report.
  }];
  let options = [
    Option<"activationBudget", "activation-budget", "int64_t", "-1",
           "also show what auto picks under this many bytes">,
  ];
}

def MoeMarkStages : Pass<"moe-mark-stages", "::mlir::ModuleOp"> {
  let summary = "Time each stage of a function: a runtime mark before each stage's first op";
  let description = [{
    Cuts each function with a body (or each of `functions`) into stages, in
    program order, and puts `func.call @moert_stage_mark(i)` before stage
    i's first op and `@moert_stage_mark(-1)` before each return; the
    runtime (runtime/StageTimer.h) adds the wall time from each mark to the
    next to that stage. The first stage starts at the function's entry.
    What the lowering adds outside the marks (the buffer arena's allocation
    before the first, the frees after the last) is not in any stage: a host
    reports it as the call's time beyond the stages'. `moe.stages` on the
    function names them, in order. Only functions of one block are marked
    (stages in program order run in that order), and not one that calls a
    function with a body (a prepared block's `@f` calling its halves: the
    callees' marks would land in its stage numbers).

    Each op of the moe dialect and each linalg op starts a stage of its own,
    named by the op ("gmm", "swiglu", "matmul", "fill", ...; "gmm^T" for a
    gmm with transposed weights), then its first result's shape; an op of
    the backward (`moe.adjoint`) is named "bwd ...". Where a gmm's
    `#moe.gmm_lowering` fuses the gather of its rows or its SwiGLU, the
    kernel is one stage, where moe-lower-to-loops puts it (the SwiGLU's
    place), named for what it fuses ("gather+gmm+swiglu" and the gmm's
    shape); the ops fused away start none. A run of arith or math
    ops on tensors is one "elementwise" stage; any other op with a tensor
    result (a concat, a pad) starts a stage named by its full name. What
    costs nothing (constants, empty tensors, casts, dims, reshapes,
    extracts) joins the stage before it.

    The marks are calls with side effects, so the lowering keeps the ops
    between them; they sit between top-level ops, outside the parallel
    loops, so a stage's time is its wall time whatever the threads inside
    it do. A function already marked is left as it is (a second run changes
    nothing). moe-to-llvm runs this pass with `stage-timers`; moe-bench
    --stage-timing reports the times (docs/training.md).
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "functions to mark (default: every function with a body)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numStagesMarked", "stages-marked", "Number of stages marked">,
  ];
}

#endif // MOE_PASSES_TD
