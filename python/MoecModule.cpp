//===- MoecModule.cpp - the moec Python module's native part ---------------===//
//
// `moec._moec`: compiling a moe program (text, a file, or a Hugging Face
// layer) into a JIT program, and calling its entries on NumPy arrays
// without copying them. The Python package around it (python/moec/) turns
// torch tensors into such arrays and back, and holds the layer's weights.
//
// pybind11 rather than nanobind or MLIR's own Python bindings: it is what
// Debian packages (python3-pybind11), and moec's API is a handful of calls
// over its runtime's Buffers, not MLIR's IR (which upstream's bindings
// expose, and which a user of a compiled layer does not need).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/ShardedCall.h"
#include "strategy/TargetCpu.h"
#include "dialect/MoeDialect.h"
#include "dialect/ParserGuard.h"
#include "frontend/HfBlock.h"
#include "runtime/AtomicFile.h"
#include "runtime/HfLayer.h"
#include "runtime/Safetensors.h"
#include "runtime/ShardComm.h"
#include "runtime/ShardedRun.h"
#include "tooling/LoadProgram.h"
#include "tooling/ProgramOptions.h"
#include "tooling/RunReport.h"
#include "tooling/ToolChoices.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

namespace py = pybind11;
using namespace moec;

namespace {

/// The program could not be built: a parse or verifier error, a pass that
/// refused it, a JIT failure. Carries the compiler's diagnostics.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A call or option the program cannot take: the count, element type or
/// shape of an argument, an unknown entry, a bad option value.
struct ArgumentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The compiled code failed at run time (a run-time check on sizes that
/// only the inputs decide, memory, a shard of a mesh).
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A checkpoint or config.json could not be read (the file and tensor named).
struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Options as Python spells them: activation-budget -> activation_budget=.
std::string pythonSpelling(const std::string &name) {
  std::string s = name;
  std::replace(s.begin(), s.end(), '-', '_');
  return s + "=";
}

DType dtypeOfTag(const std::string &tag) {
  if (tag == "f32")
    return DType::F32;
  if (tag == "bf16")
    return DType::BF16;
  if (tag == "i32")
    return DType::I32;
  if (tag == "i8")
    return DType::I8;
  throw ArgumentError("unknown element type '" + tag + "' (f32, bf16, i32 or i8)");
}

/// The NumPy dtype holding a moec element type: bf16 travels as its 16-bit
/// patterns (NumPy has no bf16; the Python side views them as torch.bfloat16).
py::dtype numpyDtype(DType t) {
  switch (t) {
  case DType::F32:
    return py::dtype::of<float>();
  case DType::BF16:
    return py::dtype::of<int16_t>();
  case DType::I32:
    return py::dtype::of<int32_t>();
  case DType::I8:
    return py::dtype::of<int8_t>();
  }
  return py::dtype::of<float>();
}

/// A NumPy array owning `b`'s memory (no copy): the array's base is a
/// capsule that frees the Buffer with the array.
py::array toArray(Buffer b) {
  auto *owned = new Buffer(std::move(b));
  py::capsule base(owned, [](void *p) { delete static_cast<Buffer *>(p); });
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  return py::array(numpyDtype(owned->dtype()), shape, owned->data(), base);
}

/// Views of the caller's arrays as Buffers (no copy). Each must be a
/// NumPy array (the list keeps it alive while the code runs without the
/// interpreter's lock), C-contiguous and aligned, of the tag's element type
/// (bf16 as 16-bit integers); the signature check (count, element types,
/// static sizes) is the caller's. With `allowNone`, None is an empty Buffer
/// (an argument the call does not read).
std::vector<Buffer> viewsOf(const py::list &arrays, const py::list &tags,
                            const std::string &entry, bool allowNone = false) {
  if (arrays.size() != tags.size())
    throw ArgumentError(std::to_string(arrays.size()) + " arrays and " +
                        std::to_string(tags.size()) + " element types");
  std::vector<Buffer> views;
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string which = "argument " + std::to_string(i) + " of '" + entry + "'";
    if (allowNone && arrays[i].is_none()) {
      views.emplace_back(); // not read: a weight already prepared, or x at prepare time
      continue;
    }
    if (!py::isinstance<py::array>(arrays[i]))
      throw ArgumentError(which + " is not a NumPy array");
    auto array = arrays[i].cast<py::array>(); // the same object: no conversion
    DType dtype = dtypeOfTag(tags[i].cast<std::string>());
    auto same = [&](const py::dtype &t) {
      return py::detail::npy_api::get().PyArray_EquivTypes_(array.dtype().ptr(), t.ptr());
    };
    bool bf16Bits = dtype == DType::BF16 && same(py::dtype::of<uint16_t>());
    if (!same(numpyDtype(dtype)) && !bf16Bits)
      throw ArgumentError(which + " holds " + py::str(array.dtype()).cast<std::string>() +
                          " for " + dtypeName(dtype));
    if (!(array.flags() & py::array::c_style))
      throw ArgumentError(which + " is not C-contiguous");
    if (reinterpret_cast<uintptr_t>(array.data()) % dtypeSize(dtype))
      throw ArgumentError(which + " is not aligned to its elements");
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    views.push_back(Buffer::view(dtype, std::move(shape), const_cast<void *>(array.data())));
  }
  return views;
}

/// Compiles hold it: the target CPU is one process-wide choice
/// (strategy/TargetCpu.h), made for one compile at a time and then set back
/// to this host.
std::mutex compileMutex;
struct HostTargetAfterwards {
  ~HostTargetAfterwards() {
    std::string ignored;
    mlir::moe::strategy::setTargetCpu("", ignored);
  }
};

/// What the Python side asks of a compile.
struct CompileRequest {
  std::string source;     // the program's text, or a path (isPath)
  bool isPath = false;
  std::string hfConfig;   // or a Hugging Face layer: config.json,
  int64_t hfLayer = 0;    // its layer
  std::string hfDtype = "bf16";
  ProgramOptions options;
  GmmChoices gmm;
  std::string targetCpu, pipeline, entry;
  bool tuningTableFromEnv = false; // the table is $MOEC_TUNING_TABLE's
  bool prepareWeights = false;     // each entry's prepared form too
  int64_t collectiveTimeoutMs = 60000;
};

class Program {
public:
  struct Entry {
    FunctionSignature shard, full;
    std::optional<MeshLayout> layout;
    std::vector<int64_t> gradientArgs;
    std::optional<MemoryPlan> plan;
    // Its prepared form and its halves (compiled with prepare_weights).
    std::optional<PreparedHalves> prepared;
  };

