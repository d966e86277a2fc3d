//===- Compiler.cpp - from a moe program to native code -------------------===//

#include "compiler/Compiler.h"

#include <dlfcn.h>
#include "strategy/GmmStrategy.h"
#include "strategy/TargetCpu.h"
#include "runtime/CompilerBuiltins.h"
#include "runtime/MemoryGuard.h"
#include "runtime/RunTimeChecks.h"
#include "runtime/StageTimer.h"
#include "codegen/Passes.h"
#include "runtime/Invoke.h"
#include "runtime/ShardComm.h"
#include "dialect/MoeDialect.h"
#include "dialect/MoeOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <limits>

using namespace mlir;
using namespace moec;

void moec::registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<moe::MoeDialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, index::IndexDialect, LLVM::LLVMDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, omp::OpenMPDialect, scf::SCFDialect,
                  shard::ShardDialect,
                  tensor::TensorDialect, ub::UBDialect>();
  moe::registerCodegenInterfaces(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

std::string moec::openMPLibraryDir() { return MOEC_OPENMP_LIBRARY_DIR; }

namespace {
/// The libomp generated code runs on (JitProgram::create loads it).
std::string libompPath() { return moec::openMPLibraryDir() + "/libomp.so"; }

/// `name` in that libomp, by name: another OpenMP runtime in the process
/// (PyTorch's libgomp) defines the same functions. Null when it is not
/// loaded.
void *libompSymbol(const char *name) {
  void *handle = dlopen(libompPath().c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle)
    return nullptr;
  void *symbol = dlsym(handle, name);
  dlclose(handle); // the JIT's reference keeps it loaded
  return symbol;
}
} // namespace

bool moec::setGeneratedCodeThreads(int threads) {
  auto set = reinterpret_cast<void (*)(int)>(libompSymbol("omp_set_num_threads"));
  if (!set)
    return false;
  set(threads);
  return true;
}

namespace {
/// libomp's source location (kmp.h's ident_t): the fields a fork reads.
struct OmpIdent {
  int32_t reserved1 = 0, flags = 0x2 /* KMP_IDENT_KMPC */, reserved2 = 0, reserved3 = 0;
  const char *source = ";moec;the generated code's threads;0;0;;";
};
} // namespace

bool moec::wakeGeneratedCodeThreads() {
  // An empty region: a fork and a join.
  return runOnGeneratedCodeThreads([](void *, int) {}, nullptr) > 0;
}

namespace {
/// runOnGeneratedCodeThreads's region: its function, argument and thread
/// count.
struct RegionWork {
  void (*fn)(void *, int);
  void *arg;
  std::atomic<int> threads{0};
};
/// libomp passes a microtask its global and bound thread ids, then the
/// fork's arguments; the bound id is the thread's number in the team.
/// (kmpc_micro is variadic; so is this, so it is called through its own
/// type.)
void regionMicrotask(int32_t *, int32_t *boundId, ...) {
  va_list args;
  va_start(args, boundId);
  auto *work = va_arg(args, RegionWork *);
  va_end(args);
  work->threads.fetch_add(1);
  work->fn(work->arg, *boundId);
}
} // namespace

int moec::runOnGeneratedCodeThreads(void (*fn)(void *, int), void *arg) {
  // __kmpc_fork_call is the entry every compiled `omp parallel` calls (the
  // generated code's included).
  using Microtask = void (*)(int32_t *, int32_t *, ...);
  auto fork = reinterpret_cast<void (*)(OmpIdent *, int32_t, Microtask, ...)>(
      libompSymbol("__kmpc_fork_call"));
  if (!fork)
    return 0;
  static OmpIdent ident;
  RegionWork work{fn, arg};
  fork(&ident, 1, &regionMicrotask, &work);
  return work.threads.load();
}

std::string moec::compilerRtBuiltins() {
  return llvm::sys::fs::exists(MOEC_COMPILER_RT_BUILTINS) ? MOEC_COMPILER_RT_BUILTINS : "";
}

static std::optional<TensorSignature> tensorSignature(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  DType dtype;
  Type element = tensor.getElementType();
  if (element.isF32())
    dtype = DType::F32;
  else if (element.isBF16())
    dtype = DType::BF16;
  else if (element.isInteger(32))
    dtype = DType::I32;
  else if (element.isInteger(8))
    dtype = DType::I8;
  else
    return std::nullopt;
  TensorSignature sig{dtype, {}};
  for (int64_t d : tensor.getShape())
    sig.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return sig;
}

std::optional<FunctionSignature>
moec::entrySignature(ModuleOp module, const std::string &name,
                     std::string &error) {
  func::FuncOp entry;
  std::vector<std::string> publicNames;
  SmallVector<func::FuncOp> publics;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    publicNames.push_back(func.getName().str());
    publics.push_back(func);
    if (func.getName() == name)
      entry = func;
  }
  if (name.empty() && publics.size() == 1)
    entry = publics.front();
  // A module moe-quantize (or moe-prepare-weights) split holds a block's
  // three forms: @f, @f_prepare_weights and @f_prepared. The block to run
  // is the one public function that is neither half.
  auto blocks = llvm::to_vector(llvm::make_filter_range(publics, [](func::FuncOp f) { return !moe::isPreparedHalf(f); }));
  if (name.empty() && !entry && blocks.size() == 1)
    entry = blocks.front();
  // A few names, not all: a generated module of 88k functions made a
  // 1.5 MB error line.
  auto listed = [&](ArrayRef<std::string> names) {
    constexpr size_t kShown = 8;
    std::string s;
    for (size_t i = 0; i < names.size() && i < kShown; ++i)
      s += (s.empty() ? "" : ", ") + names[i];
    if (names.size() > kShown)
      s += ", ... and " + std::to_string(names.size() - kShown) + " more";
    return s.empty() ? std::string("none") : s;
  };
  if (!entry) {
    if (!name.empty())
      error = "no public function '" + name + "' (public functions: " + listed(publicNames) + ")";
    else if (publicNames.empty())
      error = "the module has no public function with a body to run";
    else if (!blocks.empty() && blocks.size() < publics.size())
      error = "the module has " + std::to_string(blocks.size()) + " public functions (" +
              listed(llvm::map_to_vector(blocks, [](func::FuncOp f) { return f.getName().str(); })) +
              ") besides prepared halves " +
              "(<f>_prepare_weights, <f>_prepared); pick one with --entry";
    else
      error = "the module has " + std::to_string(publicNames.size()) + " public functions (" +
              listed(publicNames) + "); pick one with --entry";
    return std::nullopt;
  }
  FunctionSignature sig;
  sig.name = entry.getName().str();
  auto describe = [](Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << t;
    return s;
  };
  auto collect = [&](TypeRange types, const char *what, const char *verb,
                     std::vector<TensorSignature> &out) {
    for (auto [i, type] : llvm::enumerate(types)) {
      auto t = tensorSignature(type);
      if (!t) {
        error = std::string(what) + " " + std::to_string(i) + " of '" + sig.name + "' is " +
                describe(type) + "; entry points " + verb + " ranked f32, bf16 or i32 tensors";
        return false;
      }
      out.push_back(*t);
    }
    return true;
  };
  if (!collect(entry.getArgumentTypes(), "argument", "take", sig.inputs) ||
      !collect(entry.getResultTypes(), "result", "return", sig.results))
    return std::nullopt;
  return sig;
}

