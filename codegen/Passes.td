//===- Passes.td - moe code generation passes -------------*- tablegen -*-===//

#ifndef MOE_CODEGEN_PASSES_TD
#define MOE_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def MoeLowerToLoops : Pass<"moe-lower-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower the moe primitives to loops over buffers";
  let description = [{
    Replaces every moe primitive (route, pack, gather_rows, gmm, tgmm, swiglu,
    swiglu_grad, scale_rows, combine) by scf loops over memrefs, between a
    `bufferization.to_buffer` of each operand and a `bufferization.to_tensor`
    of each freshly allocated result, so that one-shot bufferization handles
    the program around them. Arithmetic is f32 whatever the storage type.
    `moe.block` must have been expanded first. The collectives (psum,
    all_gather, reduce_scatter, all_to_all) and the shard dialect's process
    indices become calls into the sharded runtime (`moert_*`,
    runtime/ShardComm.h), which the host binds to an in-process mesh or to
    MPI; the grids are erased once nothing names them.

    A moe.gmm or moe.tgmm is lowered as its `moe.lowering`
    (#moe.gmm_lowering, written by moe-select-lowering) says: the kernel
    kinds it lists side by side in one task table (codegen/kernels/GmmScheduler.cpp
    and the kinds' files), with its tiles, thresholds and fusions (the
    gather of its rows, the SwiGLU over it). This pass decides nothing: a
    gmm without `moe.lowering` (or with the `reference` kernel) gets the
    row-at-a-time loops, and a fusion the IR no longer allows is an error.
  }];
  let dependentDialects = [
    "::mlir::amx::AMXDialect",
    "::mlir::x86vector::X86VectorDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def MoeEmitCInterface : Pass<"moe-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Give every public function a C entry point";
  let description = [{
    Marks every public `func.func` with `llvm.emit_c_interface`, so that the
    LLVM lowering emits `_mlir_ciface_NAME` taking pointers to memref
    descriptors: the ABI the moec runtime calls. Their tensor arguments get
    `bufferization.writable = false`: the caller's memory is read, never
    written (bufferization copies before writing in place).
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

def MoeParallelLinalg : Pass<"moe-parallel-linalg", "::mlir::func::FuncOp"> {
  let summary = "Run the large linalg ops on buffers as parallel loops";
  let description = [{
    The linalg ops left after the moe lowerings (the loss's elementwise
    ops, its sum, fills, copies between strided buffers) would become
    serial loops (convert-linalg-to-loops): the one core the training step's
    loss ran on while the other waited. Each op outside any loop whose
    iteration space is large (`min-elements`, or of a size known only at
    run time) and whose parallel dimensions all come before its reductions
    becomes an scf.parallel over them (upstream's linalgOpToParallelLoops),
    which convert-scf-to-openmp hands to the threads; an op with a reduction
    before a parallel dimension (the router's matmul as moe-lower-to-loops
    orders it: rows, depth, columns) stays serial, since it would start the
    threads once per iteration of the reduction. A sum of every element
    into a 0-d buffer (an arith.addf reduction over all dimensions: the
    mean-square loss) becomes an scf.parallel over its first dimension with
    an scf.reduce of the rows' sums, so it runs on the threads too (the
    order of the additions then differs from the serial loop's).
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", "65536",
           "Ops of static shapes with fewer iterations stay serial loops">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def MoePlanBuffers : Pass<"moe-plan-buffers", "::mlir::func::FuncOp"> {
  let summary = "Place a function's buffers in one arena, reusing memory between buffers whose lives do not overlap";
  let description = [{
    Static memory planning, as XLA's buffer assignment does: after
    bufferization and the deallocation pipeline (which frees every buffer at
    the end of its block, however early its last use), each top-level
    `memref.alloc` of static shape that the function frees itself gets a
    live range, from the alloc to the last top-level op that uses it or a
    view of it. Buffers are placed, largest first, at the lowest 64-byte
    aligned offset of one arena where no buffer live at the same time sits;
    each alloc becomes a `memref.view` of the arena, its deallocs go, and the
    arena is freed before each return. So the forward's activations and the
    backward's gradients share memory once dead, and the peak follows the
    live set instead of the sum of all buffers.

    The function gets `moe.memory_plan`: `arena_bytes` (the plan),
    `lower_bound_bytes` (the largest sum of buffers live at one op: no
    placement does better), `buffers` and `buffer_bytes` (placed: how many,
    and their sum, what they took before), and `unplanned_bytes`
    (static buffers left to malloc: results, conditionally freed ones).
    Buffers of dynamic size and those inside loops stay with malloc.
  }];
}

def MoeApproximateVectorMath : Pass<"moe-approximate-vector-math"> {
  let summary = "Polynomial exp for vector math.exp (the SwiGLU epilogues and loops)";
  let description = [{
    convert-math-to-llvm turns a vector math.exp into llvm.exp, which LLVM
    scalarizes into sixteen libm calls per vector; upstream's polynomial
    approximation (about 1 ulp in f32) stays in AVX-512 registers. Only vector
    exps are rewritten: the scalar ones (routing softmax) keep libm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"];
}

def MoeExpandBf16Conversions : Pass<"moe-expand-bf16-conversions"> {
  let summary = "bf16 conversions LLVM would make libcalls or scalar code of, as integer ops";
  let description = [{
    LLVM's x86 backend lowers a scalar `fptrunc float to bfloat` (and so
    scalar bf16 arithmetic, which it promotes to f32), and on a CPU without
    AVX512_BF16 a vector one too, to calls of `__truncsfbf2`, which libgcc
    only has from GCC 13 on (Debian 12 ships GCC 12): neither the JIT nor a
    user linking moec's object finds it. This pass rewrites those
    truncations as integer ops: round to nearest even on the bits, a NaN
    kept a NaN with its sign and made quiet, the rounding Buffer's f32ToBf16
    does (and vcvtneps2bf16, but for subnormals, which it flushes to zero). Not upstream's expansion (arith-expand
    {include-bf16}): its select of the canonical NaN on the 16-bit results
    becomes, in LLVM, a select on bf16 vectors that the x86 backend splits a
    lane at a time. Vector truncations on a CPU with AVX512_BF16 stay, for
    its native vcvtneps2bf16. Vector widenings (bf16 -> f32) become
    upstream's expansion, a zero-extension and a 16-bit shift, on every CPU: LLVM
    splits them into scalar shifts and spills (measured: the FMA kind's
    bf16 weight pack 7x slower than its f32 one). moe-to-llvm runs upstream's
    arith-emulate-unsupported-floats (bf16 ops as f32 between extf and
    truncf) first, then this.
  }];
  let options = [
    Option<"vectors", "vectors", "std::string", "\"auto\"",
           "expand vector truncations too: auto (when the module's #moe.target, else the host, has no AVX512_BF16), "
           "true or false">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def MoeConvertAmxToLLVM : Pass<"moe-convert-amx-to-llvm", "::mlir::ModuleOp"> {
  let summary = "amx tile ops to LLVM intrinsics, with the control flow that carries tiles";
  let description = [{
    The AMX gmm tasks keep accumulator tiles in loop-carried values. After
    convert-scf-to-cf these are block arguments of type `!amx.tile`, which
    convert-cf-to-llvm's type converter does not know, and
    convert-vector-to-llvm{enable-amx} converts the tile ops but not the
    branches. This pass converts both with one type converter that knows the
    tile type (x86_amx), so it runs after convert-scf-to-cf and before
    convert-cf-to-llvm; without amx ops it changes nothing.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // MOE_CODEGEN_PASSES_TD