  /// Entry `name`'s weights prepared once; `args` its whole argument list
  /// (only the weights are read).
  std::shared_ptr<PreparedWeights> prepare(const std::string &name, std::vector<Buffer> &args) {
    const Entry &e = entry(name);
    if (!e.prepared)
      throw ArgumentError("'" + name + "' has no prepared form (compile with prepare_weights=True; a " +
                          "function that trains, one partitioned for a mesh, or one whose kernels read " +
                          "no packed layout has none)");
    std::string error;
    // A bad argument is the caller's (ArgumentError); what fails after is the run's.
    if (!checkArgumentsAt(e.full, args, e.prepared->form.weightArgs,
                          PreparedWeights::weightsRead(e.prepared->form), error))
      throw ArgumentError(error);
    std::optional<PreparedWeights> weights;
    {
      py::gil_scoped_release release; // packing gigabytes takes a while
      weights = PreparedWeights::prepare(e.prepared->form, e.full, args, halves(e), error);
    }
    if (!weights)
      throw RunError(error);
    return std::make_shared<PreparedWeights>(std::move(*weights));
  }

  /// One call of the entry `weights` were prepared for, on `args` (its whole
  /// argument list; the prepared weights' places are not read).
  std::vector<Buffer> runPrepared(const PreparedWeights &weights, std::vector<Buffer> &args) {
    const Entry &e = entry(weights.form().function);
    std::string error;
    if (!e.prepared)
      throw ArgumentError("'" + weights.form().function + "' has no prepared form in this program: these "
                          "weights were prepared by another");
    if (!checkArgumentsAt(e.full, args, weights.form().keptArgs, PreparedWeights::argumentsRead(weights.form()),
                          error))
      throw ArgumentError(error);
    std::optional<std::vector<Buffer>> results;
    {
      py::gil_scoped_release release;
      results = weights.run(e.prepared->form, e.full, args, halves(e), error);
    }
    if (!results)
      throw RunError(error);
    return std::move(*results);
  }

  static std::unique_ptr<Program> compile(const CompileRequest &request);

  const Entry &entry(const std::string &name) const {
    auto found = entries.find(name);
    if (found == entries.end())
      throw ArgumentError("the program has no entry '" + name + "' (it has: " + namesText() +
                          ")");
    return found->second;
  }

