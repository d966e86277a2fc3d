//===- BlockCase.cpp - one MoE block, compiled and held to the reference --===//

#include "differential/BlockCase.h"

#include "compiler/Compiler.h"
#include "strategy/GmmTiling.h"
#include "compiler/ShardedCall.h"
#include "passes/Remat.h"
#include "runtime/HfLayer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace moec;
using namespace moec::differential;

std::string differential::tensorType(const std::vector<int64_t> &shape,
                                     const std::string &element) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + element + ">";
}

std::string differential::program(const BlockCase &c) {
  std::string dt = c.bf16 ? "bf16" : "f32";
  int64_t T = c.dynamicTokens ? -1 : c.tokens, H = c.hidden, M = c.mlp, E = c.experts,
          S = c.shared, C = E + c.route.nullExperts;
  // The arguments in the block's operand order, each with the clause that
  // passes it (several arguments share one clause: w1, w3).
  std::vector<std::pair<std::string, std::string>> args;
  std::ostringstream clauses;
  auto clause = [&](const std::string &name, std::vector<std::pair<std::string, std::string>> in) {
    clauses << name << "(";
    for (size_t i = 0; i < in.size(); ++i)
      clauses << (i ? ", " : "") << in[i].first;
    clauses << " : ";
    for (size_t i = 0; i < in.size(); ++i)
      clauses << (i ? ", " : "") << in[i].second;
    clauses << ") ";
    args.insert(args.end(), in.begin(), in.end());
  };
  args.push_back({"%x", tensorType({T, H}, dt)});
  if (c.routerWeight)
    clause("router", {{"%r", tensorType({H, C}, dt)}});
  else
    clause("logits", {{"%r", tensorType({T, C}, "f32")}});
  if (c.routerBias)
    clause("router_bias", {{"%rb", tensorType({C}, dt)}});
  if (c.selectionBias)
    clause("selection_bias", {{"%sb", tensorType({C}, "f32")}});
  if (c.nullFraction >= 0)
    clause("null_draws", {{"%u", tensorType({T, c.k}, "f32")}});
  if (c.fusedW13)
    clause("gate_up", {{"%w13", tensorType({E, H, 2 * M}, dt)}});
  else
    clause("gate_up", {{"%w1", tensorType({E, H, M}, dt)}, {"%w3", tensorType({E, H, M}, dt)}});
  if (c.expertBias)
    clause("gate_up_bias", {{"%b13", tensorType({E, 2 * M}, dt)}});
  clause("down", {{"%w2", tensorType({E, M, H}, dt)}});
  if (c.expertBias)
    clause("down_bias", {{"%b2", tensorType({E, H}, dt)}});
  if (S > 0) {
    if (c.sharedFused)
      clause("shared_gate_up", {{"%sw13", tensorType({H, 2 * S}, dt)}});
    else
      clause("shared_gate_up",
             {{"%sw1", tensorType({H, S}, dt)}, {"%sw3", tensorType({H, S}, dt)}});
    clause("shared_down", {{"%sw2", tensorType({S, H}, dt)}});
    if (c.sharedGate)
      clause("shared_gate", {{"%swg", tensorType({H, 1}, dt)}});
  }
  std::ostringstream os;
  os << "func.func @moe_block(";
  for (size_t i = 0; i < args.size(); ++i)
    os << (i ? ", " : "") << args[i].first << ": " << args[i].second;
  std::string out = tensorType({T, H}, dt);
  os << ") -> " << out << " {\n  %y = moe.block %x " << clauses.str();
  os << "top " << c.k;
  if (c.route.sigmoid)
    os << " scoring sigmoid";
  if (c.route.softmaxThenTopk)
    os << " order softmax_then_topk";
  if (c.route.renormalize)
    os << " renormalize";
  if (c.route.nullExperts)
    os << " null_experts " << c.route.nullExperts;
  if (c.route.takeUntilNull)
    os << " null_policy take_until_null";
  if (c.nullFraction >= 0)
    os << " null_fraction " << std::to_string(c.nullFraction); // a float literal, even for 1
  if (c.route.groups > 1)
    os << " groups " << c.route.groups << " topk_groups " << c.route.topkGroups
       << (c.route.groupScoreTop2Sum ? " group_score top2_sum" : "");
  if (c.route.routedScaling != 1.0)
    os << " routed_scaling " << std::to_string(c.route.routedScaling); // k * 0.75: exact
  if (c.packStrategy)
    os << " pack_strategy " << c.packStrategy;
  if (c.scatter)
    os << " combine_strategy scatter";
  if (c.preweight)
    os << " preweight";
  if (c.weightInput)
    os << " weight_input";
  if (c.gptOss)
    os << " activation gpt_oss";
  if (c.interleaved)
    os << " interleaved";
  if (!c.family.empty())
    os << " family " << c.family;
  os << " : " << out << "\n  return %y : " << out << "\n}\n";
  return os.str();
}

