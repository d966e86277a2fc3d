//===- moe-opt.cpp - mlir-opt for the moe dialect --------------------------===//
//
// Behaves like mlir-opt: reads .mlir, runs `--pass-pipeline=...` or the
// registered pass flags, prints the result. Knows the moe dialect and passes,
// the `moe-default` pipeline, and the upstream dialects an MoE program is
// written in or lowered through.
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeDialect.h"
#include "dialect/ParserGuard.h"
#include "codegen/Passes.h"
#include "passes/Passes.h"
#include "runtime/AtomicFile.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::moe::MoeDialect, mlir::affine::AffineDialect,
                  mlir::amx::AMXDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::index::IndexDialect, mlir::LLVM::LLVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::mpi::MPIDialect,
                  mlir::scf::SCFDialect, mlir::shard::ShardDialect,
                  mlir::tensor::TensorDialect, mlir::vector::VectorDialect,
                  mlir::x86vector::X86VectorDialect>();

  mlir::moe::registerCodegenInterfaces(registry);

  mlir::shard::registerShardPasses();
  mlir::moe::registerCodegenPassesAndPipelines();

  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "moe-opt: the moe dialect optimizer\n", registry);
  // Input MLIR 22's own parsers crash on is refused first (ParserGuard.h).
  auto hazardous = [](const llvm::MemoryBuffer &input) {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(input.getBuffer(), input.getBufferIdentifier()),
        llvm::SMLoc());
    mlir::MLIRContext context;
    mlir::moe::ShortSourceLineDiagnosticHandler handler(sourceMgr, &context);
    return mlir::failed(mlir::moe::checkUpstreamParserHazards(sourceMgr, &context));
  };
  if (inputFile != "-") {
    std::string error;
    // A FIFO or device would block or never end (moec refuses them too):
    // regular files, or stdin.
    if (!moec::checkInputFile(inputFile, error)) {
      llvm::errs() << error << "\n";
      return 1;
    }
    if (auto file = mlir::openInputFile(inputFile, &error); file && hazardous(*file))
      return 1;
    // (an unreadable file: MlirOptMain reports it)
    return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  }
  // stdin can be read once: read it here, check it, and give the buffer to
  // MlirOptMain's buffer form (what its file form does after opening).
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses()) // reads no input
    return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (hazardous(*input))
    return 1;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