  /// One call of entry `name`: the results, each owning the memory the
  /// code allocated for it.
  std::vector<Buffer> run(const std::string &name, std::vector<Buffer> &args) {
    const Entry &e = checkedEntry(name, args);
    std::string error;
    std::optional<std::vector<Buffer>> results;
    {
      py::gil_scoped_release release; // other Python threads run meanwhile
      results = callOnce(e, args, error);
    }
    if (!results)
      throw RunError(error);
    return std::move(*results);
  }

  /// The median of `iterations` calls from C++ (after a warm-up), seconds:
  /// what the Python call's overhead is measured against.
  double medianCallSeconds(const std::string &name, std::vector<Buffer> &args, int iterations) {
    const Entry &e = checkedEntry(name, args);
    std::string error;
    if (iterations < 1)
      throw ArgumentError("iterations must be at least 1");
    std::vector<double> seconds;
    py::gil_scoped_release release;
    for (int i = 0; i <= iterations; ++i) {
      auto start = std::chrono::steady_clock::now();
      auto results = callOnce(e, args, error);
      auto stop = std::chrono::steady_clock::now();
      if (!results)
        throw RunError(error);
      if (i > 0)
        seconds.push_back(std::chrono::duration<double>(stop - start).count());
    }
    return moec::medianOf(seconds); // as moec run and moe-bench report it
  }

  std::vector<std::string> names; // the entries, in the module's order
  std::map<std::string, Entry> entries;
  std::string defaultEntry;
  std::string text; // the program before lowering

private:
  /// Entry `name`, after checking `args` against its signature.
  const Entry &checkedEntry(const std::string &name, const std::vector<Buffer> &args) const {
    const Entry &e = entry(name);
    std::string error;
    if (!e.full.checkInputs(args, error))
      throw ArgumentError(error);
    return e;
  }

  std::optional<std::vector<Buffer>> callOnce(const Entry &e, std::vector<Buffer> &args,
                                              std::string &error) {
    if (!e.layout)
      return callOnDevice(*jit, e.shard, args, error);
    auto local = localShardInputs(args, *e.layout, nullptr, error);
    if (!local)
      return std::nullopt;
    std::vector<RankStats> stats;
    return callSharded(*jit, e.shard, *e.layout, *local, nullptr, timeout, stats, error);
  }

  /// Calls of entry e's two halves, on this device.
  CallByName halves(const Entry &e) {
    return [this, &e](const std::string &name, std::vector<Buffer> &args, std::string &error) {
      return callOnDevice(*jit, name == e.prepared->form.prepare ? e.prepared->prepare : e.prepared->prepared,
                          args, error);
    };
  }