std::optional<MeshLayout> moec::meshLayout(ModuleOp module, const std::string &name) {
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  std::optional<moe::FunctionMesh> mesh = fn ? moe::functionMesh(fn) : std::nullopt;
  if (!mesh)
    return std::nullopt;
  MeshLayout layout;
  for (auto [axis, size] : llvm::zip(mesh->axes, mesh->sizes)) {
    layout.axisNames.push_back(axis.str());
    layout.shape.push_back(size);
  }
  auto splitOf = [&](DictionaryAttr attrs, Type type) {
    TensorSplit split;
    for (const auto &axes : moe::splitAxes(attrs, cast<RankedTensorType>(type).getRank())) {
      split.emplace_back();
      for (StringRef a : axes)
        split.back().push_back(llvm::find(mesh->axes, a) - mesh->axes.begin());
    }
    return split;
  };
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    layout.inputs.push_back(splitOf(fn.getArgAttrDict(i), fn.getArgumentTypes()[i]));
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    layout.results.push_back(splitOf(fn.getResultAttrDict(i), fn.getResultTypes()[i]));
  return layout;
}

std::vector<FunctionSignature>
moec::entrySignatures(ModuleOp module, std::vector<std::string> &skipped) {
  std::vector<FunctionSignature> sigs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration())
      continue;
    std::string error;
    if (auto sig = entrySignature(module, func.getName().str(), error))
      sigs.push_back(*sig);
    else
      skipped.push_back(error);
  }
  return sigs;
}

