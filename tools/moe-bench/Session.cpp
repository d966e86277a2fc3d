//===- Session.cpp - compile moe programs, call them on named buffers -----===//

#include "Session.h"

#include "codegen/ShardedCall.h"

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
  std::vector<std::string> skipped;
  for (auto &sig : moec::entrySignatures(*module, skipped)) {
    c->signatures[sig.name] = sig;
    std::optional<moec::MeshLayout> layout = moec::meshLayout(*module, sig.name, error);
    if (!error.empty())
      return nullptr;
    if (layout)
      c->layouts[sig.name] = *layout;
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

double Compiled::call(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                      const std::vector<std::string> &args,
                      const std::vector<std::string> &results, std::string &error) {
  auto sig = signatures.find(function);
  if (sig == signatures.end()) {
    error = "no function @" + function;
    return -1;
  }
  std::vector<moec::Buffer> inputs;
  for (const std::string &name : args) {
    auto it = pool.find(name);
    if (it == pool.end()) {
      error = "no buffer '" + name + "' for @" + function;
      return -1;
    }
    inputs.push_back(std::move(it->second));
  }
  auto start = std::chrono::steady_clock::now();
  auto out = program->run(sig->second, inputs, error);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < args.size(); ++i)
    pool[args[i]] = std::move(inputs[i]);
  if (!out)
    return -1;
  for (size_t i = 0; i < results.size() && i < out->size(); ++i)
    pool[results[i]] = std::move((*out)[i]);
  return seconds;
}

double Compiled::callSharded(const std::string &function,
                             std::map<std::string, moec::Buffer> &pool,
                             const std::vector<std::string> &args,
                             const std::vector<std::string> &results, moec::ShardComm *mpi,
                             std::vector<moec::RankStats> &ranks, std::string &error) {
  auto sig = signatures.find(function);
  auto layout = layouts.find(function);
  if (sig == signatures.end() || layout == layouts.end()) {
    error = "no per-shard function @" + function;
    return -1;
  }
  std::vector<moec::Buffer> full;
  for (const std::string &name : args) {
    auto it = pool.find(name);
    if (it == pool.end()) {
      error = "no buffer '" + name + "' for @" + function;
      return -1;
    }
    full.push_back(std::move(it->second));
  }
  // Lent for the cut only: back in the pool before any early return.
  std::vector<std::vector<moec::Buffer>> shardArgs;
  bool cut = true;
  for (int64_t r = 0; r < layout->second.ranks() && cut; ++r) {
    if (mpi && r != mpi->rank())
      continue;
    auto blocks = moec::shardInputs(full, layout->second, r, error);
    if (!(cut = blocks.has_value()))
      break;
    shardArgs.push_back(std::move(*blocks));
  }
  for (size_t i = 0; i < args.size(); ++i)
    pool[args[i]] = std::move(full[i]);
  if (!cut)
    return -1;
  auto out = moec::callSharded(*program, sig->second, layout->second, shardArgs, mpi,
                               std::chrono::milliseconds(60000), ranks, error);
  if (!out)
    return -1;
  for (size_t i = 0; i < results.size() && i < out->size(); ++i)
    pool[results[i]] = std::move((*out)[i]);
  double slowest = 0;
  for (const moec::RankStats &r : ranks)
    slowest = std::max(slowest, r.seconds);
  return slowest;
}

const moec::MeshLayout *Compiled::layout(const std::string &function) const {
  auto it = layouts.find(function);
  return it == layouts.end() ? nullptr : &it->second;
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