  std::string namesText() const {
    std::string s;
    for (const std::string &n : names)
      s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  std::unique_ptr<JitProgram> jit;
  std::chrono::milliseconds timeout{60000};
};

std::unique_ptr<Program> Program::compile(const CompileRequest &r) {
  std::lock_guard<std::mutex> lock(compileMutex);
  HostTargetAfterwards hostAfterwards;
  if (std::string why = programOptionsRefusal(r.options, pythonSpelling); !why.empty())
    throw ArgumentError(why);
  if (std::string why = selectTarget(r.targetCpu, r.gmm, /*runHere=*/true, r.tuningTableFromEnv,
                                     pythonSpelling);
      !why.empty())
    throw ArgumentError(why);
  if (r.collectiveTimeoutMs < 1)
    throw ArgumentError("collective_timeout_ms must be at least 1");

  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  llvm::SourceMgr sourceMgr;
  mlir::moe::ShortSourceLineDiagnosticHandler handler(sourceMgr, &context, os);
  auto failed = [&](const std::string &what) {
    std::string said = diagnostics;
    while (!said.empty() && said.back() == '\n')
      said.pop_back();
    return CompileError(said.empty() ? what : what + ":\n" + said);
  };

  auto program = std::unique_ptr<Program>(new Program());
  program->timeout = std::chrono::milliseconds(r.collectiveTimeoutMs);
  ProgramSource source;
  if (r.isPath)
    source.path = r.source;
  else
    source.text = r.source;
  source.hfConfig = r.hfConfig, source.hfLayer = r.hfLayer;
  if (!r.hfConfig.empty()) {
    FloatType type = FloatType::bf16;
    if (std::string why =
            parseChoiceOption(kFloatTypeChoices, r.hfDtype, "dtype", pythonSpelling, type);
        !why.empty())
      throw ArgumentError(why);
    source.hfDtype = dtypeOf(type);
  }
  LoadedProgram loaded = loadProgram(&context, sourceMgr, source);
  if (!loaded.module) {
    if (loaded.cause == LoadedProgram::Cause::Config)
      throw CheckpointError(loaded.error);
    if (loaded.cause == LoadedProgram::Cause::Input)
      throw ArgumentError(loaded.error);
    throw failed(r.hfConfig.empty() ? "the program does not parse or verify"
                                    : "the block built from " + r.hfConfig + " does not verify");
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(loaded.module);
  std::string error;
  if (mlir::failed(prepareProgram(*module, r.options)))
    throw failed("preparing the program failed");

  std::vector<std::string> skipped;
  for (FunctionSignature &sig : entrySignatures(*module, skipped)) {
    Entry e;
    e.layout = meshLayout(*module, sig.name);
    e.full = e.layout ? e.layout->fullSignature(sig) : sig;
    e.shard = sig;
    if (auto *fn = module->lookupSymbol(sig.name))
      if (auto grads = fn->getAttrOfType<mlir::DenseI64ArrayAttr>(mlir::moe::kGradientArgsAttrName))
        e.gradientArgs.assign(grads.asArrayRef().begin(), grads.asArrayRef().end());
    program->names.push_back(sig.name);
    program->entries.emplace(sig.name, std::move(e));
  }
  if (program->names.empty()) {
    std::string why;
    for (const std::string &s : skipped)
      why += "; " + s;
    throw CompileError("the program has no public function taking and returning tensors" + why);
  }
  if (!r.entry.empty()) {
    if (!program->entries.count(r.entry))
      throw ArgumentError("entry= '" + r.entry + "' is not a public function of the program " +
                          "taking tensors (it has: " + program->namesText() + ")");
    program->defaultEntry = r.entry;
  } else {
    // The function the user wrote (not the forward_backward added to it),
    // when there is one; else the only one.
    for (const std::string &n : program->names)
      if (llvm::StringRef(n).ends_with("_forward_backward") == false &&
          program->defaultEntry.empty())
        program->defaultEntry = n;
    if (program->defaultEntry.empty())
      program->defaultEntry = program->names.front();
  }
  {
    llvm::raw_string_ostream text(program->text);
    module->print(text);
  }
  // The entries' prepared forms (one device, moe-to-llvm): packed once by
  // Program.prepare, or by an HfLayer when it binds its weights.
  if (r.prepareWeights && r.pipeline.empty()) {
    if (mlir::failed(prepareWeights(*module, r.gmm)))
      throw failed("preparing the weights failed");
    for (auto &[name, e] : program->entries) {
      if (e.layout)
        continue;
      e.prepared = preparedHalves(*module, e.full, error);
      if (!e.prepared && !error.empty())
        throw CompileError(error);
    }
  }
  if (mlir::failed(lowerModule(*module, r.pipeline, r.gmm)))
    throw failed("lowering the program failed");
  for (auto &[name, e] : program->entries)
    e.plan = memoryPlan(*module, name);
  program->jit = JitProgram::create(*module, error);
  if (!program->jit)
    throw CompileError(error);
  // Compiled now: the first call runs, it does not compile.
  for (const auto &[name, e] : program->entries)
    for (const std::string &fn : {name, e.prepared ? e.prepared->form.prepare : std::string(),
                                  e.prepared ? e.prepared->form.prepared : std::string()})
      if (!fn.empty() && !program->jit->materialize(fn, error))
        throw CompileError(error);
  return program;
}

py::dict describeLayer(const HfLayer &l, DType dtype) {
  py::dict d;
  d["model_type"] = l.modelType;
  d["family"] = l.family;
  d["layer"] = l.layer;
  d["hidden_size"] = l.hidden;
  d["intermediate_size"] = l.mlp;
  d["experts"] = l.experts;
  d["top_k"] = l.k;
  d["shared_size"] = l.shared;
  d["prefix"] = l.prefix; // the block's tensor names start with it
  py::list arguments;
  for (const HfArgument &a : hfBlockArguments(l, dtype))
    arguments.append(py::make_tuple(a.name, a.shape, std::string(dtypeName(a.dtype))));
  d["arguments"] = arguments;
  return d;
}

py::list resultsToArrays(std::vector<Buffer> results) {
  py::list out;
  for (Buffer &b : results)
    out.append(toArray(std::move(b)));
  return out;
}

py::list signatureList(const std::vector<TensorSignature> &tensors) {
  py::list out;
  for (const TensorSignature &t : tensors)
    out.append(py::make_tuple(std::string(dtypeName(t.dtype)), t.shape));
  return out;
}

} // namespace

PYBIND11_MODULE(_moec, m) {
  m.doc() = "moec's native part: compile moe programs, call them on NumPy arrays "
            "(use the moec package, not this module)";
  static py::exception<CompileError> compileError(m, "CompileError", PyExc_RuntimeError);
  static py::exception<ArgumentError> argumentError(m, "ArgumentError", PyExc_ValueError);
  static py::exception<RunError> runError(m, "RunError", PyExc_RuntimeError);
  static py::exception<CheckpointError> checkpointError(m, "CheckpointError", PyExc_OSError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const CompileError &e) {
      compileError(e.what());
    } catch (const ArgumentError &e) {
      argumentError(e.what());
    } catch (const RunError &e) {
      runError(e.what());
    } catch (const CheckpointError &e) {
      checkpointError(e.what());
    }
  });