reference::BlockShape differential::shapeOf(const BlockCase &c) {
  reference::BlockShape shape{c.tokens, c.hidden, c.mlp, c.experts, c.shared, c.fusedW13,
                              c.sharedFused};
  shape.gptOss = c.gptOss;
  shape.interleaved = c.interleaved;
  shape.expertBias = c.expertBias;
  shape.weightInput = c.weightInput;
  shape.sharedGate = c.sharedGate && c.shared > 0;
  return shape;
}

bool differential::familyCase(const std::string &family, int64_t tokens, int64_t hidden,
                              int64_t mlp, int64_t experts, int64_t k, BlockCase &c) {
  std::optional<HfLayer> form = familyLayer(family, hidden, mlp, experts, k);
  if (!form)
    return false;
  c = BlockCase();
  c.name = family;
  c.family = family;
  c.tokens = tokens, c.hidden = hidden, c.mlp = mlp, c.experts = experts, c.k = k;
  c.routerWeight = true;
  c.route.sigmoid = form->sigmoid;
  c.route.softmaxThenTopk = form->softmaxThenTopk;
  c.route.renormalize = form->renormalize;
  c.route.groups = form->groups;
  c.route.topkGroups = form->topkGroups;
  c.route.groupScoreTop2Sum = form->top2Sum;
  c.route.routedScaling = form->routedScaling;
  c.selectionBias = form->selectionBias;
  c.routerBias = form->routerBias;
  c.expertBias = form->expertBias;
  c.gptOss = form->gptOss;
  c.interleaved = form->interleaved;
  c.weightInput = form->weightInput;
  c.sharedGate = form->sharedGate;
  c.shared = form->shared;
  // Beyond the released models' knobs, so that the small cases exercise
  // them: DeepSeek's group-limited selection (V2 by max, scaled by 16; V3
  // by top-2 sum) where the experts make groups of two, and a narrower
  // Qwen2 shared expert.
  bool deepseek = family == "deepseek_v2" || family == "deepseek_v3";
  if (deepseek && experts % 4 == 0) {
    c.route.groups = 4;
    c.route.topkGroups = 2;
    c.route.groupScoreTop2Sum = family == "deepseek_v3";
    c.k = std::min(c.k, c.route.topkGroups * (experts / c.route.groups));
  }
  if (family == "deepseek_v2")
    c.route.routedScaling = 16.0;
  if (family == "qwen2_moe")
    c.shared = 2 * mlp;
  return true;
}

std::string differential::describe(const BlockCase &c) {
  std::ostringstream os;
  os << "T=" << c.tokens << (c.dynamicTokens ? "(dynamic)" : "") << " H=" << c.hidden
     << " M=" << c.mlp << " E=" << c.experts << " k=" << c.k << " S=" << c.shared
     << (c.bf16 ? " bf16" : " f32") << (c.fusedW13 ? " w13" : " w1,w3")
     << (c.shared && !c.sharedFused ? " sw1,sw3" : "") << (c.routerWeight ? " router" : " logits")
     << (c.preweight ? " preweight" : "") << (c.scatter ? " scatter" : "")
     << (c.route.sigmoid ? " sigmoid" : "") << (c.route.softmaxThenTopk ? " softmax_then_topk" : "")
     << (c.route.renormalize ? " renormalize" : "");
  if (c.route.nullExperts)
    os << " null_experts=" << c.route.nullExperts
       << (c.route.takeUntilNull ? " take_until_null" : "");
  if (c.nullFraction >= 0)
    os << " null_fraction=" << c.nullFraction;
  if (c.hotExpert >= 0)
    os << " hot=" << c.hotExpert;
  if (c.nullsWin)
    os << " nulls_win";
  if (c.packStrategy)
    os << " pack=" << c.packStrategy;
  if (!c.passes.empty())
    os << " passes=" << c.passes;
  if (!c.quant.empty())
    os << " quant=" << c.quant << (c.perExpertScales ? "/expert" : "/channel");
  if (!c.toLLVM.empty())
    os << " moe-to-llvm{" << c.toLLVM << "}";
  if (!c.mesh.empty())
    os << " mesh=" << c.mesh << " ep-dispatch=" << c.epDispatch;
  if (c.routingGrad)
    os << " routing-grad";
  if (!c.family.empty())
    os << " family=" << c.family;
  if (c.route.groups > 1)
    os << " groups=" << c.route.groups << "/" << c.route.topkGroups
       << (c.route.groupScoreTop2Sum ? " top2_sum" : " max");
  if (c.route.routedScaling != 1.0)
    os << " routed_scaling=" << c.route.routedScaling;
  os << (c.routerBias ? " router_bias" : "") << (c.selectionBias ? " selection_bias" : "")
     << (c.expertBias ? " expert_bias" : "") << (c.gptOss ? " gpt_oss" : "")
     << (c.interleaved ? " interleaved" : "") << (c.weightInput ? " weight_input" : "")
     << (c.sharedGate ? " shared_gate" : "");
  return os.str();
}