static bool &passManagerCLOptions() {
  static bool used = false;
  return used;
}

void moec::usePassManagerCLOptions() { passManagerCLOptions() = true; }

namespace {
/// moe-to-llvm's options for `gmm`, after checking a #moe.target the module
/// carries against the CPU moec compiles for.
LogicalResult toLLVMOptions(ModuleOp module, const moec::GmmChoices &gmm, moe::ToLLVMOptions &options) {
  // moec's --target-cpu wins over a #moe.target the module carries (moe-to-
  // llvm attaches the named CPU's). Else the code is generated for the CPU
  // moec compiles for (the host): a module selected for another CPU, or
  // listing features this one lacks, would use instructions nobody checked,
  // so it is refused.
  std::string targetCpu = moe::strategy::targetCpuOverride().str();
  if (auto pinned = module->getAttrOfType<moe::TargetAttr>(moe::kTargetAttrName);
      pinned && targetCpu.empty()) {
    std::string compiling = moe::strategy::targetCpuName();
    if (pinned.getCpu() != compiling)
      return module.emitError() << "the module's #moe.target is '" << pinned.getCpu()
                                << "' but moec compiles for '" << compiling
                                << "': give --target-cpu " << pinned.getCpu()
                                << " (or remove the attribute)";
    llvm::StringMap<bool> features = moe::strategy::targetCpuFeatures();
    for (Attribute f : pinned.getFeatures())
      if (!features.lookup(cast<StringAttr>(f).getValue()))
        return module.emitError() << "the module's #moe.target lists '" << cast<StringAttr>(f).getValue()
                                  << "', which the CPU moec compiles for ('" << compiling
                                  << "') lacks (remove the feature or the attribute)";
  }
  options.gmmStrategy = gmm.strategy;
  options.targetCpu = targetCpu;
  options.gmmTiling = gmm.tiling;
  options.tuningTable = gmm.tuningTable;
  options.prepareWeights = gmm.prepareWeights;
  options.stageTimers = gmm.stageTimers;
  return success();
}

void registerPipelinesOnce() {
  // Textual pipelines name passes through the global registry.
  static bool registered = [] {
    moe::registerCodegenPassesAndPipelines();
    return true;
  }();
  (void)registered;
}
} // namespace

LogicalResult moec::lowerModule(ModuleOp module, const std::string &pipeline,
                                const GmmChoices &gmm) {
  registerPipelinesOnce();
  moe::ToLLVMOptions options;
  if (failed(toLLVMOptions(module, gmm, options)))
    return failure();
  PassManager pm(module.getContext());
  if (pipeline.empty())
    moe::buildToLLVMPipeline(pm, options);
  else if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  return runPassManager(module, pm);
}

LogicalResult moec::prepareWeights(ModuleOp module, const GmmChoices &gmm) {
  GmmChoices prepared = gmm;
  prepared.prepareWeights = true;
  return decideStrategy(module, prepared);
}

LogicalResult moec::decideStrategy(ModuleOp module, const GmmChoices &gmm) {
  registerPipelinesOnce();
  moe::ToLLVMOptions options;
  if (failed(toLLVMOptions(module, gmm, options)))
    return failure();
  PassManager pm(module.getContext());
  moe::buildStrategyPipeline(pm, options);
  return runPassManager(module, pm);
}

std::vector<std::string> moec::stageNames(ModuleOp module, const std::string &name) {
  std::vector<std::string> names;
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    if (auto stages = fn->getAttrOfType<ArrayAttr>(moe::kStagesAttrName))
      for (Attribute a : stages)
        names.push_back(cast<StringAttr>(a).getValue().str());
  return names;
}

// The version of what moe.pack_weights and moe.quantize write for given
// attributes (codegen/lowerings/PackWeightsLowering.cpp, QuantizeLowering):
// a part of each prepared form's layout. Bump it when those bytes change.
static constexpr int kPackLoweringVersion = 1;

