//===- MoeOps.td - moe dialect operations -----------------*- tablegen -*-===//
//
// Every op works on ranked tensors. The token count T (and so every row count
// derived from it) may be dynamic; hidden, intermediate and expert counts are
// static because they come from the weights. Verifiers name the operand and
// the dimension that disagree.
//
//===----------------------------------------------------------------------===//

#ifndef MOE_OPS_TD
#define MOE_OPS_TD

include "dialect/MoeBase.td"
include "dialect/MoeAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// moe.route
//===----------------------------------------------------------------------===//

def Moe_RouteOp : Moe_Op<"route", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "top-k routing of router logits to expert ids and weights";
  let description = [{
    Takes router logits `[T, E + N]` (E real experts, N = `null_experts`
    null experts scored by the router) and returns, per token, the ids
    `[T, K]` (i32) of the K chosen experts and their weights `[T, K]` (f32).

    - `order = topk_then_softmax` (default, the seeds' harness): take the K
      largest logits per token (ties: lower id first), then apply `scoring`
      to those K values (softmax over the K, or sigmoid each).
    - `order = softmax_then_topk` (Mixtral-style fused kernels): apply
      `scoring` over all E + N logits, take the K largest scores.
    - `renormalize`: divide the K weights of a token by their sum.
    - `routed_scaling F` (DeepSeek): the K weights times F, after the
      optional renormalisation.
    - Selection by scores (DeepSeek-V2/V3; `order softmax_then_topk`, no
      null experts): with `selection_bias(%b : [E])` the experts are chosen by s + b (s the
      scores), their weights are the unbiased s. With `groups G` the columns
      form G contiguous groups; each group is scored by its largest
      selection score (`group_score max`) or the sum of its two largest
      (`top2_sum`), the best `topk_groups` groups are kept (ties: lower
      group) and the top K are taken inside them; experts of the other
      groups score 0, as the families' code masks them (so a kept expert
      scoring below 0 loses to them).
    - Null experts (ids >= E): their slot weight is 0 and the slot costs no
      compute downstream. With `null_policy = take_until_null` every slot after
      a token's first null slot becomes null too (id E, weight 0). With
      `renormalize`, the real weights are renormalised after nulling.

    Example:
    ```mlir
    %ids, %w = moe.route %logits top 2 : tensor<?x60xf32>
    %ids8, %w8 = moe.route %logits top 8 scoring sigmoid order softmax_then_topk
                   renormalize null_experts 4 null_policy take_until_null
                   : tensor<?x64xf32>
    // DeepSeek-V3: sigmoid scores, biased group-limited selection.
    %ids3, %w3 = moe.route %logits selection_bias(%b : tensor<256xf32>) top 8
                   scoring sigmoid order softmax_then_topk renormalize groups 8
                   topk_groups 4 group_score top2_sum routed_scaling 2.5
                   : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins
    Moe_FloatTensor2D:$logits,
    Optional<Moe_F32Tensor1D>:$selection_bias,
    I64Attr:$k,
    DefaultValuedAttr<Moe_Scoring, "::mlir::moe::Scoring::softmax">:$scoring,
    DefaultValuedAttr<Moe_RouteOrder,
                      "::mlir::moe::RouteOrder::topk_then_softmax">:$order,
    UnitAttr:$renormalize,
    DefaultValuedAttr<I64Attr, "0">:$null_experts,
    DefaultValuedAttr<Moe_NullPolicy,
                      "::mlir::moe::NullPolicy::independent">:$null_policy,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    DefaultValuedAttr<I64Attr, "1">:$topk_groups,
    DefaultValuedAttr<Moe_GroupScore, "::mlir::moe::GroupScore::max">:$group_score,
    DefaultValuedAttr<F64Attr, "1.0">:$routed_scaling
  );
  let results = (outs Moe_I32Tensor2D:$ids, Moe_F32Tensor2D:$weights);
  let assemblyFormat = [{
    $logits (`selection_bias` `(` $selection_bias^ `:` type($selection_bias) `)`)?
    `top` $k (`scoring` $scoring^)? (`order` $order^)?
    (`renormalize` $renormalize^)? (`null_experts` $null_experts^)?
    (`null_policy` $null_policy^)? (`groups` $groups^)? (`topk_groups` $topk_groups^)?
    (`group_score` $group_score^)? (`routed_scaling` $routed_scaling^)?
    attr-dict `:` type($logits)
  }];
  let builders = [
    // The forms before group-limited selection: no selection bias, one
    // group, no scaling.
    OpBuilder<(ins "::mlir::Value":$logits, "int64_t":$k)>
  ];
  let extraClassDeclaration = [{
    /// Number of real experts E (logit columns minus null experts).
    int64_t getNumExperts();
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Moe_RouteGradOp : Moe_Op<"route_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradient of moe.route's weights with respect to its logits";
  let description = [{
    Given `weights_grad [T, K]`, the gradient of the weights of a `moe.route`
    with these attributes over `logits [T, E + N]`, returns the gradient
    `[T, E + N]` (f32) with respect to the logits. The selection is held
    fixed (it is piecewise constant in the logits) and is made again from
    the logits exactly as `moe.route` makes it, because a slot nulled by
    `take_until_null` no longer names the column whose logit its token's
    softmax denominator still read. Per token, with scores s of the chosen
    columns c, null slots weight 0 and renormalised weights w = v / sum(v):
    dv = (dw - w . dw) / sum(v) (or dw without `renormalize`), ds = dv outside
    null slots; sigmoid: d logit[c_k] = ds_k s_k (1 - s_k); softmax over the
    K chosen or all columns: d logit_j = p_j (dp_j - sum_k s_k ds_k) with dp
    the scattered ds. K is the width of `weights_grad`. A `routed_scaling`
    F scales dw by F first. Group-limited selection and a selection bias only
    choose (piecewise constant, held fixed like the top-K): the weights are
    the unbiased scores of the chosen, differentiated as above; the
    selection bias gets no gradient (DeepSeek-V3 updates it by its load
    balancing rule, not by gradients).

    ```mlir
    %dlogits = moe.route_grad %dw, %logits scoring sigmoid renormalize
                 : tensor<?x8xf32>, tensor<?x60xf32>
    ```
  }];
  let arguments = (ins
    Moe_F32Tensor2D:$weights_grad,
    Moe_FloatTensor2D:$logits,
    Optional<Moe_F32Tensor1D>:$selection_bias,
    DefaultValuedAttr<Moe_Scoring, "::mlir::moe::Scoring::softmax">:$scoring,
    DefaultValuedAttr<Moe_RouteOrder,
                      "::mlir::moe::RouteOrder::topk_then_softmax">:$order,
    UnitAttr:$renormalize,
    DefaultValuedAttr<I64Attr, "0">:$null_experts,
    DefaultValuedAttr<Moe_NullPolicy,
                      "::mlir::moe::NullPolicy::independent">:$null_policy,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    DefaultValuedAttr<I64Attr, "1">:$topk_groups,
    DefaultValuedAttr<Moe_GroupScore, "::mlir::moe::GroupScore::max">:$group_score,
    DefaultValuedAttr<F64Attr, "1.0">:$routed_scaling
  );
  let results = (outs Moe_F32Tensor2D:$logits_grad);
  let assemblyFormat = [{
    $weights_grad `,` $logits
    (`selection_bias` `(` $selection_bias^ `:` type($selection_bias) `)`)?
    (`scoring` $scoring^)? (`order` $order^)?
    (`renormalize` $renormalize^)? (`null_experts` $null_experts^)?
    (`null_policy` $null_policy^)? (`groups` $groups^)? (`topk_groups` $topk_groups^)?
    (`group_score` $group_score^)? (`routed_scaling` $routed_scaling^)?
    attr-dict `:` type($weights_grad) `,` type($logits)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// moe.null_slots
//===----------------------------------------------------------------------===//

def Moe_NullSlotsOp : Moe_Op<"null_slots", [Pure,
    AllTypesMatch<["ids", "new_ids"]>, AllTypesMatch<["weights", "new_weights"]>]> {
  let summary = "null a fraction of the routed slots (benchmark null routing)";
  let description = [{
    The benchmark form of null routing (semantics doc, section 6): given a
    routing `ids [T, K]` (i32), `weights [T, K]` (f32) over `experts` real
    experts and uniform draws `draws [T, K]` (f32 in [0, 1)), returns the
    routing with some slots sent to no expert: id `experts`, weight 0. Null
    slots occupy no row in `moe.pack`, so they cost no compute downstream.

    - `policy = independent`: slot (t, k) is nulled when draws[t, k] < f, so
      a fraction f of the slots is null on average.
    - `policy = take_until_null`: a token keeps its slots up to its first
      drawn null and nulls every later one (0..K real experts per token). The
      per-slot probability p is chosen so that the expected null fraction is
      still f: 1 - (1/K) sum_{j=1..K} (1 - p)^j = f.
    - Slots that are null already (ids outside [0, experts), the model form's
      null experts) stay null and start take_until_null's suffix.
    - `renormalize`: the real weights of a token are divided by their sum
      (unchanged when a token has none).

    The draws are an input, not a seed, so a run is reproducible, a sharded
    block splits them with the tokens, and the host that makes them chooses
    the generator.

    ```mlir
    %ids2, %w2 = moe.null_slots %ids, %w, %u fraction 5.000000e-01 experts 60
        policy take_until_null renormalize
        : tensor<?x8xi32>, tensor<?x8xf32>, tensor<?x8xf32>
    ```
  }];
  let arguments = (ins
    Moe_I32Tensor2D:$ids,
    Moe_F32Tensor2D:$weights,
    Moe_F32Tensor2D:$draws,
    F64Attr:$fraction,
    I64Attr:$experts,
    DefaultValuedAttr<Moe_NullPolicy,
                      "::mlir::moe::NullPolicy::independent">:$policy,
    UnitAttr:$renormalize
  );
  let results = (outs Moe_I32Tensor2D:$new_ids, Moe_F32Tensor2D:$new_weights);
  let assemblyFormat = [{
    $ids `,` $weights `,` $draws `fraction` $fraction `experts` $experts
    (`policy` $policy^)? (`renormalize` $renormalize^)? attr-dict
    `:` type($ids) `,` type($weights) `,` type($draws)
  }];
  let extraClassDeclaration = [{
    /// The probability with which one draw nulls its slot (see above).
    double getSlotProbability();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// moe.pack
//===----------------------------------------------------------------------===//

def Moe_PackOp : Moe_Op<"pack", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "sort token-slot assignments by expert into row groups";
  let description = [{
    Flattens the assignments token-major (position p = t * K + k) and sorts them
    stably by expert id. Results:
    - `rows [R, H]`: rows[r] = x[sort[r] / K] for rows inside a group, zero for
      the rows after the last group;
    - `sorted_weights [R]` (f32): the routing weight of each row, 0 outside
      groups;
    - `permutation [R]` (i32): the position p each row came from, -1 for
      padding rows;
    - `group_sizes [L]` (i32): rows of each local expert; group e occupies rows
      [sum(group_sizes[0:e]), +group_sizes[e]).

    Ids outside the local expert range [`expert_offset`, `expert_offset` + L)
    (L = `local_experts`, default `experts` - `expert_offset`): null ids
    (>= `experts`), other shards' experts and negative ids, are left out: they
    occupy no row, so no work is done for them. The rows after the last group
    are padding. R is T * K, or `capacity` when given: the compact
    expert-parallel dispatch gathers only its local experts' rows into a
    buffer of that many rows; rows beyond the capacity are dropped (the groups
    are cut from the end, so padding never shifts a group boundary).

    `strategy` picks the sorting algorithm (argsort, tuple_sort, counting);
    all three produce the same permutation.

    Example:
    ```mlir
    %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts 60
        : tensor<?x2048xf32>, tensor<?x2xi32>, tensor<?x2xf32>
    // Compact EP dispatch on shard 1 of 4: experts 15..29, 4096 rows.
    %r1, %sw1, %p1, %s1 = moe.pack %x, %ids, %w experts 60 offset 15 local 15
        capacity 4096 strategy counting
        : tensor<?x2048xf32>, tensor<?x8xi32>, tensor<?x8xf32>
    ```
  }];
  let arguments = (ins
    Moe_FloatTensor2D:$x,
    Moe_I32Tensor2D:$ids,
    Moe_F32Tensor2D:$weights,
    I64Attr:$experts,
    DefaultValuedAttr<I64Attr, "0">:$expert_offset,
    OptionalAttr<I64Attr>:$local_experts,
    OptionalAttr<I64Attr>:$capacity,
    DefaultValuedAttr<Moe_PackStrategy,
                      "::mlir::moe::PackStrategy::argsort">:$strategy
  );
  let results = (outs Moe_FloatTensor2D:$rows, Moe_F32Tensor1D:$sorted_weights,
                      Moe_I32Tensor1D:$permutation, Moe_I32Tensor1D:$group_sizes);
  let assemblyFormat = [{
    $x `,` $ids `,` $weights `experts` $experts
    (`offset` $expert_offset^)? (`local` $local_experts^)?
    (`capacity` $capacity^)? (`strategy` $strategy^)?
    attr-dict `:` type($x) `,` type($ids) `,` type($weights)
  }];
  let extraClassDeclaration = [{
    /// L: the number of experts this pack forms groups for.
    int64_t getNumLocalExperts();
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// moe.gather_rows
//===----------------------------------------------------------------------===//

def Moe_GatherRowsOp : Moe_Op<"gather_rows", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gather token rows by an assignment permutation";
  let description = [{
    rows[r] = src[permutation[r] / K] where permutation holds token-major
    assignment positions p = t * K + k (as produced by `moe.pack`); rows whose
    position is negative (padding) are zero. This is the gather half of
    `moe.pack` on its own (the `prequeue` benchmark mode times the rest
    without it) and the adjoint of the un-permute in `moe.combine`.

    ```mlir
    %rows = moe.gather_rows %src, %perm top 2 : tensor<?x2048xf32>, tensor<?xi32>
    ```
  }];
  // Any element type: the all-to-all dispatch moves expert ids this way too.
  let arguments = (ins 2DTensorOf<[AnyType]>:$src, Moe_I32Tensor1D:$permutation,
                       I64Attr:$k);
  let results = (outs 2DTensorOf<[AnyType]>:$rows);
  let assemblyFormat = [{
    $src `,` $permutation `top` $k attr-dict `:` type($src) `,` type($permutation)
  }];
  let hasVerifier = 1;
}

def Moe_ScatterSlotsOp : Moe_Op<"scatter_slots", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "per-row values back to their token-slot positions";
  let description = [{
    out[t, k] = values[r] for the row r whose `permutation` entry is the
    position p = t * K + k, and 0 for a slot no row came from (null slots,
    other shards' experts, rows past a capacity). `like [T, K]` gives T and K;
    its values are not read. The inverse of gathering the routing weights by
    the permutation (pack's `sorted_weights`), so the adjoint of it: the
    backward returns the routing weights' gradient to token order this way.

    ```mlir
    %dw = moe.scatter_slots %dsorted, %perm, %w : tensor<?xf32>, tensor<?xi32>, tensor<?x2xf32>
    ```
  }];
  let arguments = (ins Moe_F32Tensor1D:$values, Moe_I32Tensor1D:$permutation,
                       Moe_F32Tensor2D:$like);
  let results = (outs Moe_F32Tensor2D:$out);
  let assemblyFormat = [{
    $values `,` $permutation `,` $like attr-dict
    `:` type($values) `,` type($permutation) `,` type($like)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// moe.gmm / moe.tgmm
//===----------------------------------------------------------------------===//

def Moe_GmmOp : Moe_Op<"gmm", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor]> {
  let summary = "grouped matmul: each row group times its expert's weights";
  let description = [{
    out[r, :] = lhs[r, :] @ rhs[g(r)] where the rows are partitioned
    contiguously by `group_sizes` (group e = rows [start_e, start_e + gs_e)).
    `lhs` is `[R, D]`, `rhs` is `[E, D, N]`, the result `[R, N]`. With
    `transpose_rhs`, `rhs` is `[E, N, D]` and each group multiplies by
    rhs[e]^T: the gradient of the forward gmm with respect to its rows.
    Rows past sum(group_sizes) belong to no group and are zero. Groups may be
    empty. Products accumulate in f32 whatever the storage type; the result
    has the element type of `lhs`.

    int8 (`moe.quantize`'s weights, `scales(...)` given): `rhs` is i8 and
    `rhs_scales` holds its scales, `[E]` (one per expert) or `[E, N]` (one
    per output channel). Each row of `lhs` is quantized symmetrically on the
    fly, s_r = max_d |lhs[r, d]| / 127, q[r, d] = clamp(roundeven(lhs[r, d] /
    s_r), -127, 127) (zero for a zero row), the products accumulate in i32,
    and out[r, n] = s_r * scale(g(r), n) * sum_d q[r, d] * rhs[g(r), d, n]
    (shared/docs/moe-semantics.md, section 7). Forward only: no
    `transpose_rhs`.

    ```mlir
    %h = moe.gmm %rows, %w13, %sizes : tensor<?x2048xbf16>, tensor<60x2048x2816xbf16>, tensor<60xi32>
    %dx = moe.gmm %dh, %w13, %sizes transpose_rhs : tensor<?x2816xf32>, tensor<60x2048x2816xf32>, tensor<60xi32>
    %q = moe.gmm %rows, %w13q, %sizes scales(%s : tensor<60xf32>) : tensor<?x2048xf32>, tensor<60x2048x2816xi8>, tensor<60xi32>
    %o = moe.gmm %act, %w2, %sizes bias(%b2 : tensor<32x2880xbf16>) : tensor<?x2880xbf16>, tensor<32x2880x2880xbf16>, tensor<32xi32>
    ```

    With `bias(%b : [E, N])` (GPT-OSS's expert biases), row r gets
    bias[g(r)] added to its products, in f32, before any fused activation
    and rounding: the kernels add it in their epilogue. Not with
    `transpose_rhs`.

    With `packed(%p : ...)`, `%p` is `rhs` already in the layout of the
    kernel its `#moe.gmm_lowering` names (a `moe.pack_weights` of `rhs`, and
    of the up gmm's `rhs` when the lowering fuses a two-gmm SwiGLU), made
    once when the weights were loaded (`moe-prepare-weights`): the kernel
    reads `%p` and packs nothing, nor reads `rhs`: `rhs` gives the weights'
    type, and its elements need not be there (`@f_prepared` passes a
    `tensor.empty`, so that the raw weights need not stay alive).
    `moe-lower-to-loops` checks that `%p`'s shape is the lowering's layout,
    and refuses a packed gmm without a lowering that reads it.
  }];
  let arguments = (ins Moe_FloatTensor2D:$lhs, Moe_GmmRhsTensor3D:$rhs,
                       Moe_I32Tensor1D:$group_sizes,
                       Optional<Moe_F32Tensor>:$rhs_scales,
                       Optional<Moe_FloatTensor2D>:$bias,
                       Optional<Moe_PackedWeightsTensor>:$packed_rhs,
                       UnitAttr:$transpose_rhs);
  let results = (outs Moe_FloatTensor2D:$out);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $group_sizes
    (`scales` `(` $rhs_scales^ `:` type($rhs_scales) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`packed` `(` $packed_rhs^ `:` type($packed_rhs) `)`)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) `,` type($group_sizes)
  }];
  let builders = [
    // The float forms, with no scales and no bias.
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   "::mlir::Value":$group_sizes,
                   CArg<"bool", "false">:$transpose_rhs)>,
    // Scales and bias, weights not packed.
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   "::mlir::Value":$group_sizes, "::mlir::Value":$rhs_scales,
                   "::mlir::Value":$bias, CArg<"bool", "false">:$transpose_rhs)>
  ];
  let extraClassDeclaration = [{
    /// int8 weights with their scales.
    bool isQuantized() { return static_cast<bool>(getRhsScales()); }
    /// bf16 rows and weights: the form the packed bf16 kernels (AVX512_BF16
    /// dot products; AMX when not transposed) read.
    bool isPackableBf16() {
      auto bf16 = [](::mlir::Value v) {
        return ::llvm::cast<::mlir::ShapedType>(v.getType()).getElementType().isBF16();
      };
      return !isQuantized() && bf16(getLhs()) && bf16(getRhs());
    }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Moe_PackWeightsOp : Moe_Op<"pack_weights", [Pure]> {
  let summary = "expert weights in a gmm kernel's operand layout";
  let description = [{
    `gate [E, D, Nw]` (and, for a SwiGLU over two gmms, `up [E, D, Nw]`)
    laid out as a gmm kernel reads its weight blocks, so that a kernel given
    the result (`moe.gmm ... packed(%p)`) packs nothing per call:

        packed[e, t, k, c * lanes + i] = W[e, k * lanes + i, column(t, c)]

    zero past the depth D and past the last column. `t` is a tile of
    `tile_columns` columns; `block_columns / tile_columns` consecutive
    tiles make a block, the columns one kernel task multiplies. `lanes`
    depth values sit side by side (2: the bf16 pairs vdpbf16ps and
    tdpbf16ps take, depth padded to 32; 1: the panels of the FMA tiles, in
    the weights' element: bf16 ones stay bf16, half the bytes a decode-size
    batch streams, which the FMA kind widens as it reads them (a task of
    one register tile in the tile, a task of more a depth block at a time
    into the worker's block); 4:
    the int8 quads vpdpbusd and tdpbsud take, depth padded to 64, each byte
    the unsigned `W + 128`, i.e. W with its top bit flipped, since those
    instructions take unsigned weights). Without `gate_up_unit`, the
    physical columns are `gate`'s in order. With it (a fused SwiGLU), each
    run of `gate_up_unit` physical columns holds `gate_up_unit / 2` columns of the gate and the
    same columns of the up projection: `up`'s, or, with no `up`, the second
    half of `gate` (a fused w13 `[E, D, 2N]`).

    The result is `[E, blocks * block_columns / tile_columns, depth rows,
    tile_columns * lanes]`: `blocks` is the output columns (N, or Nw)
    divided by the output columns of a block (`block_columns`, or half of
    it with `gate_up_unit`), rounded up; `depth rows` is D (lanes 1), D
    rounded up to 32, halved (lanes 2), or D rounded up to 64, quartered
    (lanes 4). `moe-prepare-weights` makes these
    from each gmm's `#moe.gmm_lowering` and moves them into a function run
    when the weights are loaded.

    ```mlir
    %p = moe.pack_weights %w1, %w3 {lanes = 2, tile_columns = 16, block_columns = 320,
                                    gate_up_unit = 32}
        : tensor<60x2048x1408xbf16>, tensor<60x2048x1408xbf16> -> tensor<60x180x1024x32xbf16>
    ```
  }];
  let arguments = (ins Moe_GmmRhsTensor3D:$gate, Optional<Moe_GmmRhsTensor3D>:$up,
                       I64Attr:$lanes, I64Attr:$tile_columns, I64Attr:$block_columns,
                       DefaultValuedAttr<I64Attr, "0">:$gate_up_unit);
  let results = (outs Moe_PackedWeightsTensor:$packed);
  let assemblyFormat = [{
    $gate (`,` $up^)? attr-dict `:` type($gate) (`,` type($up)^)? `->` type($packed)
  }];
  let extraClassDeclaration = [{
    /// The packed type of `gate` (and `up`) in this layout, or a reason
    /// why the layout does not fit them.
    static ::mlir::FailureOr<::mlir::RankedTensorType>
    packedType(::mlir::RankedTensorType gate, ::mlir::RankedTensorType up, int64_t lanes,
               int64_t tileColumns, int64_t blockColumns, int64_t gateUpUnit,
               std::string &why);
  }];
  let hasVerifier = 1;
}

def Moe_QuantizeOp : Moe_Op<"quantize", [Pure, InferTypeOpAdaptor]> {
  let summary = "symmetric int8 quantization of expert weights";
  let description = [{
    `input [E, D, N]` (f32 or bf16) to `values [E, D, N]` (i8) and f32
    `scales`: scale = max|w| / 127 over each expert (`per_expert`, scales
    `[E]`) or over each expert's output column (`per_channel`, the D values
    of w[e, :, n], scales `[E, N]`); q = clamp(roundeven(w / scale), -127,
    127), zero where the scale is zero. No zero point. What `moe.gmm` takes
    with `scales(...)`; `moe-quantize` hoists it into a function run once
    when the weights are loaded.

    ```mlir
    %q, %s = moe.quantize %w13 per_channel : tensor<60x2048x2816xf32>
    ```
  }];
  let arguments = (ins Moe_FloatTensor3D:$input,
                       Moe_QuantGranularity:$granularity);
  let results = (outs Moe_I8Tensor3D:$values, Moe_F32Tensor:$scales);
  let assemblyFormat = "$input $granularity attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Moe_DequantizeOp : Moe_Op<"dequantize", [Pure, InferTypeOpAdaptor]> {
  let summary = "int8 expert weights back to f32";
  let description = [{
    out[e, d, n] = values[e, d, n] * scale, with the scale of `moe.quantize`
    (`[E]` per expert or `[E, N]` per output channel). The weights the int8
    forward multiplied by, in float: the fake-quantization mode and the
    straight-through input gradient read them.

    ```mlir
    %w = moe.dequantize %q, %s : tensor<60x2048x2816xi8>, tensor<60x2816xf32>
    ```
  }];
  let arguments = (ins Moe_I8Tensor3D:$values, Moe_F32Tensor:$scales);
  let results = (outs Moe_F32Tensor3D:$out);
  let assemblyFormat = "$values `,` $scales attr-dict `:` type($values) `,` type($scales)";
  let hasVerifier = 1;
}

def Moe_FakeQuantOp : Moe_Op<"fake_quant", [Pure, SameOperandsAndResultType]> {
  let summary = "per-row int8 quantization and back, in float";
  let description = [{
    Each row of `input [R, D]` quantized as `moe.gmm` quantizes its rows
    (s_r = max|x[r, :]| / 127, q = clamp(roundeven(x / s_r), -127, 127)) and
    multiplied back: q * s_r, in the input's type. The fake-quantization
    mode's activations, for accuracy studies on the float kernels; its
    gradient is the straight-through estimator's (the identity).

    ```mlir
    %xq = moe.fake_quant %x : tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins Moe_FloatTensor2D:$input);
  let results = (outs Moe_FloatTensor2D:$out);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Moe_TgmmOp : Moe_Op<"tgmm", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "transposed grouped matmul: per-expert weight gradients";
  let description = [{
    out[e] = lhs_e^T @ rhs_e for every group e, where lhs_e and rhs_e are the
    rows of group e of `lhs [R, D]` and `rhs [R, N]`; the result is
    `[E, D, N]`, zero for empty groups. This is the gradient of `moe.gmm` with
    respect to its expert weights (lhs = the forward rows, rhs = the output
    gradient). Accumulates in f32; result element type is that of `lhs`.

    ```mlir
    %dw = moe.tgmm %rows, %dh, %sizes : tensor<?x2048xf32>, tensor<?x2816xf32>, tensor<60xi32>
    ```
  }];
  let arguments = (ins Moe_FloatTensor2D:$lhs, Moe_FloatTensor2D:$rhs,
                       Moe_I32Tensor1D:$group_sizes);
  let results = (outs Moe_FloatTensor3D:$out);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $group_sizes attr-dict
    `:` type($lhs) `,` type($rhs) `,` type($group_sizes)
  }];
  let extraClassDeclaration = [{
    /// bf16 rows and gradients: what the avx512bf16_dot kind (vdpbf16ps on
    /// row pairs) reads.
    bool hasBf16Operands() {
      auto bf16 = [](::mlir::Value v) {
        return ::llvm::cast<::mlir::ShapedType>(v.getType()).getElementType().isBF16();
      };
      return bf16(getLhs()) && bf16(getRhs());
    }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// moe.swiglu / moe.scale_rows
//===----------------------------------------------------------------------===//

def Moe_SwigluOp : Moe_Op<"swiglu", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "SwiGLU activation: silu(gate) * up";
  let description = [{
    With one operand `[R, 2M]` (the output of a fused gate|up projection, gate
    in the first M columns), or two operands gate `[R, M]` and up `[R, M]`
    (the baseline two-matmul form), returns silu(gate) * up `[R, M]` with
    silu(z) = z * sigmoid(z). A dedicated op rather than upstream arith/math
    ops so that the fusion passes can find it and move it into the up-gmm's
    epilogue as one unit.

    `activation gpt_oss` is GPT-OSS's clamped form: gate = min(gate, limit),
    up = clamp(up, -limit, limit), out = (up + 1) * gate * sigmoid(alpha *
    gate) (`alpha`, `limit` default 1.702 and 7.0). `interleaved` (one fused
    operand only): its columns alternate gate, up, gate, up (GPT-OSS's
    gate_up_proj), instead of gate in the first M columns.

    ```mlir
    %a = moe.swiglu %h : tensor<?x2816xf32>
    %a2 = moe.swiglu %gate, %up : tensor<?x1408xf32>, tensor<?x1408xf32>
    ```
  }];
  let arguments = (ins Variadic<Moe_FloatTensor2D>:$inputs,
                       DefaultValuedAttr<Moe_Activation,
                           "::mlir::moe::Activation::swiglu">:$activation,
                       DefaultValuedAttr<F64Attr, "1.702">:$alpha,
                       DefaultValuedAttr<F64Attr, "7.0">:$limit,
                       UnitAttr:$interleaved);
  let results = (outs Moe_FloatTensor2D:$out);
  let assemblyFormat = [{
    $inputs (`activation` $activation^)? (`alpha` $alpha^)? (`limit` $limit^)?
    (`interleaved` $interleaved^)? attr-dict `:` type($inputs)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Moe_SwigluGradOp : Moe_Op<"swiglu_grad", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "gradient of moe.swiglu with respect to its inputs";
  let description = [{
    Given the gradient `grad [R, M]` of a `moe.swiglu` output and that
    swiglu's inputs (one fused `[R, 2M]` or gate and up `[R, M]`), returns the
    gradient with respect to each input, in the same form:
    d_gate = grad * up * silu'(gate), d_up = grad * silu(gate), with
    silu'(z) = sigmoid(z) * (1 + z * (1 - sigmoid(z))). Recomputes the
    activation instead of reading a saved one, which is what the remat
    policies trade on. The attributes are those of the moe.swiglu; for
    gpt_oss, with g, u clamped and s = sigmoid(alpha g): d_gate = grad (u + 1)
    s (1 + alpha g (1 - s)) where gate < limit, else 0; d_up = grad g s where
    |up| < limit, else 0.

    ```mlir
    %dh = moe.swiglu_grad %da, %h : tensor<?x1408xf32>, tensor<?x2816xf32>
    ```
  }];
  let arguments = (ins Variadic<Moe_FloatTensor2D>:$inputs,
                       Moe_FloatTensor2D:$grad,
                       DefaultValuedAttr<Moe_Activation,
                           "::mlir::moe::Activation::swiglu">:$activation,
                       DefaultValuedAttr<F64Attr, "1.702">:$alpha,
                       DefaultValuedAttr<F64Attr, "7.0">:$limit,
                       UnitAttr:$interleaved);
  let results = (outs Variadic<Moe_FloatTensor2D>:$input_grads);
  let assemblyFormat = [{
    $grad `,` $inputs (`activation` $activation^)? (`alpha` $alpha^)? (`limit` $limit^)?
    (`interleaved` $interleaved^)? attr-dict `:` type($grad) `,` type($inputs)
  }];
  let hasVerifier = 1;
}

def Moe_SigmoidOp : Moe_Op<"sigmoid", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise logistic sigmoid, 1 / (1 + exp(-x))";
  let description = [{
    Qwen2-MoE gates its shared expert per token by sigmoid(x @ w_gate): a
    dedicated op (upstream's math dialect has none) that the backward knows
    (d x = d out * s * (1 - s)) and that moe-lower-to-loops lowers.

    ```mlir
    %g = moe.sigmoid %z : tensor<?xf32>
    ```
  }];
  let arguments = (ins Moe_F32Tensor:$input);
  let results = (outs Moe_F32Tensor:$out);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Moe_ScaleRowsOp : Moe_Op<"scale_rows", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "multiply each row by a per-row scale (preweight)";
  let description = [{
    out[r, :] = input[r, :] * scale[r]. The `preweight` form of the expert MLP
    multiplies the activations by the sorted routing weights before the down
    projection, so that `moe.combine` can sum without weights.

    ```mlir
    %aw = moe.scale_rows %a, %sorted_w : tensor<?x1408xf32>, tensor<?xf32>
    ```
  }];
  let arguments = (ins Moe_FloatTensor2D:$input, Moe_F32Tensor1D:$scale);
  let results = (outs Moe_FloatTensor2D:$out);
  let assemblyFormat = "$input `,` $scale attr-dict `:` type($input) `,` type($scale)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// moe.combine
//===----------------------------------------------------------------------===//

def Moe_CombineOp : Moe_Op<"combine", [Pure,
    InferTypeOpAdaptor]> {
  let summary = "un-permute expert rows and sum the k slots of each token";
  let description = [{
    out[t, :] = sum_k weights[t, k] * y[p = t * K + k] where y is `rows`
    un-permuted (rows[r] came from position permutation[r]; negative positions
    are padding and ignored). `weights [T, K]` are the routing weights in token
    order and give T and K. Accumulates in f32 and returns the element type of
    `rows`. With `preweighted`, the rows already carry their weight (the
    `preweight` MLP form) and are summed as they are.

    `strategy = unsort` gathers each token's K rows through the inverse
    permutation; `strategy = scatter` adds each row into its token. Same
    result.

    ```mlir
    %y = moe.combine %out_rows, %perm, %w : tensor<?x2048xf32>, tensor<?xi32>, tensor<?x2xf32>
    ```
  }];
  let arguments = (ins Moe_FloatTensor2D:$rows, Moe_I32Tensor1D:$permutation,
                       Moe_F32Tensor2D:$weights,
                       DefaultValuedAttr<Moe_CombineStrategy,
                           "::mlir::moe::CombineStrategy::unsort">:$strategy,
                       UnitAttr:$preweighted);
  let results = (outs Moe_FloatTensor2D:$out);
  let assemblyFormat = [{
    $rows `,` $permutation `,` $weights (`strategy` $strategy^)?
    (`preweighted` $preweighted^)? attr-dict
    `:` type($rows) `,` type($permutation) `,` type($weights)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives over a named axis of a shard.grid
//===----------------------------------------------------------------------===//

// The grid itself is the upstream `shard.grid`; `moe.axes` on it names its
// axes. These ops exist because users of MoE code think in named axes (JAX's
// psum(x, "expert")); `-moe-collectives-to-shard` turns the uniform ones into
// the upstream shard.all_reduce / all_gather / reduce_scatter (axis indices);
// of those MLIR 22's convert-shard-to-mpi lowers only all_reduce.
// moe.all_to_all is ragged, which upstream's shard.all_to_all (equal splits)
// cannot express.
class Moe_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Moe_Op<mnemonic, !listconcat(traits,
          [DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag commonArgs = (ins FlatSymbolRefAttr:$grid, StrArrayAttr:$axes);
}

def Moe_PsumOp : Moe_CollectiveOp<"psum", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "sum over the shards of named grid axes (all-reduce)";
  let description = [{
    Every shard along `axes` of `grid` receives the elementwise sum of all
    their inputs. The all-reduce that closes dense and compact EP.

    ```mlir
    shard.grid @mesh(shape = 2x2) {moe.axes = ["data", "expert"]}
    %y = moe.psum %partial over @mesh ["expert"] : tensor<?x2048xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), commonArgs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `over` $grid $axes attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Moe_AllGatherOp : Moe_CollectiveOp<"all_gather", [Pure]> {
  let summary = "concatenate the shards of named grid axes along a dimension";
  let description = [{
    Every shard along `axes` receives the concatenation, along `dim`, of all
    their inputs in shard order. The ring EP mode gathers token shards with it.

    ```mlir
    %x_all = moe.all_gather %x over @mesh ["expert"] dim 0 : tensor<1024x2048xf32> -> tensor<2048x2048xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), commonArgs,
                       (ins I64Attr:$dim));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `over` $grid $axes `dim` $dim attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Moe_ReduceScatterOp : Moe_CollectiveOp<"reduce_scatter", [Pure]> {
  let summary = "sum over named grid axes, each shard keeping one slice";
  let description = [{
    Sums the inputs of all shards along `axes` and splits the sum along `dim`
    into equal slices, shard i keeping slice i. The ring EP mode returns the
    [T, H] partial to token shards with it (psum_scatter in JAX).

    ```mlir
    %y = moe.reduce_scatter %partial over @mesh ["expert"] dim 0 : tensor<2048x2048xf32> -> tensor<1024x2048xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input), commonArgs,
                       (ins I64Attr:$dim));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `over` $grid $axes `dim` $dim attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Moe_AllToAllOp : Moe_CollectiveOp<"all_to_all", [Pure,
    AllTypesMatch<["send_counts", "recv_counts"]>]> {
  let summary = "ragged all-to-all: send each row block to the shard that owns it";
  let description = [{
    `rows [R, H]` are partitioned contiguously by `send_counts [D]` (D = the
    number of shards along `axes`): block j goes to shard j. The result holds
    the blocks received from shards 0..D-1 one after another, `recv_counts[j]`
    rows from shard j, then zero rows up to the result's row count (a
    capacity). This is the dispatch (and, run backwards, the return) of
    all-to-all expert parallelism, which needs unequal splits that the
    upstream `shard.all_to_all` does not have.

    ```mlir
    %recv, %counts = moe.all_to_all %rows, %send over @mesh ["expert"]
        : tensor<?x2048xf32>, tensor<4xi32> -> tensor<?x2048xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$rows, Moe_I32Tensor1D:$send_counts),
                       commonArgs);
  let results = (outs AnyRankedTensor:$received, Moe_I32Tensor1D:$recv_counts);
  let assemblyFormat = [{
    $rows `,` $send_counts `over` $grid $axes attr-dict
    `:` type($rows) `,` type($send_counts) `->` type($received)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// moe.block
//===----------------------------------------------------------------------===//

def Moe_BlockOp : Moe_Op<"block", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor]> {
  let summary = "a whole MoE block: router, routed experts, shared expert";
  let description = [{
    The block in one op, for users who want to write one line; the
    `-moe-expand-block` pass turns it into `moe.route`, `moe.pack`, `moe.gmm`,
    `moe.swiglu`, `moe.combine` and, for the shared expert, `linalg.matmul`.

    Operands, with `x [T, H]`:
    - the router: either `logits(%l : [T, E + N])` (fixed logits, as the
      seeds' harness fed) or `router(%w : [H, E + N])` (logits = x @ w);
    - `gate_up(...)`: either `w13 [E, H, 2M]` (`fused_w13`, gate in the first
      M columns) or `w1 [E, H, M], w3 [E, H, M]` (`baseline`); then
      `down(w2 [E, M, H])`;
    - optionally the shared expert: `shared_gate_up(...)` with either
      `sw13 [H, 2S]` (`shared_fused`) or `sw1 [H, S], sw3 [H, S]`, and
      `shared_down(sw2 [S, H])`.

    Benchmark null routing: with `null_draws(%u : [T, K])` and
    `null_fraction f`, the routing goes through `moe.null_slots` (policy
    `null_policy`, `renormalize` renormalising the real weights after the
    nulling) before the experts; both are given or neither.

    After the operands come `top K` and the knobs as keyword-value pairs,
    in any order, each once: `scoring`, `order`, `renormalize`,
    `null_experts`, `null_policy`, `null_fraction`, `groups`, `topk_groups`,
    `group_score`, `routed_scaling`, `pack_strategy`, `combine_strategy`,
    `preweight`, `weight_input`, `activation`, `alpha`, `limit`,
    `interleaved`, `family` (unit knobs have no value). They print in that
    order, defaults left out; an unknown keyword or value is named with the
    accepted ones.

    The routing attributes are those of `moe.route`; `pack_strategy` and
    `combine_strategy` those of `moe.pack` and `moe.combine`; `preweight`
    scales the activations by the routing weights before the down projection.
    The result is `[T, H]` with the element type of `x`.

    The open models' variants (docs/dialect.md has a block per family):
    - `router_bias(%b : [E + N])`: logits = x @ router + b (GPT-OSS);
      `routed_scaling` with `renormalize` and benchmark null routing is
      refused (null_slots' renormalisation would undo the scaling);
      `selection_bias(...)`, `groups`, `topk_groups`, `group_score`,
      `routed_scaling`: moe.route's (DeepSeek-V2/V3).
    - `gate_up_bias(%b : [E, 2M])` (one fused gate_up only) and
      `down_bias(%b : [E, H])`: the experts' biases (GPT-OSS), added in the
      gmms' epilogues.
    - `activation gpt_oss`, `alpha`, `limit`, `interleaved`: moe.swiglu's,
      for the routed experts (the shared expert is plain SwiGLU).
    - `weight_input`: the routing weight scales the expert's input rows
      instead of its output (Llama-4).
    - `shared_gate(%wg : [H, 1])`: the shared expert's output times
      sigmoid(x @ wg), per token (Qwen2-MoE).
    - `family NAME` names the model family; the verifier checks that the
      block has that family's form. DeepSeek's `n_shared_experts` shared
      experts are one shared expert n_shared * M wide.

    ```mlir
    %y = moe.block %x logits(%logits : tensor<?x60xf32>)
           gate_up(%w13 : tensor<60x2048x2816xf32>)
           down(%w2 : tensor<60x1408x2048xf32>)
           shared_gate_up(%sw13 : tensor<2048x11264xf32>)
           shared_down(%sw2 : tensor<5632x2048xf32>)
           top 2 : tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins
    Moe_FloatTensor2D:$x,
    Optional<Moe_FloatTensor2D>:$router_logits,
    Optional<Moe_FloatTensor2D>:$router_weight,
    Optional<Moe_FloatTensor1D>:$router_bias,
    Optional<Moe_F32Tensor1D>:$selection_bias,
    Optional<Moe_F32Tensor2D>:$null_draws,
    Variadic<Moe_FloatTensor3D>:$expert_gate_up,
    Optional<Moe_FloatTensor2D>:$gate_up_bias,
    Moe_FloatTensor3D:$expert_down,
    Optional<Moe_FloatTensor2D>:$down_bias,
    Variadic<Moe_FloatTensor2D>:$shared_gate_up,
    Optional<Moe_FloatTensor2D>:$shared_down,
    Optional<Moe_FloatTensor2D>:$shared_gate,
    I64Attr:$k,
    DefaultValuedAttr<Moe_Scoring, "::mlir::moe::Scoring::softmax">:$scoring,
    DefaultValuedAttr<Moe_RouteOrder,
                      "::mlir::moe::RouteOrder::topk_then_softmax">:$order,
    UnitAttr:$renormalize,
    DefaultValuedAttr<I64Attr, "0">:$null_experts,
    DefaultValuedAttr<Moe_NullPolicy,
                      "::mlir::moe::NullPolicy::independent">:$null_policy,
    OptionalAttr<F64Attr>:$null_fraction,
    DefaultValuedAttr<Moe_PackStrategy,
                      "::mlir::moe::PackStrategy::argsort">:$pack_strategy,
    DefaultValuedAttr<Moe_CombineStrategy,
                      "::mlir::moe::CombineStrategy::unsort">:$combine_strategy,
    UnitAttr:$preweight,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    DefaultValuedAttr<I64Attr, "1">:$topk_groups,
    DefaultValuedAttr<Moe_GroupScore, "::mlir::moe::GroupScore::max">:$group_score,
    DefaultValuedAttr<F64Attr, "1.0">:$routed_scaling,
    UnitAttr:$weight_input,
    DefaultValuedAttr<Moe_Activation, "::mlir::moe::Activation::swiglu">:$activation,
    DefaultValuedAttr<F64Attr, "1.702">:$alpha,
    DefaultValuedAttr<F64Attr, "7.0">:$limit,
    UnitAttr:$interleaved,
    OptionalAttr<Moe_Family>:$family
  );
  let results = (outs Moe_FloatTensor2D:$out);
  let assemblyFormat = [{
    $x (`logits` `(` $router_logits^ `:` type($router_logits) `)`)?
    (`router` `(` $router_weight^ `:` type($router_weight) `)`)?
    (`router_bias` `(` $router_bias^ `:` type($router_bias) `)`)?
    (`selection_bias` `(` $selection_bias^ `:` type($selection_bias) `)`)?
    (`null_draws` `(` $null_draws^ `:` type($null_draws) `)`)?
    `gate_up` `(` $expert_gate_up `:` type($expert_gate_up) `)`
    (`gate_up_bias` `(` $gate_up_bias^ `:` type($gate_up_bias) `)`)?
    `down` `(` $expert_down `:` type($expert_down) `)`
    (`down_bias` `(` $down_bias^ `:` type($down_bias) `)`)?
    (`shared_gate_up` `(` $shared_gate_up^ `:` type($shared_gate_up) `)`)?
    (`shared_down` `(` $shared_down^ `:` type($shared_down) `)`)?
    (`shared_gate` `(` $shared_gate^ `:` type($shared_gate) `)`)?
    custom<BlockKnobs>(attr-dict) `:` type($x)
  }];
  let extraClassDeclaration = [{
    int64_t getNumExperts();
    int64_t getExpertDim();
    /// 0 when the block has no shared expert.
    int64_t getSharedDim();
    bool hasSharedExpert() { return !getSharedGateUp().empty(); }
    /// The open models' variants (after the base checks of verify()).
    ::mlir::LogicalResult verifyVariants(int64_t columns, int64_t experts, int64_t mlp,
                                         int64_t hidden);
  }];
  let hasVerifier = 1;
}

#endif // MOE_OPS_TD