Tensor differential::randomTensor(std::mt19937_64 &rng, DType dtype, std::vector<int64_t> shape,
                                  float scale, float boostColumnFrom, float boost) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Tensor t{Buffer(dtype, shape), {}};
  int64_t n = t.buffer.numElements();
  int64_t columns = shape.back();
  t.values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    float v = normal(rng) * scale;
    if (boostColumnFrom >= 0 && i % columns >= boostColumnFrom)
      v += boost;
    if (dtype == DType::BF16) {
      t.buffer.as<uint16_t>()[i] = f32ToBf16(v);
      v = bf16ToF32(t.buffer.as<uint16_t>()[i]);
    } else {
      t.buffer.as<float>()[i] = v;
    }
    t.values[i] = v;
  }
  return t;
}

Inputs differential::makeInputs(const BlockCase &c, std::mt19937_64 &rng) {
  DType dt = c.bf16 ? DType::BF16 : DType::F32;
  int64_t T = c.tokens, H = c.hidden, M = c.mlp, E = c.experts, S = c.shared,
          C = E + c.route.nullExperts;

  Inputs in;
  std::vector<Tensor> &args = in.args;
  reference::BlockWeights &w = in.w;
  args.push_back(randomTensor(rng, dt, {T, H}, 1.0f));
  if (c.routerWeight) {
    args.push_back(randomTensor(rng, dt, {H, C}, 1.0f / std::sqrt(float(H))));
  } else {
    float from = c.nullsWin ? float(E) : c.hotExpert >= 0 ? float(c.hotExpert) : -1;
    Tensor logits = randomTensor(rng, DType::F32, {T, C}, 1.0f, from, 20.0f);
    if (c.hotExpert >= 0) // boost only the hot column, not the ones after it
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = c.hotExpert + 1; j < C; ++j) {
          logits.values[t * C + j] -= 20.0f;
          logits.buffer.as<float>()[t * C + j] = logits.values[t * C + j];
        }
    args.push_back(std::move(logits));
  }
  in.weightOf = {nullptr, nullptr};
  // Arguments outside BlockWeights, in program()'s order.
  auto other = [&](Tensor t) {
    args.push_back(std::move(t));
    in.weightOf.push_back(nullptr);
    return int(args.size()) - 1;
  };
  if (c.routerBias)
    in.routerBiasArg = other(randomTensor(rng, dt, {C}, 0.5f));
  if (c.selectionBias) // e_score_correction_bias: small, either sign
    in.selectionBiasArg = other(randomTensor(rng, DType::F32, {C}, 0.1f));
  if (c.nullFraction >= 0) {
    Tensor draws{Buffer(DType::F32, {T, c.k}), {}};
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (int64_t i = 0; i < T * c.k; ++i)
      draws.values.push_back(draws.buffer.as<float>()[i] = uniform(rng));
    in.drawsArg = other(std::move(draws));
  }
  float wIn = 1.0f / std::sqrt(float(H)), wMid = 1.0f / std::sqrt(float(M));
  auto weight = [&](std::vector<int64_t> shape, float scale,
                    std::vector<float> reference::BlockWeights::*slot) {
    args.push_back(randomTensor(rng, dt, std::move(shape), scale));
    // Moved: at a real model's layer size a second float copy of every
    // weight would not fit (the weights' values are read from `w`).
    w.*slot = std::move(args.back().values);
    in.weightOf.push_back(slot);
  };
  if (c.fusedW13) {
    // GPT-OSS's activation: some gates and ups past its limit. Not in bf16:
    // its gradient jumps at the limit, and a value rounded to bf16 across
    // it (the backward reads the stored h) is a different gradient there.
    weight({E, H, 2 * M}, c.gptOss && !c.bf16 ? 4 * wIn : wIn, &reference::BlockWeights::w13);
  } else {
    weight({E, H, M}, wIn, &reference::BlockWeights::w1);
    weight({E, H, M}, wIn, &reference::BlockWeights::w3);
  }
  if (c.expertBias)
    weight({E, 2 * M}, 0.5f, &reference::BlockWeights::b13);
  weight({E, M, H}, wMid, &reference::BlockWeights::w2);
  if (c.expertBias)
    weight({E, H}, 0.5f, &reference::BlockWeights::b2);
  if (S > 0) {
    float sMid = 1.0f / std::sqrt(float(S));
    if (c.sharedFused) {
      weight({H, 2 * S}, wIn, &reference::BlockWeights::sw13);
    } else {
      weight({H, S}, wIn, &reference::BlockWeights::sw1);
      weight({H, S}, wIn, &reference::BlockWeights::sw3);
    }
    weight({S, H}, sMid, &reference::BlockWeights::sw2);
    if (c.sharedGate)
      weight({H, 1}, wIn, &reference::BlockWeights::swg);
  }
  return in;
}