std::optional<moec::PreparedHalves> moec::preparedHalves(ModuleOp module, const FunctionSignature &f,
                                                         std::string &error) {
  error.clear();
  PreparedForm form{f.name, f.name + "_prepare_weights", f.name + "_prepared", {}, {}};
  auto prepare = module.lookupSymbol<func::FuncOp>(form.prepare);
  auto prepared = module.lookupSymbol<func::FuncOp>(form.prepared);
  if (!prepare || !prepared)
    return std::nullopt;
  auto weights = prepare->getAttrOfType<DenseI64ArrayAttr>(moe::kWeightArgumentsAttrName);
  auto kept = prepared->getAttrOfType<DenseI64ArrayAttr>(moe::kKeptArgumentsAttrName);
  if (!weights || !kept)
    return std::nullopt; // functions of the user's that happen to have the names
  form.weightArgs.assign(weights.asArrayRef().begin(), weights.asArrayRef().end());
  form.keptArgs.assign(kept.asArrayRef().begin(), kept.asArrayRef().end());
  auto prepareSig = entrySignature(module, form.prepare, error);
  auto preparedSig = prepareSig ? entrySignature(module, form.prepared, error) : std::nullopt;
  if (!preparedSig)
    return std::nullopt;
  if (std::string why = form.mismatch(f, *prepareSig, *preparedSig); !why.empty()) {
    error = why;
    return std::nullopt;
  }
  // The layout: a hash of the prepare function as printed (its pack and
  // quantize ops with their layout attributes, its types) and of the pack
  // lowering's version. Two forms that print it the same make the same bytes
  // of the same weights. The printing flags are set here, every one: the
  // --mlir-print-* options moec takes would otherwise change the text
  // (locations, generic form, elided constants) and not the bytes.
  std::string text = "pack-lowering-v" + std::to_string(kPackLoweringVersion) + "\n";
  llvm::raw_string_ostream os(text);
  constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  prepare->print(os, OpPrintingFlags()
                         .useLocalScope()
                         .enableDebugInfo(false)
                         .printGenericOpForm(false)
                         .printValueUsers(false)
                         .printUniqueSSAIDs(false)
                         .printNameLocAsPrefix(false)
                         .skipRegions(false)
                         .elideLargeElementsAttrs(kNoLimit)
                         .elideLargeResourceString(kNoLimit));
  form.layout = llvm::utohexstr(llvm::xxh3_64bits(text), /*LowerCase=*/true, /*Width=*/16);
  PreparedHalves halves{std::move(form), std::move(*prepareSig), std::move(*preparedSig)};
  prepare.walk([&](Operation *op) {
    halves.packs |= isa<moe::PackWeightsOp>(op);
    halves.quantizes |= isa<moe::QuantizeOp>(op);
  });
  return halves;
}

LogicalResult moec::runPassManager(ModuleOp module, PassManager &pm) {
  if (passManagerCLOptions()) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  return pm.run(module);
}

static void initializeNativeTarget() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)done;
}

std::unique_ptr<llvm::TargetMachine> moec::hostTargetMachine(std::string &error) {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return nullptr;
  }
  // moec --target-cpu: that CPU and its features, not the host's.
  if (llvm::StringRef cpu = mlir::moe::strategy::targetCpuOverride(); !cpu.empty()) {
    builder->setCPU(cpu.str());
    builder->getFeatures() = llvm::SubtargetFeatures();
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  // AMX tile code (gmm-strategy=microkernel-amx) must compile on any x86-64
  // host: it only runs after a run-time check that the CPU and kernel grant
  // the tile state, and LLVM emits tile instructions only for the intrinsics.
  if (builder->getTargetTriple().getArch() == llvm::Triple::x86_64) {
    builder->getFeatures().AddFeature("amx-tile");
    builder->getFeatures().AddFeature("amx-bf16");
    builder->getFeatures().AddFeature("amx-int8");
  }
  auto tm = builder->createTargetMachine();
  if (!tm) {
    error = llvm::toString(tm.takeError());
    return nullptr;
  }
  return std::move(*tm);
}

