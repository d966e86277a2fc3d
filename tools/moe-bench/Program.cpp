//===- Program.cpp - the moe programs moe-bench compiles -------------------===//

#include "Program.h"

#include <sstream>
#include <vector>

using namespace moebench;

namespace {
std::string tensor(std::initializer_list<int64_t> shape, const std::string &element) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

struct Types {
  std::string x, logits, draws, ids, w, w13, w1, w2, sw13, sw1, sw2, rows, act, d, perm, sizes, sortedW;
  std::string sb, b13, b2, swg;
  Types(const BlockConfig &c) {
    std::string e = c.element();
    int64_t T = c.tokens, H = c.hidden, M = c.mlp, E = c.experts, K = c.topk, S = c.shared;
    int64_t R = T * K;
    x = tensor({T, H}, e);
    logits = tensor({T, E}, "f32");
    draws = tensor({T, K}, "f32");
    ids = tensor({T, K}, "i32");
    w = tensor({T, K}, "f32");
    w13 = tensor({E, H, 2 * M}, e);
    w1 = tensor({E, H, M}, e);
    w2 = tensor({E, M, H}, e);
    sw13 = tensor({H, 2 * S}, e);
    sw1 = tensor({H, S}, e);
    sw2 = tensor({S, H}, e);
    rows = tensor({R, H}, e);
    act = tensor({R, M}, e);
    d = tensor({R, H}, e);
    perm = tensor({R}, "i32");
    sizes = tensor({E}, "i32");
    sortedW = tensor({R}, "f32");
    sb = tensor({E}, "f32");
    b13 = tensor({E, 2 * M}, e);
    b2 = tensor({E, H}, e);
    swg = tensor({H, 1}, e);
  }
};

/// "%w13: T" or "%w1: T, %w3: T" (and the shared ones), as arguments.
std::string expertArgs(const BlockConfig &c, const Types &t) {
  std::string s = c.fusedW13() ? "%w13: " + t.w13 : "%w1: " + t.w1 + ", %w3: " + t.w1;
  if (c.layer.expertBias)
    s += ", %b13: " + t.b13;
  s += ", %w2: " + t.w2;
  if (c.layer.expertBias)
    s += ", %b2: " + t.b2;
  return s;
}
std::string sharedArgs(const BlockConfig &c, const Types &t) {
  if (!c.shared)
    return "";
  std::string s = c.sharedFused ? ", %sw13: " + t.sw13 : ", %sw1: " + t.sw1 + ", %sw3: " + t.sw1;
  s += ", %sw2: " + t.sw2;
  if (c.layer.sharedGate)
    s += ", %swg: " + t.swg;
  return s;
}

/// Gate/up gmm(s) and SwiGLU (then the routing weight, with preweight) from
/// `rows`; returns the activation's name.
std::string upPath(std::ostream &os, const BlockConfig &c, const Types &t, const std::string &rows) {
  if (c.fusedW13()) {
    os << "  %h = moe.gmm " << rows << ", %w13, %sizes : " << t.rows << ", " << t.w13 << ", "
       << t.sizes << "\n";
    os << "  %a0 = moe.swiglu %h : " << tensor({c.tokens * c.topk, 2 * c.mlp}, c.element())
       << "\n";
  } else {
    for (const char *name : {"g", "u"})
      os << "  %" << name << " = moe.gmm " << rows << ", %w" << (name[0] == 'g' ? "1" : "3")
         << ", %sizes : " << t.rows << ", " << t.w1 << ", " << t.sizes << "\n";
    os << "  %a0 = moe.swiglu %g, %u : " << t.act << ", " << t.act << "\n";
  }
  if (!c.preweight())
    return "%a0";
  os << "  %a = moe.scale_rows %a0, %sw : " << t.act << ", " << t.sortedW << "\n";
  return "%a";
}

/// `v` as an MLIR float literal that reads back as the same double.
std::string floatLiteral(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

/// The family's routing attributes, after `top K`.
std::string familyRouting(const BlockConfig &c) {
  std::string s;
  if (c.layer.sigmoid)
    s += " scoring sigmoid";
  if (c.layer.softmaxThenTopk)
    s += " order softmax_then_topk";
  return s;
}
std::string familySelection(const BlockConfig &c) {
  std::string s;
  if (c.layer.groups > 1)
    s += " groups " + std::to_string(c.layer.groups) + " topk_groups " + std::to_string(c.layer.topkGroups) +
         (c.layer.top2Sum ? " group_score top2_sum" : "");
  if (c.layer.routedScaling != 1.0)
    s += " routed_scaling " + floatLiteral(c.layer.routedScaling);
  return s;
}

/// The routing attributes: renormalisation and benchmark null routing.
std::string routingAttrs(const BlockConfig &c) {
  std::string s = familyRouting(c);
  if (c.renormalize || c.layer.renormalize)
    s += " renormalize";
  if (c.nullRouting()) {
    if (c.nullMode != mlir::moe::NullPolicy::independent)
      s += " null_policy " + mlir::moe::kNullPolicyChoices.name(c.nullMode).str();
    s += " null_fraction " + std::to_string(c.nullFraction); // a float literal
  }
  return s + familySelection(c);
}

std::string combineOp(const BlockConfig &c, const Types &t, const std::string &d) {
  return "  %y = moe.combine " + d + ", %perm, %w" + (c.scatter() ? " strategy scatter" : "") +
         (c.preweight() ? " preweighted" : "") + " : " + t.d + ", " + t.perm + ", " + t.w + "\n";
}
} // namespace

std::string moebench::applyFamily(BlockConfig &c, const std::string &family, int64_t groups,
                                  int64_t topkGroups, double routedScaling) {
  std::optional<moec::HfLayer> form =
      moec::familyLayer(family, c.hidden, c.mlp, c.experts, c.topk);
  if (!form)
    return "--family '" + family + "' is not a family";
  moec::HfLayer &l = c.layer = *form;
  if (family == "deepseek_v2" || family == "deepseek_v3") {
    if (groups > 0) {
      l.groups = groups;
      l.topkGroups = l.groups > 1 ? l.groups / 2 : 1;
    }
    if (topkGroups > 0)
      l.topkGroups = topkGroups;
    l.top2Sum = family == "deepseek_v3" && l.groups > 1;
    if (routedScaling > 0)
      l.routedScaling = routedScaling;
  } else if (groups > 0 || topkGroups > 0 || routedScaling > 0) {
    return "--groups, --topk-groups and --routed-scaling are DeepSeek's: --family " + family +
           " has none";
  }
  return useLayer(c, l, "--family " + family);
}

std::string moebench::useLayer(BlockConfig &c, const moec::HfLayer &l, const std::string &what) {
  c.layer = l;
  if (l.groups > 1 && (c.experts % l.groups || l.topkGroups < 1 || l.topkGroups > l.groups ||
                       c.topk > l.topkGroups * (c.experts / l.groups) ||
                       (l.top2Sum && c.experts / l.groups < 2)))
    return what + ": " + std::to_string(l.groups) + " groups keeping " +
           std::to_string(l.topkGroups) + " do not fit " + std::to_string(c.experts) +
           " experts and top-" + std::to_string(c.topk);
  if (c.nullRouting() && l.renormalize && !c.renormalize)
    return what + " renormalises its routing weights, and with null routing "
           "the block renormalises the real weights after the nulling too: give "
           "--renormalize-real-after-null to say so";
  if (c.nullRouting() && l.renormalize && l.routedScaling != 1.0)
    return what + " renormalises and then scales its routing weights (" +
           floatLiteral(l.routedScaling) +
           "): null routing's renormalisation after the nulling would undo the scaling";
  if (c.shared == 0) // the family's shared expert, as its checkpoints have it
    c.shared = l.shared;
  else if (l.shared == 0)
    return what + " has no shared expert: drop --shared-expert-dim";
  if ((l.expertBias || l.interleaved) && c.impl != Impl::fusedW13 && c.impl != Impl::scatter)
    return what + " keeps gate and up in one interleaved weight with its biases: "
           "--impl fused_w13 or scatter";
  if (l.weightInput && c.preweight())
    return what + " weights the experts' input: --impl preweight does not apply";
  return "";
}

std::string moebench::blockProgram(const BlockConfig &c) {
  Types t(c);
  std::ostringstream os;
  os << "func.func @moe_block(%x: " << t.x << ", %logits: " << t.logits << ", "
     << (c.layer.selectionBias ? "%sb: " + t.sb + ", " : "")
     << (c.nullRouting() ? "%draws: " + t.draws + ", " : "") << expertArgs(c, t)
     << sharedArgs(c, t) << ") -> " << t.x << " {\n";
  os << "  %y = moe.block %x logits(%logits : " << t.logits << ") ";
  if (c.layer.selectionBias)
    os << "selection_bias(%sb : " << t.sb << ") ";
  if (c.nullRouting())
    os << "null_draws(%draws : " << t.draws << ") ";
  if (c.fusedW13())
    os << "gate_up(%w13 : " << t.w13 << ") ";
  else
    os << "gate_up(%w1, %w3 : " << t.w1 << ", " << t.w1 << ") ";
  if (c.layer.expertBias)
    os << "gate_up_bias(%b13 : " << t.b13 << ") ";
  os << "down(%w2 : " << t.w2 << ")\n      ";
  if (c.layer.expertBias)
    os << "down_bias(%b2 : " << t.b2 << ") ";
  if (c.shared) {
    if (c.sharedFused)
      os << "shared_gate_up(%sw13 : " << t.sw13 << ") ";
    else
      os << "shared_gate_up(%sw1, %sw3 : " << t.sw1 << ", " << t.sw1 << ") ";
    os << "shared_down(%sw2 : " << t.sw2 << ") ";
    if (c.layer.sharedGate)
      os << "shared_gate(%swg : " << t.swg << ") ";
  }
  os << "top " << c.topk << routingAttrs(c) << " pack_strategy "
     << mlir::moe::kPackStrategyChoices.name(c.packStrategy).str();
  if (c.scatter())
    os << " combine_strategy scatter";
  if (c.preweight())
    os << " preweight";
  if (c.layer.weightInput)
    os << " weight_input";
  if (c.layer.gptOss)
    os << " activation gpt_oss";
  if (c.layer.interleaved)
    os << " interleaved";
  if (!c.layer.family.empty())
    os << " family " << c.layer.family;
  os << " : " << t.x << "\n  return %y : " << t.x << "\n}\n";
  return os.str();
}

std::string moebench::routeProgram(const BlockConfig &c) {
  Types t(c);
  std::ostringstream os;
  os << "func.func @route(%logits: " << t.logits << (c.layer.selectionBias ? ", %sb: " + t.sb : "")
     << (c.nullRouting() ? ", %draws: " + t.draws : "") << ") -> (" << t.ids << ", " << t.w
     << ") {\n"
     << "  %ids0, %w0 = moe.route %logits "
     << (c.layer.selectionBias ? "selection_bias(%sb : " + t.sb + ") " : "") << "top " << c.topk
     << familyRouting(c) << (c.renormalize || c.layer.renormalize ? " renormalize" : "")
     << familySelection(c) << " : " << t.logits << "\n";
  if (c.nullRouting())
    os << "  %ids, %w = moe.null_slots %ids0, %w0, %draws fraction "
       << std::to_string(c.nullFraction) << " experts " << c.experts << " policy "
       << mlir::moe::kNullPolicyChoices.name(c.nullMode).str()
       << (c.renormalize ? " renormalize" : "") << " : " << t.ids << ", " << t.w << ", "
       << t.draws << "\n"
       << "  return %ids, %w : " << t.ids << ", " << t.w << "\n}\n";
  else
    os << "  return %ids0, %w0 : " << t.ids << ", " << t.w << "\n}\n";
  return os.str();
}

std::string moebench::stageProgram(const BlockConfig &c) {
  Types t(c);
  std::string e = c.element();
  std::ostringstream os;
  std::string packResults = "(" + t.sortedW + ", " + t.perm + ", " + t.sizes + ")";
  os << "func.func @pack(%x: " << t.x << ", %ids: " << t.ids << ", %w: " << t.w << ") -> "
     << packResults << " {\n"
     << "  %rows, %sw, %perm, %sizes = moe.pack %x, %ids, %w experts " << c.experts
     << " strategy " << mlir::moe::kPackStrategyChoices.name(c.packStrategy).str() << " : " << t.x << ", "
     << t.ids << ", " << t.w << "\n"
     << "  return %sw, %perm, %sizes : " << t.sortedW << ", " << t.perm << ", " << t.sizes
     << "\n}\n";

  // up: the gather, the gate/up gmm(s), SwiGLU (and the routing weight).
  std::string gateUpArgs = c.fusedW13() ? "%w13: " + t.w13 : "%w1: " + t.w1 + ", %w3: " + t.w1;
  os << "func.func @up(%x: " << t.x << ", %perm: " << t.perm << ", %sizes: " << t.sizes << ", "
     << gateUpArgs << (c.preweight() ? ", %sw: " + t.sortedW : "") << ") -> " << t.act
     << " {\n"
     << "  %rows = moe.gather_rows %x, %perm top " << c.topk << " : " << t.x << ", " << t.perm
     << "\n";
  std::string act = upPath(os, c, t, "%rows");
  os << "  return " << act << " : " << t.act << "\n}\n";

  os << "func.func @down(%a: " << t.act << ", %sizes: " << t.sizes << ", %w2: " << t.w2
     << ") -> " << t.d << " {\n"
     << "  %d = moe.gmm %a, %w2, %sizes : " << t.act << ", " << t.w2 << ", " << t.sizes << "\n"
     << "  return %d : " << t.d << "\n}\n";

  os << "func.func @combine(%d: " << t.d << ", %perm: " << t.perm << ", %w: " << t.w << ") -> "
     << t.x << " {\n"
     << combineOp(c, t, "%d") << "  return %y : " << t.x << "\n}\n";

  os << "func.func @gather(%x: " << t.x << ", %perm: " << t.perm << ") -> " << t.rows << " {\n"
     << "  %rows = moe.gather_rows %x, %perm top " << c.topk << " : " << t.x << ", " << t.perm
     << "\n  return %rows : " << t.rows << "\n}\n";

  // prequeue: rows already sorted and gathered; gmms, activation, combine.
  os << "func.func @prequeued(%rows: " << t.rows << ", %perm: " << t.perm << ", %sizes: "
     << t.sizes << ", %w: " << t.w << ", %sw: " << t.sortedW << ", " << expertArgs(c, t)
     << ") -> " << t.x << " {\n";
  act = upPath(os, c, t, "%rows");
  os << "  %d = moe.gmm " << act << ", %w2, %sizes : " << t.act << ", " << t.w2 << ", " << t.sizes
     << "\n"
     << combineOp(c, t, "%d") << "  return %y : " << t.x << "\n}\n";
  return os.str();
}