std::vector<float> differential::logitsOf(const BlockCase &c, const std::vector<float> &x,
                                          const std::vector<float> &router,
                                          const std::vector<float> &routerBias) {
  int64_t C = c.experts + c.route.nullExperts;
  if (!c.routerWeight)
    return router;
  if (c.routerBias)
    return reference::routerLogits(x, router, routerBias, c.tokens, c.hidden, C);
  return reference::routerLogits(x, router, c.tokens, c.hidden, C);
}

reference::Routing differential::routeOf(const BlockCase &c, const Inputs &in) {
  return routeOf(c, in.args[0].values, in.args[1].values, in.valuesOf(in.drawsArg),
                 in.valuesOf(in.routerBiasArg), in.valuesOf(in.selectionBiasArg));
}

reference::Routing differential::routeOf(const BlockCase &c, const std::vector<float> &x,
                                         const std::vector<float> &router,
                                         const std::vector<float> &draws,
                                         const std::vector<float> &routerBias,
                                         const std::vector<float> &selectionBias) {
  reference::RouteConfig rc = c.route;
  rc.k = c.k;
  if (c.selectionBias)
    rc.selectionBias = reference::toF64(selectionBias);
  reference::Routing r =
      reference::route(logitsOf(c, x, router, routerBias), c.tokens,
                       c.experts + c.route.nullExperts, rc);
  if (c.nullFraction >= 0)
    r = reference::nullSlots(r, draws, c.tokens, c.k, c.experts, c.nullFraction,
                             c.route.takeUntilNull, c.route.renormalize);
  return r;
}

std::string differential::forwardPasses(const BlockCase &c) {
  std::string passes = c.passes;
  if (!c.quant.empty())
    passes = (passes.empty() ? "" : passes + ",") + "moe-quantize{mode=" + c.quant +
             " weight-scales=" + (c.perExpertScales ? "expert" : "channel") + "}";
  return passes;
}

std::string differential::lowering(const BlockCase &c, const std::string &passes) {
  if (passes.empty() && c.toLLVM.empty())
    return "";
  return (passes.empty() ? "" : passes + ",") + "moe-to-llvm{" + c.toLLVM + "}";
}

namespace {

std::string partitionPass(const BlockCase &c) {
  if (c.mesh.empty())
    return "";
  return "moe-partition{mesh=" + c.mesh + " ep-dispatch=" + c.epDispatch + "}";
}

std::string joinPipeline(const std::string &a, const std::string &b) {
  return a.empty() ? b : b.empty() ? a : a + "," + b;
}

/// Relative max error of `got` against `expected` (n elements), and where.
/// Relative to the largest |expected|, or to the largest term scale where
/// one is given and larger (see reference::blockTermScale()).
struct Comparison {
  double maxRef = 0, maxErr = 0, maxTermScale = 0;
  int64_t worst = 0;
  double relative() const { return maxErr / std::max({maxRef, maxTermScale, 1e-30}); }
};

Comparison compare(const Buffer &got, const std::vector<double> &expected) {
  Comparison c;
  for (int64_t i = 0; i < int64_t(expected.size()); ++i) {
    c.maxRef = std::max(c.maxRef, std::fabs(expected[i]));
    double err = std::fabs(got.at(i) - expected[i]);
    if (!(err <= c.maxErr)) { // NaN counts as the worst
      c.maxErr = std::isnan(err) ? INFINITY : err;
      c.worst = i;
    }
  }
  return c;
}

std::string mismatch(const std::string &what, const Comparison &cmp, const Buffer &got,
                     const std::vector<double> &expected, double tolerance) {
  std::ostringstream os;
  os << what << ": max |error| " << cmp.maxErr << " (relative " << cmp.relative()
     << ", tolerance " << tolerance << ") at element " << cmp.worst << ": got "
     << got.at(cmp.worst) << ", expected " << expected[cmp.worst] << "; max |expected| "
     << cmp.maxRef;
  if (cmp.maxTermScale > cmp.maxRef)
    os << ", largest term scale " << cmp.maxTermScale;
  return os.str();
}

} // namespace

int64_t differential::budgetBelowNone(const std::string &source, const std::string &prepare) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module || mlir::failed(lowerModule(*module, prepare)))
    return -1;
  auto fn = module->lookupSymbol<mlir::func::FuncOp>("moe_block_forward_backward");
  return fn ? mlir::moe::RematAnalysis(fn).cost({}).keptBytes - 1 : -1;
}

