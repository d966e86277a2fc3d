//===- Session.cpp - compile moe programs, call them on named buffers -----===//

#include "Session.h"

#include "compiler/ShardedCall.h"
#include "runtime/StageTimer.h"

#include "dialect/MoeDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace moebench;

std::unique_ptr<Compiled> Compiled::build(const std::string &source,
                                          const moec::GmmChoices &gmm, double &seconds,
                                          std::string &error, const std::string &prepare) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Compiled> c(new Compiled());
  mlir::DialectRegistry registry;
  moec::registerCompilerDialects(registry);
  c->context.appendDialectRegistry(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&c->context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &c->context);
  if (!module) {
    error = "generated program does not parse: " + diagnostics;
    return nullptr;
  }
  if (!prepare.empty() && mlir::failed(moec::lowerModule(*module, prepare))) {
    error = diagnostics.empty() ? "'" + prepare + "' failed" : diagnostics;
    return nullptr;
  }
  for (auto fn : module->getOps<mlir::func::FuncOp>())
    if (auto remat = fn->getAttrOfType<mlir::DictionaryAttr>(mlir::moe::kRematAttrName))
      c->rematChoices[fn.getSymName().str()] = {
          remat.getAs<mlir::IntegerAttr>("kept_bytes").getInt(),
          remat.getAs<mlir::IntegerAttr>("recomputed_flops").getInt()};
  // The weights packed once, the stages marked (before the signatures are
  // read: it adds the functions a host calls).
  if ((gmm.prepareWeights || gmm.stageTimers) && mlir::failed(moec::decideStrategy(*module, gmm))) {
    error = diagnostics.empty() ? "the strategy pipeline failed" : diagnostics;
    return nullptr;
  }
  std::vector<std::string> skipped;
  for (auto &sig : moec::entrySignatures(*module, skipped)) {
    c->signatures[sig.name] = sig;
    if (std::optional<moec::MeshLayout> layout = moec::meshLayout(*module, sig.name))
      c->layouts[sig.name] = *layout;
    if (std::vector<std::string> names = moec::stageNames(*module, sig.name); !names.empty())
      c->stageNames[sig.name] = std::move(names);
    if (std::optional<moec::PreparedHalves> halves = moec::preparedHalves(*module, sig, error))
      c->preparedHalves[sig.name] = std::move(*halves);
    else if (!error.empty())
      return nullptr;
  }
  if (mlir::failed(moec::lowerModule(*module, "", gmm))) {
    error = diagnostics.empty() ? "lowering failed" : diagnostics;
    return nullptr;
  }
  c->program = moec::JitProgram::create(*module, error);
  if (!c->program)
    return nullptr;
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

namespace {
/// The pool's buffers named by `args`, moved out for a call (every name is
/// checked first: a missing one takes nothing); giveBack returns them.
bool lend(std::map<std::string, moec::Buffer> &pool, const std::vector<std::string> &args,
          const std::string &function, std::vector<moec::Buffer> &lent, std::string &error) {
  for (const std::string &name : args)
    if (!pool.count(name)) {
      error = "no buffer '" + name + "' for @" + function;
      return false;
    }
  for (const std::string &name : args)
    lent.push_back(std::move(pool[name]));
  return true;
}

void giveBack(std::map<std::string, moec::Buffer> &pool, const std::vector<std::string> &args,
              std::vector<moec::Buffer> &lent) {
  for (size_t i = 0; i < args.size(); ++i)
    pool[args[i]] = std::move(lent[i]);
}

/// Frees the pool's buffers under `results`' names (those not also among
/// `args`) before a call that makes new ones: the call's allocations reuse
/// that memory instead of growing the heap while the last call's results
/// are still held (a forward_backward's weight gradients are gigabytes, and
/// a KVM guest faulted them in for seconds on the second call).
void dropStaleResults(std::map<std::string, moec::Buffer> &pool, const std::vector<std::string> &args,
                      const std::vector<std::string> &results) {
  for (const std::string &name : results)
    if (std::find(args.begin(), args.end(), name) == args.end())
      pool.erase(name);
}

/// A call's results into the pool under `results`' names.
void store(std::map<std::string, moec::Buffer> &pool, const std::vector<std::string> &results,
           std::vector<moec::Buffer> &out) {
  for (size_t i = 0; i < results.size() && i < out.size(); ++i)
    pool[results[i]] = std::move(out[i]);
}
} // namespace

double Compiled::call(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                      const std::vector<std::string> &args,
                      const std::vector<std::string> &results, std::string &error) {
  auto sig = signatures.find(function);
  if (sig == signatures.end()) {
    error = "no function @" + function;
    return -1;
  }
  std::vector<moec::Buffer> inputs;
  if (!lend(pool, args, function, inputs, error))
    return -1;
  dropStaleResults(pool, args, results);
  auto start = std::chrono::steady_clock::now();
  auto out = program->run(sig->second, inputs, error);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  giveBack(pool, args, inputs);
  if (!out)
    return -1;
  store(pool, results, *out);
  return seconds;
}