  // A program's weights prepared once: what its prepare half returned
  // (packed, or quantized), owned here.
  py::class_<PreparedWeights, std::shared_ptr<PreparedWeights>>(m, "PreparedWeights")
      .def_property_readonly("entry", [](const PreparedWeights &w) { return w.form().function; })
      .def_property_readonly("bytes", &PreparedWeights::bytes);

  py::class_<Program>(m, "Program")
      .def_readonly("entries", &Program::names)
      .def_readonly("default_entry", &Program::defaultEntry)
      .def_readonly("text", &Program::text)
      .def("inputs",
           [](const Program &p, const std::string &name) {
             return signatureList(p.entry(name).full.inputs);
           })
      .def("results",
           [](const Program &p, const std::string &name) {
             return signatureList(p.entry(name).full.results);
           })
      .def("signature",
           [](const Program &p, const std::string &name) { return p.entry(name).full.str(); })
      .def("gradient_args",
           [](const Program &p, const std::string &name) { return p.entry(name).gradientArgs; })
      .def("mesh",
           [](const Program &p, const std::string &name) -> std::string {
             const auto &layout = p.entry(name).layout;
             return layout ? layout->str() : "";
           })
      .def("memory_plan",
           [](const Program &p, const std::string &name) -> std::string {
             const auto &plan = p.entry(name).plan;
             return plan ? describeMemoryPlan(*plan) : "";
           })
      .def("call",
           [](Program &p, const std::string &name, const py::list &arrays, const py::list &tags) {
             std::vector<Buffer> args = viewsOf(arrays, tags, name);
             return resultsToArrays(p.run(name, args));
           })
      .def("prepared_form",
           [](const Program &p, const std::string &name) -> py::object {
             const auto &halves = p.entry(name).prepared;
             if (!halves)
               return py::none();
             const PreparedForm *form = &halves->form;
             py::dict d;
             d["prepare"] = form->prepare;
             d["prepared"] = form->prepared;
             d["weights"] = form->weightArgs;
             d["kept"] = form->keptArgs;
             d["layout"] = form->layout;
             return std::move(d);
           })
      .def("prepare",
           [](Program &p, const std::string &name, const py::list &arrays, const py::list &tags) {
             std::vector<Buffer> args = viewsOf(arrays, tags, name, /*allowNone=*/true);
             return p.prepare(name, args);
           })
      .def("call_prepared",
           [](Program &p, const PreparedWeights &weights, const py::list &arrays, const py::list &tags) {
             std::vector<Buffer> args = viewsOf(arrays, tags, weights.form().function, /*allowNone=*/true);
             return resultsToArrays(p.runPrepared(weights, args));
           })
      .def("median_call_seconds",
           [](Program &p, const std::string &name, const py::list &arrays, const py::list &tags,
              int iterations) {
             std::vector<Buffer> args = viewsOf(arrays, tags, name);
             return p.medianCallSeconds(name, args, iterations);
           });