bool differential::compileAndRun(const std::string &source, const std::string &prepare,
                                 const std::string &entry, const std::string &pipeline,
                                 std::vector<Tensor> &args, std::vector<Buffer> &results,
                                 std::string &error) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  // Diagnostics become the error, with their locations in the source.
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler collect(&context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  auto fail = [&](const std::string &what) {
    error = what + (diagnostics.empty() ? "" : ":\n" + diagnostics);
    return false;
  };
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return fail("the program does not parse");
  if (!prepare.empty() && mlir::failed(lowerModule(*module, prepare)))
    return fail("'" + prepare + "' failed");
  auto sig = entrySignature(*module, entry, error);
  if (!sig)
    return false;
  std::optional<MeshLayout> layout = meshLayout(*module, sig->name);
  FunctionSignature full = layout ? layout->fullSignature(*sig) : *sig;
  std::vector<Buffer> inputs;
  for (Tensor &t : args)
    inputs.push_back(std::move(t.buffer));
  if (!full.checkInputs(inputs, error))
    return false;
  if (mlir::failed(lowerModule(*module, pipeline)))
    return fail("lowering with '" + (pipeline.empty() ? "moe-to-llvm" : pipeline) + "' failed");
  auto jit = JitProgram::create(*module, error);
  if (!jit)
    return false;
  if (!layout) {
    auto ran = jit->run(*sig, inputs, error);
    if (!ran)
      return false;
    results = std::move(*ran);
    return true;
  }
  auto local = localShardInputs(inputs, *layout, nullptr, error);
  if (!local)
    return false;
  std::vector<RankStats> ranks;
  auto ran = callSharded(*jit, *sig, *layout, *local, nullptr, std::chrono::seconds(60), ranks,
                         error);
  if (!ran)
    return false;
  results = std::move(*ran);
  return true;
}

namespace {

/// [gate | up] per row: w1 and w3 [n, H, M] as one [n, H, 2M].
std::vector<float> concatGateUp(const std::vector<float> &gate, const std::vector<float> &up,
                                int64_t rows, int64_t width) {
  std::vector<float> out;
  out.reserve(2 * gate.size());
  for (int64_t r = 0; r < rows; ++r) {
    out.insert(out.end(), gate.begin() + r * width, gate.begin() + (r + 1) * width);
    out.insert(out.end(), up.begin() + r * width, up.begin() + (r + 1) * width);
  }
  return out;
}

} // namespace

void differential::fuseGateUpAsQuantized(const BlockCase &c, reference::BlockShape &shape,
                                         reference::BlockWeights &w) {
  std::string passes = forwardPasses(c);
  // Grouped mode puts the shared expert among the routed ones (fusing
  // their gate and up), when there is one and the routed experts are plain
  // SwiGLU MLPs and the shared one ungated (else it leaves the block).
  bool grouped = passes.find("mode=grouped") != std::string::npos && shape.shared > 0 &&
                 !shape.gptOss && !shape.interleaved && !shape.expertBias && !shape.sharedGate;
  bool routed = grouped || passes.find("moe-fuse-w13") != std::string::npos;
  bool shared = grouped || (passes.find("moe-fuse-shared-expert") != std::string::npos &&
                            passes.find("mode=grouped") == std::string::npos);
  if (routed && !shape.fusedW13) {
    w.w13 = concatGateUp(w.w1, w.w3, shape.experts * shape.hidden, shape.mlp);
    w.w1.clear();
    w.w3.clear();
    shape.fusedW13 = true;
  }
  if (shared && shape.shared > 0 && !shape.sharedFused) {
    w.sw13 = concatGateUp(w.sw1, w.sw3, shape.hidden, shape.shared);
    w.sw1.clear();
    w.sw3.clear();
    shape.sharedFused = true;
  }
}

std::string differential::checkForward(const BlockCase &c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int64_t T = c.tokens, H = c.hidden;
  Inputs in = makeInputs(c, rng);
  std::vector<Tensor> &args = in.args;

  reference::Routing routing = routeOf(c, in);
  reference::BlockShape shape = shapeOf(c);
  std::vector<double> expected;
  if (c.quant.empty()) {
    expected = reference::block(args[0].values, routing, shape, in.w, c.k);
  } else {
    // moe-quantize scales the weights as it finds them: after a fusion
    // that concatenated gate and up, one scale per expert covers both.
    reference::BlockWeights w = in.w;
    if (c.perExpertScales)
      fuseGateUpAsQuantized(c, shape, w);
    expected = reference::blockInt8(args[0].values, routing, shape, w, c.k,
                                    {!c.perExpertScales, c.quant == "int8_routed"});
  }

  std::string source = program(c);
  std::string pipeline = lowering(c, forwardPasses(c));
  std::string context = "\nprogram:\n" + source + "prepare: " + partitionPass(c) +
                        "\npipeline: " + (pipeline.empty() ? "(moe-to-llvm)" : pipeline);
  std::vector<Buffer> results;
  std::string error;
  if (!compileAndRun(source, partitionPass(c), "moe_block", pipeline, args, results, error))
    return "compile or run failed: " + error + context;
  if (results.size() != 1 || results[0].shape() != std::vector<int64_t>{T, H})
    return "expected one " + std::to_string(T) + "x" + std::to_string(H) + " result" + context;

  Comparison cmp = compare(results[0], expected);
  // Each term of y carries a rounding of its own (in bf16 the activations
  // are rounded before the down projection, by a relative 2^-9 each); where
  // a token's terms cancel, y is much smaller than the error they leave
  // (seen: a bf16 gpt_oss block at H 1 whose terms' root-sum-square reached
  // 13.2 for a largest |y| of 2.44). The error is measured against the
  // terms' root-sum-square where that is the larger.
  if (c.quant.empty())
    for (double v : reference::blockTermScale(args[0].values, routing, shape, in.w, c.k))
      cmp.maxTermScale = std::max(cmp.maxTermScale, v);
  // int8: the sums are exact integers, but the activation the down
  // projection quantizes comes from an exp that is not libm's, and a value
  // on a rounding boundary moves its q by one.
  double tolerance = c.bf16 ? 2e-2 : !c.quant.empty() ? 2e-3 : 1e-5;
  if (cmp.maxRef == 0) { // all null, no shared expert: exactly zero
    if (cmp.maxErr != 0)
      return mismatch("y (expected all zero)", cmp, results[0], expected, 0) + context;
  } else if (!(cmp.relative() <= tolerance)) {
    return mismatch("y", cmp, results[0], expected, tolerance) + context;
  }
  return "";
}

