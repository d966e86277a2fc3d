//===- Passes.td - moe code generation passes -------------*- tablegen -*-===//

#ifndef MOE_CODEGEN_PASSES_TD
#define MOE_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def MoeLowerToLoops : Pass<"moe-lower-to-loops"> {
  let summary = "Lower the moe primitives to loops over buffers";
  let description = [{
    Replaces every moe primitive (route, pack, gather_rows, gmm, tgmm, swiglu,
    swiglu_grad, scale_rows, combine) by scf loops over memrefs, between a
    `bufferization.to_buffer` of each operand and a `bufferization.to_tensor`
    of each freshly allocated result, so that one-shot bufferization handles
    the program around them. Arithmetic is f32 whatever the storage type.
    `moe.block` must have been expanded first; collectives have no
    single-device lowering and are reported as errors.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def MoeEmitCInterface : Pass<"moe-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Give every public function a C entry point";
  let description = [{
    Marks every public `func.func` with `llvm.emit_c_interface`, so that the
    LLVM lowering emits `_mlir_ciface_NAME` taking pointers to memref
    descriptors: the ABI the moec runtime calls.
  }];
}

def MoeCopiesToLinalg : Pass<"moe-copies-to-linalg"> {
  let summary = "Turn memref.copy between strided buffers into linalg.copy";
  let description = [{
    finalize-memref-to-llvm lowers a copy between buffers that are not both
    contiguous (what bufferizing tensor.concat and insert_slice produces) to
    a call to `memrefCopy` in libmlir_c_runner_utils, which neither the JIT
    nor a library built by moec links. As a linalg.copy it becomes plain loops;
    contiguous copies are left for the llvm.memcpy lowering.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // MOE_CODEGEN_PASSES_TD