  m.def(
      "compile",
      [](const std::string &source, bool isPath, const std::string &hfConfig, int64_t hfLayer,
         const std::string &hfDtype, const std::string &entry, const std::string &backward,
         bool routingGrad, const std::string &remat, std::optional<int64_t> activationBudget,
         const std::string &pipeline, const std::string &mesh, const std::string &epDispatch,
         double capacityFactor, int64_t capacityRound, const std::string &gmmStrategy,
         const std::string &gmmTiling, const std::string &tuningTable, bool tuningTableFromEnv,
         const std::string &targetCpu, int64_t collectiveTimeoutMs, bool prepareWeights) {
        CompileRequest r;
        r.source = source, r.isPath = isPath;
        r.hfConfig = hfConfig, r.hfLayer = hfLayer, r.hfDtype = hfDtype;
        r.entry = entry, r.pipeline = pipeline, r.targetCpu = targetCpu;
        // The choices parsed by the tables moec's options are made of.
        auto choose = [](const auto &table, const std::string &text, const std::string &name,
                         auto &out) {
          if (std::string why = parseChoiceOption(table, text, name, pythonSpelling, out);
              !why.empty())
            throw ArgumentError(why);
        };
        if (!backward.empty()) {
          mlir::moe::BackwardLoss loss;
          choose(mlir::moe::kBackwardLossChoices, backward, "backward", loss);
          r.options.backward = loss;
        }
        choose(mlir::moe::kRematPolicyChoices, remat, "remat", r.options.remat);
        choose(mlir::moe::kEpDispatchChoices, epDispatch, "ep-dispatch", r.options.epDispatch);
        r.options.routingGrad = routingGrad, r.options.activationBudget = activationBudget;
        r.options.mesh = mesh;
        r.options.capacityFactor = capacityFactor, r.options.capacityRound = capacityRound;
        choose(mlir::moe::strategy::kGmmStrategyChoices, gmmStrategy, "gmm-strategy",
               r.gmm.strategy);
        r.gmm.tiling = gmmTiling, r.gmm.tuningTable = tuningTable;
        r.tuningTableFromEnv = tuningTableFromEnv;
        r.collectiveTimeoutMs = collectiveTimeoutMs;
        r.prepareWeights = prepareWeights;
        py::gil_scoped_release release; // compiling takes seconds
        return Program::compile(r);
      },
      py::arg("source"), py::arg("is_path"), py::arg("hf_config"), py::arg("hf_layer"),
      py::arg("hf_dtype"), py::arg("entry"), py::arg("backward"), py::arg("routing_grad"),
      py::arg("remat"), py::arg("activation_budget"), py::arg("pipeline"), py::arg("mesh"),
      py::arg("ep_dispatch"), py::arg("capacity_factor"), py::arg("capacity_round"),
      py::arg("gmm_strategy"), py::arg("gmm_tiling"), py::arg("tuning_table"),
      py::arg("tuning_table_from_env"), py::arg("target_cpu"), py::arg("collective_timeout_ms"),
      py::arg("prepare_weights"));

  m.def(
      "hf_layer",
      [](const std::string &config, int64_t layer, const std::string &dtype) {
        std::string error;
        auto l = readHfLayer(config, layer, error);
        if (!l)
          throw CheckpointError(error);
        FloatType type = FloatType::bf16;
        if (std::string why =
                parseChoiceOption(kFloatTypeChoices, dtype, "dtype", pythonSpelling, type);
            !why.empty())
          throw ArgumentError(why);
        return describeLayer(*l, dtypeOf(type));
      },
      py::arg("config"), py::arg("layer"), py::arg("dtype"));

  m.def(
      "load_hf_weights",
      [](const std::string &config, int64_t layer, const std::string &weights,
         const std::string &dtype) {
        DType t = dtypeOfTag(dtype);
        if (t != DType::F32 && t != DType::BF16)
          throw ArgumentError("dtype= must be f32 or bf16 (got '" + dtype + "')");
        std::vector<Buffer> buffers;
        std::string error;
        {
          py::gil_scoped_release release; // reading gigabytes takes a while
          auto l = readHfLayer(config, layer, error);
          if (!l)
            throw CheckpointError(error);
          auto checkpoint = Checkpoint::open(weights, error);
          if (!checkpoint || !loadHfWeights(*l, *checkpoint, t, buffers, error))
            throw CheckpointError(error);
        }
        return resultsToArrays(std::move(buffers));
      },
      py::arg("config"), py::arg("layer"), py::arg("weights"), py::arg("dtype"));

  m.def(
      "buffer_addresses",
      [](const py::list &arrays, const py::list &tags) {
        // What a call would hand the compiled code: the tests check that a
        // contiguous input is passed where it lies, not copied.
        std::vector<uintptr_t> out;
        for (Buffer &b : viewsOf(arrays, tags, "buffer_addresses"))
          out.push_back(reinterpret_cast<uintptr_t>(b.data()));
        return out;
      },
      py::arg("arrays"), py::arg("tags"));

  m.def("host_target", []() {
    std::string error;
    auto tm = hostTargetMachine(error);
    if (!tm)
      throw CompileError(error);
    return describeHostTarget(*tm);
  });
}
