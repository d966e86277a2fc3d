//===- MoeBase.td - moe dialect definition and enums ------*- tablegen -*-===//
//
// The `moe` dialect: the primitives of a Mixture-of-Experts block (route,
// pack, grouped matmul, activation, combine, collectives) and a composite
// `moe.block` that a pass expands into them. Semantics follow
// shared/docs/moe-semantics.md; docs/dialect.md restates them per op.
//
//===----------------------------------------------------------------------===//

#ifndef MOE_BASE_TD
#define MOE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Moe_Dialect : Dialect {
  let name = "moe";
  let cppNamespace = "::mlir::moe";
  let summary = "Mixture-of-Experts block primitives";
  let description = [{
    Ops over ranked tensors that compute one MoE block: `moe.route` turns
    router logits into top-k expert ids and weights, `moe.pack` sorts the
    token-slot assignments by expert into contiguous row groups, `moe.gmm`
    and `moe.tgmm` are the grouped matmuls of the forward and backward,
    `moe.swiglu` the expert activation, `moe.combine` un-permutes and sums the
    k slots back per token. `moe.psum`, `moe.all_gather`, `moe.reduce_scatter`
    and `moe.all_to_all` communicate over a named axis of an upstream
    `shard.grid`. `moe.block` is the whole block in one op.
  }];
  // `moe.axes` names the axes of a shard.grid (e.g. ["data", "expert"]).
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  // #moe.target and #moe.gmm_lowering (MoeAttrs.td).
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  // Canonicalization patterns build arith constants and tensor.splat.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Moe_Op<string mnemonic, list<Trait> traits = []>
    : Op<Moe_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums: stored as i32 attributes, spelled as bare keywords in the ops'
// assembly (`scoring sigmoid`), like arith.cmpi's predicate.
//===----------------------------------------------------------------------===//

def Moe_Scoring : I32EnumAttr<"Scoring", "router scoring function", [
    I32EnumAttrCase<"softmax", 0>,
    I32EnumAttrCase<"sigmoid", 1>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_RouteOrder : I32EnumAttr<"RouteOrder",
    "whether top-k selection happens before or after scoring", [
    I32EnumAttrCase<"topk_then_softmax", 0>,
    I32EnumAttrCase<"softmax_then_topk", 1>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_GroupScore : I32EnumAttr<"GroupScore",
    "how group-limited selection scores a group of experts", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"top2_sum", 1>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_Activation : I32EnumAttr<"Activation",
    "the routed experts' gated activation", [
    I32EnumAttrCase<"swiglu", 0>,
    I32EnumAttrCase<"gpt_oss", 1>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_Family : I32EnumAttr<"Family",
    "the open-model family whose MoE layer a block is", [
    I32EnumAttrCase<"mixtral", 0>,
    I32EnumAttrCase<"qwen2_moe", 1>,
    I32EnumAttrCase<"qwen3_moe", 2>,
    I32EnumAttrCase<"olmoe", 3>,
    I32EnumAttrCase<"deepseek_v2", 4>,
    I32EnumAttrCase<"deepseek_v3", 5>,
    I32EnumAttrCase<"gpt_oss", 6>,
    I32EnumAttrCase<"llama4", 7>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_NullPolicy : I32EnumAttr<"NullPolicy",
    "what a selected null expert does to the later slots of its token", [
    I32EnumAttrCase<"independent", 0>,
    I32EnumAttrCase<"take_until_null", 1>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_PackStrategy : I32EnumAttr<"PackStrategy",
    "how moe.pack sorts assignments by expert (all give the same permutation)", [
    I32EnumAttrCase<"argsort", 0>,
    I32EnumAttrCase<"tuple_sort", 1>,
    I32EnumAttrCase<"counting", 2>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_QuantGranularity : I32EnumAttr<"QuantGranularity",
    "what one int8 weight scale covers", [
    I32EnumAttrCase<"per_expert", 0>,
    I32EnumAttrCase<"per_channel", 1>]> {
  let cppNamespace = "::mlir::moe";
}

def Moe_CombineStrategy : I32EnumAttr<"CombineStrategy",
    "how moe.combine returns rows to tokens (both give the same result)", [
    I32EnumAttrCase<"unsort", 0>,
    I32EnumAttrCase<"scatter", 1>]> {
  let cppNamespace = "::mlir::moe";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Activations and weights: f32, or bf16 storage with f32 accumulation.
// Weights may also be int8 (moe.quantize), with f32 scales beside them.
def Moe_FloatElement : AnyTypeOf<[F32, BF16]>;
def Moe_GmmRhsTensor3D : 3DTensorOf<[F32, BF16, I8]>;
def Moe_I8Tensor3D : 3DTensorOf<[I8]>;
def Moe_F32Tensor3D : 3DTensorOf<[F32]>;
def Moe_F32Tensor : TensorRankOf<[F32], [1, 2]>;
def Moe_FloatTensor2D : 2DTensorOf<[F32, BF16]>;
def Moe_FloatTensor3D : 3DTensorOf<[F32, BF16]>;
def Moe_F32Tensor1D : 1DTensorOf<[F32]>;
def Moe_FloatTensor1D : 1DTensorOf<[F32, BF16]>;
def Moe_F32Tensor2D : 2DTensorOf<[F32]>;
def Moe_I32Tensor1D : 1DTensorOf<[I32]>;
def Moe_I32Tensor2D : 2DTensorOf<[I32]>;
// Weights in a gmm kernel's layout (moe.pack_weights): float, or int8 quads.
def Moe_PackedWeightsTensor : 4DTensorOf<[F32, BF16, I8]>;

#endif // MOE_BASE_TD