namespace {
/// moec_call_<name>(void **args) calls _mlir_ciface_<name>(args[0], ...):
/// one C signature for every entry point, so that a loader needs no
/// knowledge of arity.
void addEntryPoints(llvm::Module &module,
                    const std::vector<FunctionSignature> &entries,
                    const std::vector<moec::PreparedForm> &preparedForms) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  std::string manifest;
  for (const FunctionSignature &sig : entries) {
    llvm::Function *target = module.getFunction("_mlir_ciface_" + sig.name);
    if (!target)
      continue;
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
    auto *wrapper = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                           "moec_call_" + sig.name, module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
    llvm::SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < target->arg_size(); ++i) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptr, wrapper->getArg(0), i);
      args.push_back(b.CreateLoad(ptr, slot));
    }
    b.CreateCall(target, args);
    b.CreateRetVoid();
    manifest += sig.str() + "\n";
  }
  auto *text = llvm::ConstantDataArray::getString(ctx, manifest);
  new llvm::GlobalVariable(module, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text, "moec_manifest");
  // How to call each prepared form (runtime/PreparedWeights.h); a library
  // without any has none of the symbol, as those built before it.
  if (!preparedForms.empty()) {
    std::string forms;
    for (const moec::PreparedForm &form : preparedForms)
      forms += form.str() + "\n";
    auto formText = llvm::ConstantDataArray::getString(ctx, forms);
    new llvm::GlobalVariable(module, formText->getType(), /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage, formText, "moec_prepared_forms");
  }
  // What the code needs of the CPU that loads it (runtime/CpuFeatures.h).
  std::string features = llvm::join(mlir::moe::strategy::requiredIsaFeatures(), " ");
  auto *featureText = llvm::ConstantDataArray::getString(ctx, features);
  new llvm::GlobalVariable(module, featureText->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, featureText, "moec_cpu_features");
}
} // namespace

std::string moec::describeHostTarget(llvm::TargetMachine &tm) {
  // What the CPU has, not the target machine's features: those always
  // include AMX (hostTargetMachine), whose code checks for it at run time.
  llvm::StringMap<bool> host = mlir::moe::strategy::targetCpuFeatures();
  std::string out = tm.getTargetCPU().str();
  if (!mlir::moe::strategy::targetCpuOverride().empty())
    out += " (--target-cpu; this host is " + llvm::sys::getHostCPUName().str() + ")";
  out += ":";
  bool any = false;
  for (llvm::StringRef f : {"avx2", "avx512f", "avx512bf16", "avx512vnni", "amx-tile",
                            "amx-bf16", "amx-int8"})
    if (host.lookup(f)) {
      out += " " + f.str();
      any = true;
    }
  return any ? out : out + " (none of avx2, avx512f, avx512bf16, avx512vnni, amx)";
}

std::unique_ptr<llvm::Module>
moec::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                           llvm::TargetMachine &tm,
                           const std::vector<FunctionSignature> &entries,
                           std::string &error,
                           const std::vector<PreparedForm> &preparedForms) {
  auto llvmModule = translateModuleToLLVMIR(module, context);
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return nullptr;
  }
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple());
  if (!entries.empty())
    addEntryPoints(*llvmModule, entries, preparedForms);
  auto optimize = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, &tm);
  if (auto err = optimize(llvmModule.get())) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
  return llvmModule;
}

bool moec::emitMachineCode(llvm::Module &module, llvm::TargetMachine &tm,
                           bool assembly, llvm::SmallVectorImpl<char> &out,
                           std::string &error) {
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  auto kind = assembly ? llvm::CodeGenFileType::AssemblyFile
                       : llvm::CodeGenFileType::ObjectFile;
  if (tm.addPassesToEmitFile(pm, os, nullptr, kind)) {
    error = "the target cannot emit this file type";
    return false;
  }
  pm.run(module);
  return true;
}

JitProgram::~JitProgram() = default;

