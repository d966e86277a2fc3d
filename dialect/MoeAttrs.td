//===- MoeAttrs.td - the lowering strategy as attributes ----*- tablegen -*-===//
//
// How a block is lowered is decided once, before any lowering, and written
// into the IR (as IREE's `#iree_codegen.lowering_config` and Triton's
// encodings do), so that `moe-opt` shows every decision, a test can pin it
// and a tuner can edit it:
//
//   #moe.target         on the module: the CPU compiled for. Written by
//                       `moe-attach-target` (from the host or a named CPU),
//                       or by hand in a test.
//   #moe.gmm_lowering   on each moe.gmm / moe.tgmm: the kernel kinds compiled
//                       in, their tiles and row thresholds, what is fused.
//                       Written by `moe-select-lowering` from the target;
//                       `moe-lower-to-loops` only reads it.
//
//===----------------------------------------------------------------------===//

#ifndef MOE_ATTRS_TD
#define MOE_ATTRS_TD

include "dialect/MoeBase.td"
include "mlir/IR/AttrTypeBase.td"

class Moe_Attr<string name, string attrMnemonic> : AttrDef<Moe_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Moe_TargetAttr : Moe_Attr<"Target", "target"> {
  let summary = "the CPU a module is compiled for";
  let description = [{
    What the lowering strategy knows of the machine: LLVM's name of the CPU,
    its instruction-set features in LLVM's spelling (`avx512f`, `avx512bf16`,
    `amx-tile`, ...), the number of 16-lane f32 vectors its register file
    holds (32 zmm with AVX-512; 8 with AVX2's 16 ymm, two per vector), the
    per-core L1 data and L2 cache sizes in bytes, and a thread count hint
    (0: not known, as for a named CPU that is not this host).

    ```mlir
    module attributes {moe.target = #moe.target<cpu = "znver4",
        features = ["avx512f", "avx512bf16", "avx512vnni"],
        vector_registers = 32, l1_bytes = 32768, l2_bytes = 1048576,
        threads = 2>} { ... }
    ```
    The fields may come in any order.
  }];
  let parameters = (ins
    StringRefParameter<"LLVM's name of the CPU">:$cpu,
    "::mlir::ArrayAttr":$features,
    "int64_t":$vector_registers,
    "int64_t":$l1_bytes,
    "int64_t":$l2_bytes,
    DefaultValuedParameter<"int64_t", "0">:$threads
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the CPU has `feature` (LLVM's spelling).
    bool hasFeature(::llvm::StringRef feature) const;
  }];
}

def Moe_GmmLoweringAttr : Moe_Attr<"GmmLowering", "gmm_lowering"> {
  let summary = "how one moe.gmm or moe.tgmm is lowered";
  let description = [{
    `kernels` lists the task kinds compiled in: one that runs every group
    AMX does not (for the gmm's operand types) and the AMX kind beside it,
    each a name of the kernel
    family (docs/codegen.md): `reference` (the row-at-a-time loops, alone),
    `fma` (AVX-512 FMA register tiles), `avx512bf16_dot` (vdpbf16ps),
    `amx_bf16` (AMX tiles, taken at run time for groups of at least
    `amx_min_rows` rows once Linux grants the tile state), `int8_vnni`
    (vpdpbusd), `int8_avx2` (vpmaddwd, AVX2 without VNNI), `int8_vector`
    (exact i32 vectors), `amx_int8`.
    `mr`, `nv`, `kc`, `nc`, `mc` are the FMA kernel's register tile (mr rows
    by nv 16-lane vectors; with `swiglu` fused, nv is even, half the vectors
    gate columns and half up ones, or 1, each vector's lanes 0-7 gate and
    8-15 up, or 8 gate/up pairs when interleaved) and its depth, column and
    row blocks (a group split evenly into row blocks of at most mc rows);
    `packed_columns` the weight columns of a packed (bf16/int8) task;
    `dot_rows` the rows of an AVX512_BF16 dot row block (with weights
    prepared at load time; a task runs a weight block's row blocks
    together). `fuse` names what the
    kernel does in the same pass over the rows: `gather` (reads the pack's
    rows through its permutation), `swiglu` (the activation in the
    epilogue; on a SwiGLU's gate and up gmms both).

    ```mlir
    %h = moe.gmm %x, %w1, %sizes {moe.lowering = #moe.gmm_lowering<
        kernels = ["avx512bf16_dot", "amx_bf16"], mr = 6, nv = 4, kc = 256,
        nc = 256, mc = 192, packed_columns = 256, amx_min_rows = 1,
        dot_rows = 48, fuse = ["gather", "swiglu"]>} : ...
    ```
  }];
  let parameters = (ins
    "::mlir::ArrayAttr":$kernels,
    DefaultValuedParameter<"int64_t", "0">:$mr,
    DefaultValuedParameter<"int64_t", "0">:$nv,
    DefaultValuedParameter<"int64_t", "0">:$kc,
    DefaultValuedParameter<"int64_t", "0">:$nc,
    DefaultValuedParameter<"int64_t", "0">:$mc,
    DefaultValuedParameter<"int64_t", "0">:$packed_columns,
    DefaultValuedParameter<"int64_t", "0">:$amx_min_rows,
    DefaultValuedParameter<"int64_t", "0">:$dot_rows,
    OptionalParameter<"::mlir::ArrayAttr">:$fuse
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether kernel kind `kind` is compiled in.
    bool hasKernel(::llvm::StringRef kind) const;
    /// Whether `what` (gather, swiglu) is fused.
    bool fuses(::llvm::StringRef what) const;
    /// Only the reference loops.
    bool isReference() const { return hasKernel("reference"); }
  }];
}

#endif // MOE_ATTRS_TD