ReferenceGradients differential::referenceGradients(const BlockCase &c, const Inputs &in) {
  int64_t C = c.experts + c.route.nullExperts;
  reference::RouteConfig rc = c.route;
  rc.k = c.k;
  const std::vector<float> &x = in.args[0].values, &router = in.args[1].values;
  if (c.selectionBias)
    rc.selectionBias = reference::toF64(in.valuesOf(in.selectionBiasArg));
  reference::Routing routing = routeOf(c, in);
  reference::BlockShape shape = shapeOf(c);
  std::vector<double> y = reference::block(x, routing, shape, in.w, c.k);
  reference::BlockGradients analytic =
      reference::blockBackward(x, routing, shape, in.w, c.k, reference::meanSquareCotangent(y));
  ReferenceGradients out;
  out.loss = reference::meanSquare(y);
  std::vector<double> routerGrad; // of the logits or the router weight
  std::vector<double> routerBiasGrad;
  if (c.routingGrad) {
    std::vector<double> dlogits = reference::routeBackward(
        reference::toF64(logitsOf(c, x, router, in.valuesOf(in.routerBiasArg))), c.tokens, C, rc,
        analytic.routingWeights);
    if (c.routerBias) { // logits = x @ router + bias: the bias sums the tokens
      routerBiasGrad.assign(C, 0.0);
      for (int64_t t = 0; t < c.tokens; ++t)
        for (int64_t j = 0; j < C; ++j)
          routerBiasGrad[j] += dlogits[t * C + j];
    }
    if (c.routerWeight)
      reference::routerBackward(x, router, c.tokens, c.hidden, C, dlogits, analytic.x,
                                routerGrad);
    else
      routerGrad = dlogits;
  }
  out.grads.push_back(analytic.x);
  out.argOf.push_back(0);
  if (c.routingGrad) {
    out.grads.push_back(routerGrad);
    out.argOf.push_back(1);
    if (c.routerBias) {
      out.grads.push_back(routerBiasGrad);
      out.argOf.push_back(in.routerBiasArg);
    }
  }
  for (size_t arg = 2; arg < in.weightOf.size(); ++arg)
    if (in.weightOf[arg]) {
      out.grads.push_back(analytic.of(in.weightOf[arg]));
      out.argOf.push_back(arg);
    }
  return out;
}

std::string differential::backwardPass(const BlockCase &c) {
  return c.routingGrad ? "moe-generate-backward{routing-grad=true}" : "moe-generate-backward";
}