std::unique_ptr<JitProgram> moec::JitProgram::create(ModuleOp lowered,
                                                     std::string &error) {
  auto tm = hostTargetMachine(error);
  if (!tm)
    return nullptr;
  auto transformer = makeOptimizingTransformer(3, 0, tm.get());
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // MOEC_PERF_JIT=1: tell `perf` where the generated functions are (perf
  // record -k 1, then perf inject --jit; docs/performance.md).
  if (const char *perf = std::getenv("MOEC_PERF_JIT"); perf && std::string(perf) == "1")
    options.enablePerfNotificationListener = true;
  // Parallel loops call into libomp.
  std::string libomp = libompPath();
  llvm::StringRef libs[] = {libomp};
  options.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(lowered, options, std::move(tm));
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  // The gmm kernels ask the runtime their loops run on for its worker count
  // (omp_get_max_threads). Another OpenMP runtime in the process defines the
  // same name and may come first in the JIT's search: PyTorch's libgomp,
  // whose answer (its own count, often 1) left libomp's second thread
  // without work, every call twice as slow. Bound to libomp's by name.
  void *ompMaxThreads = libompSymbol("omp_get_max_threads");
  // The collectives' calls go to this process's sharded runtime: named
  // here rather than looked up, so that no tool has to export them.
  (*engine)->registerSymbols([ompMaxThreads](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](const std::vector<std::pair<const char *, void *>> &list) {
      for (auto [name, address] : list)
        symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                   llvm::JITSymbolFlags::Exported};
    };
    add(shardRuntimeSymbols());
    // The compiler-rt builtins LLVM may call that libgcc 12 lacks.
    add(compilerBuiltinSymbols());
    // Generated code's malloc refuses a buffer beyond the memory available
    // instead of leaving the run to the out-of-memory killer
    // (runtime/MemoryGuard.h).
    add(memoryGuardSymbols());
    // A failed run-time check ends in one error line, not a stack dump
    // (runtime/RunTimeChecks.h).
    add(runTimeCheckSymbols());
    // The marks of a function compiled with stage timers (StageTimer.h).
    add(stageTimerSymbols());
    if (ompMaxThreads)
      add({{"omp_get_max_threads", ompMaxThreads}});
    return symbols;
  });
  std::unique_ptr<JitProgram> program(new JitProgram());
  program->engine = std::move(*engine);
  return program;
}

std::optional<std::vector<Buffer>>
JitProgram::run(const FunctionSignature &sig, std::vector<Buffer> &inputs,
                std::string &error) {
  auto entry = packedEntry(sig.name, error);
  if (!entry)
    return std::nullopt;
  return invoke(sig, inputs,
                [&](void **args, std::string &err) {
                  // The packed entry wants a pointer to each argument's value.
                  size_t count = sig.inputs.size() + (sig.results.empty() ? 0 : 1);
                  void *packed[64];
                  std::vector<void *> many;
                  void **slots = packed;
                  if (count > 64) {
                    many.resize(count);
                    slots = many.data();
                  }
                  for (size_t i = 0; i < count; ++i)
                    slots[i] = &args[i];
                  // A failed run-time check comes back as this call's error
                  // (runtime/RunTimeChecks.h).
                  return callPackedRecovering(entry, slots, err);
                },
                error);
}

JitProgram::PackedEntry JitProgram::packedEntry(const std::string &name, std::string &error) {
  // Looked up once: the JIT's lookup costs microseconds, which a call on a
  // few tokens would pay each time.
  std::lock_guard<std::mutex> lock(entriesMutex);
  if (auto found = entries.find(name); found != entries.end())
    return found->second;
  auto symbol = engine->lookupPacked("_mlir_ciface_" + name);
  if (!symbol) {
    error = "cannot compile '" + name + "': " + llvm::toString(symbol.takeError());
    return nullptr;
  }
  return entries[name] = *symbol;
}

bool JitProgram::materialize(const std::string &name, std::string &error) {
  return packedEntry(name, error) != nullptr;
}

std::optional<MemoryPlan> moec::memoryPlan(ModuleOp lowered, const std::string &name) {
  Operation *fn = lowered.lookupSymbol(name);
  if (!fn)
    return std::nullopt;
  auto plan = fn->getAttrOfType<DictionaryAttr>(moe::kMemoryPlanAttrName);
  if (!plan)
    return std::nullopt;
  auto get = [&](StringRef key) {
    auto value = plan.getAs<IntegerAttr>(key);
    return value ? value.getInt() : 0;
  };
  MemoryPlan p;
  p.arena = get("arena_bytes");
  p.lowerBound = get("lower_bound_bytes");
  p.unplanned = get("unplanned_bytes");
  p.buffers = get("buffers");
  p.bufferBytes = get("buffer_bytes");
  return p;
}

std::string moec::describeMemoryPlan(const MemoryPlan &plan) {
  return "planned peak " + memorySizeText(plan.plannedPeak()) + " = arena " + memorySizeText(plan.arena) +
         " (" + std::to_string(plan.buffers) + " buffers of " + memorySizeText(plan.bufferBytes) +
         "; live-set lower bound " +
         memorySizeText(plan.lowerBound) + ") + results and unplanned " + memorySizeText(plan.unplanned);
}
