//===- Passes.td - the lowering strategy's passes ------------*- tablegen -*-===//
//
// Where every decision of how a block is lowered is made and written into
// the IR (dialect/MoeAttrs.td), before codegen/ reads it.
//
//===----------------------------------------------------------------------===//

#ifndef MOE_STRATEGY_PASSES_TD
#define MOE_STRATEGY_PASSES_TD

include "mlir/Pass/PassBase.td"

def MoeAttachTarget : Pass<"moe-attach-target", "::mlir::ModuleOp"> {
  let summary = "Write the #moe.target the module is compiled for";
  let description = [{
    Puts `moe.target = #moe.target<...>` on the module: the CPU named by
    `cpu` (an LLVM x86 CPU: sapphirerapids, znver4, haswell, ...), or, when
    `cpu` is empty, the CPU moec was given (`--target-cpu`) else this host,
    with the features the strategy reads, the register file, the caches (this
    host's from sysconf; a CPU named by `cpu` or --target-cpu gets the
    defaults, 48 KiB L1 and 2 MiB L2, even when it is the host's: what is
    selected for a named CPU is the same on every machine) and the host's
    thread count. A module that has a target keeps it unless
    `cpu` names one: a test or a user pins the target by writing it.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", "\"\"",
           "LLVM CPU name (empty: moec's --target-cpu, else the host)">,
  ];
  let dependentDialects = ["::mlir::moe::MoeDialect"];
}

def MoeSelectLowering : Pass<"moe-select-lowering", "::mlir::ModuleOp"> {
  let summary = "Choose how every moe.gmm and moe.tgmm is lowered, as #moe.gmm_lowering attributes";
  let description = [{
    Reads the module's `#moe.target` (moe-attach-target) and writes
    `moe.lowering = #moe.gmm_lowering<...>` on every moe.gmm and moe.tgmm:
    the kernel kinds compiled in, the tiles and the row thresholds, and the
    fusions; moe-lower-to-loops follows it and decides nothing. An op that
    carries one already (written by hand, or by an earlier run) keeps it,
    except with `gmm-strategy=reference`. Only what
    depends on the run stays a run-time choice: a group's row count picks
    among the kinds listed (AMX for groups of at least `amx_min_rows` when
    Linux grants the tile state, else the dot products, else FMA).

    `gmm-strategy=microkernel` (the default) lists the kinds the target has:
    bf16 gmms get `amx_bf16` with AMX-BF16 and `avx512bf16_dot` with
    AVX512_BF16 (else `fma` over widened bf16); int8 gmms get `amx_int8`
    with AMX-INT8 and `int8_vnni` with AVX512-VNNI, else `int8_avx2` with
    AVX2 (else `int8_vector`);
    bf16 gmms on transposed weights get `avx512bf16_dot` alone (never AMX),
    f32 gmms `fma`; a tgmm gets `avx512bf16_dot` on bf16 operands with
    AVX512_BF16, else `fma`. `microkernel-amx` lists the AMX kinds
    whatever the target (they fall back at run time); `microkernel-avx512bf16`
    runs every bf16 group on the dot products (refused for a target without
    AVX512_BF16); `microkernel-fma` the FMA tiles only; `reference` the
    row-at-a-time loops, no fusion.

    The tiles come from `gmm-tiling` if given, else from the line for the
    shape in `tuning-table`, else from the cost model of the target (register
    file, L1 and L2). Fusions: a SwiGLU over the gmm (fused gate|up, or two
    gmms of the same rows, each used only there) goes into the epilogue
    (`fuse = ["swiglu"]` on both gmms), and rows the pack gathers are read
    through its permutation (`gather`: the pack's rows become one
    moe.gather_rows of the tokens here). A shared expert's f32 matmuls become
    one-group moe.gmms (bf16 weights widened), so that the kernels run them.
  }];
  let options = [
    Option<"gmmStrategy", "gmm-strategy", "::mlir::moe::strategy::GmmStrategy",
           "::mlir::moe::strategy::GmmStrategy::microkernel",
           "which kernel kinds the gmms may use",
           "::mlir::moe::strategy::kGmmStrategyChoices.values()">,
    Option<"gmmTiling", "gmm-tiling", "std::string", "\"\"",
           "tiles for every gmm, e.g. mr=6,nv=4,kc=256,nc=256,mc=192">,
    Option<"tuningTable", "tuning-table", "std::string", "\"\"",
           "tuning table (moe-bench --tune) to take gmm tiles from">,
  ];
  let dependentDialects = ["::mlir::moe::MoeDialect", "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MoePrepareWeights : Pass<"moe-prepare-weights", "::mlir::ModuleOp"> {
  let summary = "Pack each public function's gmm weights once, in a function of their own";
  let description = [{
    After moe-select-lowering: for each public function `@f` whose gmms'
    kernels read their weights in one layout (`packedLayoutFor`: bf16 pairs
    for the AVX512_BF16 and AMX kinds, int8 quads for the VNNI, AVX2 and AMX
    int8 kinds, panels in the weights' element for the FMA kind) and whose
    weights are its arguments (through reshapes, concatenations, casts and
    moe.quantize), adds two functions and leaves `@f` as it is (but for a
    block moe-quantize split already, below):

    - `@f_prepare_weights(weights) -> (packed weights, ...)`: a
      `moe.pack_weights` of each such gmm's weights (and of its fused up
      gmm's), after their quantization for an int8 gmm, and any cast,
      reshape or quantization (scales) the rest still reads;
    - `@f_prepared(arguments, packed weights, ...)`: `@f`'s body with
      each of those gmms reading `packed(%p)`, so that its kernels pack
      nothing per call.

    A host that runs the block many times calls the first once when it loads
    the weights and the second per batch (moec run and moe-bench do); `@f`
    alone still computes the same result, packing per task. A packed gmm's
    kernels never read its `rhs`: in `@f_prepared` it is a `tensor.empty` of
    the weights' type, so that a host need not keep the raw
    weights alive beside the packed copy. `@f_prepared` takes the arguments
    of `@f` its body still names (activations, router, biases, shared
    experts' weights), then the packed weights and any reshaped or widened
    weight the rest reads.
    A function moe-quantize split already (`@f` is the call of its
    `@f_prepare_weights` and of its `@f_prepared`) is prepared as if it had
    not been: the two halves are merged back into one body, the quantized
    weights' packs join their quantization in a new `@f_prepare_weights`,
    the new halves replace moe-quantize's, and `@f` calls them. As in
    moe-quantize's own split, a `moe.quantize` of an argument is taken to be
    of weights: it runs once, in the prepare function.
    Not for a function that trains (a moe.tgmm: the weights change every
    step), one shard's program (moe-partition's; its host runs `@f`), or
    one whose halves' names another function has (a warning says so).
  }];
  let statistics = [
    Statistic<"numGmmsPacked", "gmms-packed", "gmms (with their fused up gmms) reading packed weights">,
  ];
  let dependentDialects = ["::mlir::moe::MoeDialect", "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // MOE_STRATEGY_PASSES_TD