std::string differential::checkBackward(const BlockCase &c, const std::string &policy,
                                        uint64_t seed) {
  std::mt19937_64 rng(seed);
  Inputs in = makeInputs(c, rng);
  ReferenceGradients expected = referenceGradients(c, in);

  std::string source = program(c);
  std::string backward = joinPipeline(partitionPass(c), backwardPass(c));
  std::string remat = policy;
  if (remat == "auto") {
    int64_t budget = budgetBelowNone(source, backward);
    if (budget < 0)
      return "cannot size an activation budget for remat auto";
    remat += " activation-budget=" + std::to_string(budget);
  }
  std::string prepare = backward + ",func.func(moe-remat{policy=" + remat + "})";
  std::string pipeline = "moe-to-llvm{" + c.toLLVM + "}";
  std::string context = "\nprogram:\n" + source + "prepare: " + prepare + "\npipeline: " + pipeline;
  std::vector<Buffer> results;
  std::string error;
  if (!compileAndRun(source, prepare, "moe_block_forward_backward", pipeline, in.args, results,
                     error))
    return "compile or run failed: " + error + context;
  if (results.size() != 1 + expected.grads.size())
    return "expected the loss and " + std::to_string(expected.grads.size()) + " gradients, got " +
           std::to_string(results.size()) + " results" + context;

  // bf16 stores every activation and gradient rounded to 8 bits of
  // mantissa (products accumulate in f32): percent-level agreement.
  double lossTolerance = c.bf16 ? 2e-2 : 1e-5, gradTolerance = c.bf16 ? 4e-2 : 1e-4;
  double loss = results[0].at(0);
  if (!(std::fabs(loss - expected.loss) <= lossTolerance * std::max(1.0, expected.loss))) {
    std::ostringstream os;
    os << "loss " << loss << ", expected " << expected.loss;
    return os.str() + context;
  }
  for (size_t g = 0; g < expected.grads.size(); ++g) {
    const Buffer &grad = results[1 + g];
    const std::vector<double> &exact = expected.grads[g];
    std::string what = "d loss / d argument " + std::to_string(expected.argOf[g]);
    if (grad.numElements() != int64_t(exact.size()))
      return what + ": " + std::to_string(grad.numElements()) + " elements, expected " +
             std::to_string(exact.size()) + context;
    // Relative to the largest gradient element: small elements carry the
    // absolute rounding error of the large ones they are summed with. No
    // absolute floor: a saturated router (hot expert, a logit 20 above the
    // rest) has logit gradients near e^-20, which moe.route_grad computes
    // without cancellation (1 - p of the top column from the other terms).
    Comparison cmp = compare(grad, exact);
    double scale = cmp.maxRef;
    for (int64_t i = 0; i < grad.numElements(); ++i)
      scale = std::max(scale, std::fabs(grad.at(i)));
    if (!(cmp.maxErr <= gradTolerance * scale))
      return mismatch(what, cmp, grad, exact, gradTolerance) + context;
  }
  return "";
}

int64_t RandomChoices::pick(int64_t lo, int64_t hi) {
  return lo + int64_t(rng() % uint64_t(hi - lo + 1));
}

int64_t ByteChoices::pick(int64_t lo, int64_t hi) {
  uint64_t range = uint64_t(hi - lo), value = 0;
  // As many bytes as the range needs, so that every value is reachable.
  for (uint64_t r = range; r && next < size; r >>= 8)
    value = (value << 8) | data[next++];
  return lo + int64_t(value % (range + 1));
}

namespace {

/// A divisor of `n` among `options` (1 if none divides).
int64_t divisorOf(Choices &choices, int64_t n, std::vector<int64_t> options) {
  options.erase(std::remove_if(options.begin(), options.end(),
                               [&](int64_t d) { return n % d != 0; }),
                options.end());
  return options.empty() ? 1 : options[choices.pick(0, int64_t(options.size()) - 1)];
}

} // namespace