double Compiled::callSharded(const std::string &function,
                             std::map<std::string, moec::Buffer> &pool,
                             const std::vector<std::string> &args,
                             const std::vector<std::string> &results, moec::ShardComm *mpi,
                             std::chrono::milliseconds timeout,
                             std::vector<moec::RankStats> &ranks, std::string &error) {
  auto sig = signatures.find(function);
  auto layout = layouts.find(function);
  if (sig == signatures.end() || layout == layouts.end()) {
    error = "no per-shard function @" + function;
    return -1;
  }
  std::vector<moec::Buffer> full;
  if (!lend(pool, args, function, full, error))
    return -1;
  auto shardArgs = moec::localShardInputs(full, layout->second, mpi, error);
  giveBack(pool, args, full);
  if (!shardArgs)
    return -1;
  dropStaleResults(pool, args, results);
  auto out = moec::callSharded(*program, sig->second, layout->second, *shardArgs, mpi, timeout,
                               ranks, error);
  if (!out)
    return -1;
  store(pool, results, *out);
  double slowest = 0;
  for (const moec::RankStats &r : ranks)
    slowest = std::max(slowest, r.seconds);
  return slowest;
}

const moec::MeshLayout *Compiled::layout(const std::string &function) const {
  auto it = layouts.find(function);
  return it == layouts.end() ? nullptr : &it->second;
}

double Compiled::callStaged(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                            const std::vector<std::string> &args,
                            const std::vector<std::string> &results,
                            std::vector<double> &stageSeconds, std::string &error) {
  auto names = stageNames.find(function);
  if (names == stageNames.end()) {
    error = "@" + function + " was compiled without stage timers";
    return -1;
  }
  moec::beginStageTiming(names->second.size());
  double seconds = call(function, pool, args, results, error);
  std::string timerError;
  stageSeconds = moec::takeStageTimes(timerError);
  if (seconds >= 0 && !timerError.empty()) {
    error = "@" + function + ": " + timerError;
    return -1;
  }
  return seconds;
}

std::vector<std::string> Compiled::stages(const std::string &function) const {
  auto it = stageNames.find(function);
  return it == stageNames.end() ? std::vector<std::string>() : it->second;
}

std::optional<RematChoice> Compiled::remat(const std::string &function) const {
  auto it = rematChoices.find(function);
  if (it == rematChoices.end())
    return std::nullopt;
  return it->second;
}

void moebench::fillUniform(moec::Buffer &b, uint64_t seed, float scale) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  int64_t n = b.numElements();
  bool bf16 = b.dtype() == moec::DType::BF16;
  for (int64_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    float v = (static_cast<float>(s >> 40) / 16777216.0f * 2 - 1) * scale;
    if (bf16)
      b.as<uint16_t>()[i] = moec::f32ToBf16(v);
    else
      b.as<float>()[i] = v;
  }
}

const moec::FunctionSignature *Compiled::signature(const std::string &function) const {
  auto it = signatures.find(function);
  return it == signatures.end() ? nullptr : &it->second;
}

const moec::PreparedForm *Compiled::preparedForm(const std::string &function) const {
  auto it = preparedHalves.find(function);
  return it == preparedHalves.end() ? nullptr : &it->second.form;
}

bool Compiled::preparePacks(const std::string &function) const {
  auto it = preparedHalves.find(function);
  return it != preparedHalves.end() && it->second.packs;
}

double Compiled::prepareWeights(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                                std::vector<std::string> args, const std::string &prefix,
                                std::vector<std::string> &preparedArgs,
                                std::vector<std::string> &preparedWeights, std::string &error) {
  const moec::PreparedForm *form = preparedForm(function);
  const moec::FunctionSignature *sig = form ? signature(form->prepare) : nullptr;
  if (!sig) {
    error = "@" + function + " has no prepared form (<f>_prepare_weights, <f>_prepared)";
    return -1;
  }
  if (args.size() != signature(function)->inputs.size()) {
    error = "@" + function + " takes " + std::to_string(signature(function)->inputs.size()) +
            " arguments, not " + std::to_string(args.size());
    return -1;
  }
  // The positions are within @function's arguments (preparedHalves checked the form).
  auto named = [&](const std::vector<int64_t> &positions) {
    std::vector<std::string> names;
    for (int64_t i : positions)
      names.push_back(args[i]);
    return names;
  };
  std::vector<std::string> weights = named(form->weightArgs), kept = named(form->keptArgs), results;
  for (size_t q = 0; q < sig->results.size(); ++q)
    results.push_back(prefix + std::to_string(q));
  double seconds = call(form->prepare, pool, weights, results, error);
  if (seconds < 0)
    return seconds;
  preparedArgs = kept;
  preparedArgs.insert(preparedArgs.end(), results.begin(), results.end());
  preparedWeights = results;
  return seconds;
}
