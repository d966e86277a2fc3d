//===- LoadProgram.cpp - a moe program from a file, text or a model's config -===//

#include "tooling/LoadProgram.h"

#include "dialect/ParserGuard.h"
#include "frontend/HfBlock.h"
#include "runtime/AtomicFile.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace moec;

LoadedProgram moec::loadProgram(mlir::MLIRContext *context, llvm::SourceMgr &sourceMgr,
                                const ProgramSource &source) {
  LoadedProgram loaded;
  auto failWith = [&](LoadedProgram::Cause cause, std::string error) {
    loaded.module = nullptr;
    loaded.cause = cause;
    loaded.error = std::move(error);
    return std::move(loaded);
  };
  if (!source.hfConfig.empty()) {
    std::string error;
    loaded.hfLayer = readHfLayer(source.hfConfig, source.hfLayer, error);
    if (!loaded.hfLayer)
      return failWith(LoadedProgram::Cause::Config, error);
    loaded.module = mlir::moe::buildHfBlockModule(context, *loaded.hfLayer, source.hfDtype);
    if (mlir::failed(mlir::verify(*loaded.module)))
      return failWith(LoadedProgram::Cause::Diagnostics, "");
    std::string text;
    llvm::raw_string_ostream os(text);
    loaded.module->print(os);
    loaded.textHash = contentHash(text.data(), text.size());
    return loaded;
  }
  std::unique_ptr<llvm::MemoryBuffer> file;
  if (!source.path.empty()) {
    std::string error;
    // A FIFO or device would block or never end: regular files (or stdin).
    if (source.path != "-" && !checkInputFile(source.path, error))
      return failWith(LoadedProgram::Cause::Input, error);
    file = mlir::openInputFile(source.path, &error);
    if (!file)
      return failWith(LoadedProgram::Cause::Input, error);
  } else {
    file = llvm::MemoryBuffer::getMemBufferCopy(source.text, "<string>");
  }
  loaded.textHash = contentHash(file->getBufferStart(), file->getBufferSize());
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  if (mlir::failed(mlir::moe::checkUpstreamParserHazards(sourceMgr, context)))
    return failWith(LoadedProgram::Cause::Diagnostics, "");
  loaded.module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, context);
  if (!loaded.module)
    return failWith(LoadedProgram::Cause::Diagnostics, "");
  return loaded;
}