BlockCase differential::randomCase(Choices &choices, bool backward) {
  BlockCase c;
  c.name = "random";
  auto pick = [&](int64_t lo, int64_t hi) { return choices.pick(lo, hi); };
  c.experts = pick(1, 24);
  c.route.nullExperts = choices.coin() ? pick(1, 4) : 0;
  c.k = pick(1, std::min<int64_t>(8, c.experts + c.route.nullExperts));
  c.tokens = pick(1, 64);
  c.hidden = pick(1, 48);
  c.mlp = pick(1, 48);
  c.shared = choices.coin() ? pick(1, 40) : 0;
  c.bf16 = pick(0, 3) == 0;
  c.dynamicTokens = choices.coin();
  c.fusedW13 = choices.coin();
  c.sharedFused = choices.coin();
  c.routerWeight = choices.coin();
  c.preweight = choices.coin();
  c.scatter = choices.coin();
  c.route.sigmoid = choices.coin();
  c.route.softmaxThenTopk = choices.coin();
  c.route.renormalize = choices.coin();
  c.route.takeUntilNull = c.route.nullExperts > 0 && choices.coin();
  if (pick(0, 3) == 0)
    c.nullFraction = pick(0, 4) / 4.0;
  if (pick(0, 5) == 0)
    c.hotExpert = pick(0, c.experts - 1);
  else if (c.route.nullExperts && pick(0, 7) == 0)
    c.nullsWin = true;
  if (pick(0, 3) == 0)
    {
    static const char *const strategies[] = {"argsort", "tuple_sort", "counting"};
    c.packStrategy = strategies[pick(0, 2)];
  }
  // The open models' variants (the routing ones need selection by scores,
  // without null experts).
  if (pick(0, 2) == 0) {
    c.route.nullExperts = 0;
    c.route.takeUntilNull = false;
    c.nullsWin = false;
    c.route.softmaxThenTopk = true;
    c.selectionBias = choices.coin();
    int64_t groups = divisorOf(choices, c.experts, {1, 2, 3, 4});
    if (groups > 1 || !c.selectionBias) {
      c.route.groups = groups;
      c.route.topkGroups = groups > 1 ? pick(1, groups) : 1;
      c.route.groupScoreTop2Sum = groups > 1 && c.experts / groups >= 2 && choices.coin();
    }
    c.k = std::min(c.k, c.route.topkGroups * (c.experts / c.route.groups));
  }
  // (Refused with null draws that renormalise: that would undo the scaling.)
  if (choices.coin() && !(c.nullFraction >= 0 && c.route.renormalize))
    c.route.routedScaling = pick(1, 4) * 0.75;
  c.routerBias = c.routerWeight && choices.coin();
  c.gptOss = pick(0, 2) == 0;
  c.expertBias = c.fusedW13 && !c.preweight && pick(0, 2) == 0;
  c.interleaved = c.fusedW13 && pick(0, 2) == 0;
  c.weightInput = !c.preweight && pick(0, 3) == 0;
  c.sharedGate = c.shared > 0 && choices.coin();
  static const char *const pipelines[] = {"", "moe-expand-block,moe-fuse-w13",
                                          "moe-expand-block,moe-fuse-shared-expert",
                                          "moe-fuse-shared-expert{mode=grouped}"};
  c.passes = pipelines[pick(0, 3)];
  switch (pick(0, 5)) {
  case 0:
    c.toLLVM = "gmm-strategy=reference";
    break;
  case 1: { // tiles small enough for every remainder, and valid: the
            // register tile fits the host's register file (32 vectors with
            // AVX-512; 8 with AVX2: up to 6 rows of one vector, 2 of two), nv
            // is 1 or even (a fused SwiGLU splits the one vector's lanes, or
            // gives gate and up whole vectors), nc and mc are multiples of the
            // tile
    int64_t nv = pick(1, 2);
    using mlir::moe::strategy::GmmTiling, mlir::moe::strategy::MachineModel;
    int64_t mr = pick(1, GmmTiling::maxRows(nv, MachineModel::target().vectorRegisters));
    c.toLLVM = "gmm-tiling={mr=" + std::to_string(mr) + ",nv=" + std::to_string(nv) +
               ",kc=" + std::to_string(pick(1, 64)) + ",nc=" + std::to_string(32 * pick(1, 4)) +
               ",mc=" + std::to_string(mr * pick(1, 4)) + "}";
    break;
  }
  case 2:
    c.toLLVM = "gmm-strategy=microkernel-amx"; // its run-time fallback without AMX
    break;
  default:
    break; // the default microkernel: the host's best
  }
  // int8 after grouped shared fusion with S > M quantizes each M-wide
  // slice of the shared expert (its own group) with its own activation
  // scale: a finer quantization than the reference's, by design.
  bool slicedShared = c.passes.find("mode=grouped") != std::string::npos && c.shared > c.mlp;
  if (!backward && !c.bf16 && !slicedShared && pick(0, 3) == 0) {
    static const char *const modes[] = {"int8", "int8_routed", "fake_int8"};
    c.quant = modes[pick(0, 2)];
    // Refused with a diagnostic: int8_routed cannot keep a shared expert
    // that the grouped fusion made groups of the routed gmm in float.
    if (c.quant == "int8_routed" && c.shared > 0 &&
        c.passes.find("mode=grouped") != std::string::npos)
      c.quant = "int8";
    c.perExpertScales = choices.coin();
  }
  if (backward) {
    // Refused with a diagnostic (no adjoint rule yet): the gradient through
    // null draws' renormalisation.
    bool refused = c.nullFraction >= 0 && c.route.renormalize;
    c.routingGrad = !c.bf16 && !refused && choices.coin();
    // The gradient tests' tolerances hold for one-pass-of-rounding sizes.
    c.tokens = std::min<int64_t>(c.tokens, 32);
  }
  // A mesh: the program is partitioned first (moe-partition needs the
  // moe.block whole, so its fusions run after). int8 on a mesh is refused.
  if (c.quant.empty() && pick(0, 2) == 0) {
    int64_t expert = c.experts > 1 ? divisorOf(choices, c.experts, {1, 2, 3, 4}) : 1;
    static const char *const dispatches[] = {"dense", "compact", "ring", "a2a"};
    c.epDispatch = expert > 1 ? dispatches[pick(0, 3)] : "compact";
    // Static tokens, split evenly: over data, and over expert too for ring
    // and a2a.
    c.dynamicTokens = false;
    bool tokensOverExpert = c.epDispatch == "ring" || c.epDispatch == "a2a";
    int64_t data = pick(1, 2);
    int64_t parts = data * (tokensOverExpert ? expert : 1);
    c.tokens = std::max<int64_t>(1, c.tokens / parts) * parts;
    if (data > 1 || expert > 1)
      c.mesh = data > 1 && expert > 1 ? "data=" + std::to_string(data) +
                                            ",expert=" + std::to_string(expert)
               : data > 1             ? "data=" + std::to_string(data)
                                      : "expert=" + std::to_string(expert);
  }
  return c;
}

std::string differential::randomRematPolicy(Choices &choices, const BlockCase &c) {
  // auto weighs bytes: static shapes only.
  static const char *const policies[] = {"none", "expert_mlp", "combine", "auto"};
  return policies[choices.pick(0, c.dynamicTokens ? 2 : 3)];
}
