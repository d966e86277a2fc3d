//===- GmmKernelHarness.cpp - one gmm kernel kind, compiled alone ----------===//

#include "GmmKernelHarness.h"

#include "compiler/Compiler.h"
#include "codegen/kernels/GmmKernel.h"
#include "strategy/GmmTiling.h"
#include "strategy/TargetCpu.h"
#include "tooling/Peak.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace moec;
using namespace moec::kernels;

std::optional<GmmKindSetup> kernels::kindSetup(const std::string &kind) {
  // A tile kind beside the default kind moe-select-lowering pairs it with
  // (every CPU with AMX has AVX512_BF16 and VNNI): the mixed task table and
  // the weight cache both kinds share are what runs.
  static const GmmKindSetup setups[] = {
      {"fma", GmmOperands::F32, {"fma"}, {"FP32 FMA", measureFp32PeakGflops}},
      {"avx512bf16_dot", GmmOperands::BF16, {"avx512bf16_dot"}, {"AVX512_BF16", measureAvx512Bf16PeakGflops}},
      {"amx_bf16", GmmOperands::BF16, {"avx512bf16_dot", "amx_bf16"}, {"AMX BF16", measureAmxBf16PeakGflops}},
      // Exact i32 multiply-adds: no peak loop for that unit.
      {"int8_vector", GmmOperands::Int8, {"int8_vector"}, {}},
      {"int8_avx2", GmmOperands::Int8, {"int8_avx2"}, {"AVX2 VPMADDWD", measureAvx2MaddPeakGops}},
      {"int8_vnni", GmmOperands::Int8, {"int8_vnni"}, {"AVX512-VNNI", measureVnniPeakGops}},
      {"amx_int8", GmmOperands::Int8, {"int8_vnni", "amx_int8"}, {"AMX INT8", measureAmxInt8PeakGops}},
  };
  for (const GmmKindSetup &s : setups)
    if (s.kind == kind)
      return s;
  return std::nullopt;
}

std::vector<std::string> kernels::missingFeatures(const GmmKindSetup &setup) {
  // Against the features the JIT compiles for (the host's, from CPUID), and
  // for a tile kind the tile state Linux must grant as well.
  llvm::StringMap<bool> target = mlir::moe::strategy::targetCpuFeatures();
  std::vector<std::string> missing;
  bool tiles = false;
  for (const std::string &name : setup.kernels) {
    const mlir::moe::codegen::GmmKernelKind *kind = mlir::moe::codegen::findGmmKernel(name);
    if (!kind)
      return {"(no kernel kind '" + name + "' in the registry)"};
    for (llvm::StringRef f : kind->features)
      if (!target.lookup(f) && !llvm::is_contained(missing, f.str()))
        missing.push_back(f.str());
    tiles |= kind->usesTiles;
  }
  if (tiles && !amxTilesGranted())
    missing.push_back("the AMX tile state (Linux grants it to this process only on a CPU with AMX)");
  return missing;
}

namespace {
std::string dims(std::initializer_list<int64_t> shape, const std::string &element) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + element + ">";
}

int64_t groupCount(const GmmShape &shape) {
  return shape.groupSizes.empty() ? 1 : static_cast<int64_t>(shape.groupSizes.size());
}

std::string lhsElement(const GmmKindSetup &setup, const GmmShape &shape) {
  if (setup.operands == GmmOperands::BF16 || (setup.operands == GmmOperands::F32 && shape.bf16ForFma))
    return "bf16";
  return "f32";
}

std::string weightElement(const GmmKindSetup &setup, const GmmShape &shape) {
  return setup.operands == GmmOperands::Int8 ? "i8" : lhsElement(setup, shape);
}

int64_t weightColumns(const GmmShape &shape) { return shape.swiglu ? 2 * shape.width : shape.width; }
int64_t tokens(const GmmShape &shape) {
  return shape.tokens > 0 ? shape.tokens : (shape.rows + shape.topK - 1) / shape.topK;
}
} // namespace

GmmTiles GmmTiles::fittedTo(int64_t vectorRegisters) const {
  GmmTiles t = *this;
  // Narrower first where even one row does not fit (nc stays a multiple of
  // the narrower tile's 16 nv columns).
  using mlir::moe::strategy::GmmTiling;
  while (t.nv > 1 && GmmTiling::maxRows(t.nv, vectorRegisters) < 1)
    t.nv /= 2;
  t.mr = std::max<int64_t>(1, std::min(mr, GmmTiling::maxRows(t.nv, vectorRegisters)));
  t.mc = std::max(t.mr, mc / t.mr * t.mr);
  return t;
}

std::string kernels::gmmProgram(const GmmKindSetup &setup, const GmmShape &shape, const GmmTiles &t) {
  const int64_t D = shape.depth, N = shape.width, Nw = weightColumns(shape), E = groupCount(shape);
  const std::string lt = lhsElement(setup, shape), wt = weightElement(setup, shape);
  const bool int8 = setup.operands == GmmOperands::Int8;
  bool tileKind = setup.kernels.size() > 1;

  std::string kernelList;
  for (const std::string &k : setup.kernels)
    kernelList += (kernelList.empty() ? "\"" : ", \"") + k + "\"";
  std::string lowering = "#moe.gmm_lowering<kernels = [" + kernelList + "], mr = " + std::to_string(t.mr) +
                         ", nv = " + std::to_string(t.nv) + ", kc = " + std::to_string(t.kc) +
                         ", nc = " + std::to_string(t.nc) + ", mc = " + std::to_string(t.mc);
  if (setup.operands != GmmOperands::F32) {
    lowering += ", packed_columns = " + std::to_string(t.packedColumns);
    if (tileKind)
      lowering += ", amx_min_rows = 1";
    if (setup.operands == GmmOperands::BF16)
      lowering += ", dot_rows = " + std::to_string(t.dotRows);
  }
  std::vector<std::string> fuse;
  if (shape.gather)
    fuse.push_back("\"gather\"");
  if (shape.swiglu)
    fuse.push_back("\"swiglu\"");
  if (!fuse.empty()) {
    lowering += ", fuse = [";
    for (size_t i = 0; i < fuse.size(); ++i)
      lowering += (i ? ", " : "") + fuse[i];
    lowering += "]";
  }
  lowering += ">";

  std::string rowsType = dims({-1, D}, lt),
              weightType = shape.transposeRhs ? dims({E, Nw, D}, wt) : dims({E, D, Nw}, wt),
              sizesType = dims({E}, "i32"), scalesType = dims({E, Nw}, "f32"), biasType = dims({E, Nw}, lt);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "func.func @gmm(%x: " << rowsType;
  if (shape.gather)
    os << ", %perm: tensor<?xi32>";
  os << ", %w: " << weightType;
  if (int8)
    os << ", %sc: " << scalesType;
  os << ", %s: " << sizesType;
  if (shape.bias)
    os << ", %b: " << biasType;
  os << ") -> " << dims({-1, N}, lt) << " {\n";
  std::string rows = "%x";
  if (shape.gather) {
    os << "  %rows = moe.gather_rows %x, %perm top " << shape.topK << " : " << rowsType
       << ", tensor<?xi32>\n";
    rows = "%rows";
  }
  os << "  %h = moe.gmm " << rows << ", %w, %s";
  if (int8)
    os << " scales(%sc : " << scalesType << ")";
  if (shape.bias)
    os << " bias(%b : " << biasType << ")";
  if (shape.transposeRhs)
    os << " transpose_rhs";
  os << " {moe.lowering = " << lowering << "} : " << rowsType << ", " << weightType << ", " << sizesType
     << "\n";
  if (shape.swiglu) {
    os << "  %a = moe.swiglu %h : " << dims({-1, Nw}, lt) << "\n";
    os << "  return %a : " << dims({-1, N}, lt) << "\n";
  } else {
    os << "  return %h : " << dims({-1, N}, lt) << "\n";
  }
  os << "}\n";
  return out;
}

namespace {
Buffer randomBuffer(std::mt19937_64 &rng, const std::string &element, std::vector<int64_t> shape,
                    float scale) {
  DType dtype = element == "bf16" ? DType::BF16 : element == "i8" ? DType::I8 : DType::F32;
  Buffer b(dtype, std::move(shape));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> bytes(-127, 127);
  for (int64_t i = 0, n = b.numElements(); i < n; ++i) {
    if (dtype == DType::I8)
      b.as<int8_t>()[i] = static_cast<int8_t>(bytes(rng));
    else if (dtype == DType::BF16)
      b.as<uint16_t>()[i] = f32ToBf16(normal(rng) * scale);
    else
      b.as<float>()[i] = normal(rng) * scale;
  }
  return b;
}
} // namespace

std::vector<Buffer> kernels::gmmInputs(const GmmKindSetup &setup, const GmmShape &shape,
                                       std::mt19937_64 &rng) {
  const int64_t D = shape.depth, Nw = weightColumns(shape), E = groupCount(shape);
  const std::string lt = lhsElement(setup, shape), wt = weightElement(setup, shape);
  std::vector<Buffer> args;
  args.push_back(randomBuffer(rng, lt, {shape.gather ? tokens(shape) : shape.rows, D}, 1.0f));
  if (shape.gather) {
    Buffer perm(DType::I32, {shape.rows});
    std::uniform_int_distribution<int32_t> slot(0, static_cast<int32_t>(tokens(shape) * shape.topK - 1));
    for (int64_t r = 0; r < shape.rows; ++r)
      perm.as<int32_t>()[r] = r % 7 == 6 ? -1 : slot(rng);
    args.push_back(std::move(perm));
  }
  // Weights scaled so that the sums stay near 1 (the activation's range).
  args.push_back(randomBuffer(rng, wt, shape.transposeRhs ? std::vector<int64_t>{E, Nw, D}
                                                          : std::vector<int64_t>{E, D, Nw},
                              1.0f / std::sqrt(static_cast<float>(D))));
  if (setup.operands == GmmOperands::Int8) {
    Buffer scales(DType::F32, {E, Nw});
    std::uniform_real_distribution<float> scale(0.5f, 1.5f);
    for (int64_t i = 0; i < E * Nw; ++i)
      scales.as<float>()[i] = scale(rng) / (127.0f * std::sqrt(static_cast<float>(D)));
    args.push_back(std::move(scales));
  }
  Buffer sizes(DType::I32, {E});
  for (int64_t g = 0; g < E; ++g)
    sizes.as<int32_t>()[g] = shape.groupSizes.empty() ? static_cast<int32_t>(shape.rows) : shape.groupSizes[g];
  args.push_back(std::move(sizes));
  if (shape.bias)
    args.push_back(randomBuffer(rng, lt, {E, Nw}, 0.5f));
  return args;
}

std::unique_ptr<CompiledGmm> CompiledGmm::compile(const std::string &program, bool reference,
                                                  std::string &error) {
  std::unique_ptr<CompiledGmm> compiled(new CompiledGmm());
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  compiled->context = std::make_unique<mlir::MLIRContext>(registry);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler collect(compiled->context.get(), [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(program, compiled->context.get());
  if (!module) {
    error = "the gmm program does not parse:\n" + diagnostics + program;
    return nullptr;
  }
  auto signature = entrySignature(*module, "gmm", error);
  if (!signature)
    return nullptr;
  compiled->signature = *signature;
  std::string pipeline = reference ? "moe-to-llvm{gmm-strategy=reference}" : "moe-to-llvm";
  if (mlir::failed(lowerModule(*module, pipeline))) {
    error = "'" + pipeline + "' failed:\n" + diagnostics + program;
    return nullptr;
  }
  compiled->jit = JitProgram::create(*module, error);
  if (!compiled->jit || !compiled->jit->materialize("gmm", error))
    return nullptr;
  return compiled;
}

CompiledGmm::~CompiledGmm() = default;

std::optional<std::vector<Buffer>> CompiledGmm::run(std::vector<Buffer> &inputs, std::string &error) {
  return jit->run(signature, inputs, error);
}

Buffer kernels::copyOf(const Buffer &b) {
  Buffer copy(b.dtype(), b.shape());
  std::memcpy(copy.data(), b.data(), b.numBytes());
  return copy;
}

double kernels::relativeError(const Buffer &got, const Buffer &expected, int64_t &nanMismatches) {
  nanMismatches = 0;
  if (got.shape() != expected.shape())
    return INFINITY;
  double maxErr = 0, maxRef = 0;
  for (int64_t i = 0, n = expected.numElements(); i < n; ++i) {
    double g = got.at(i), x = expected.at(i);
    if (std::isnan(g) || std::isnan(x)) {
      nanMismatches += std::isnan(g) != std::isnan(x);
      continue;
    }
    maxErr = std::max(maxErr, std::abs(g - x));
    maxRef = std::max(maxRef, std::abs(x));
  }
  return maxErr / std::max(maxRef, 1e-30);
}

double kernels::tolerance(const GmmKindSetup &setup, const GmmShape &shape) {
  return lhsElement(setup, shape) == "bf16" ? 1e-2 : 1e-5;
}

double kernels::gmmMultiplyAdds(const GmmShape &shape) {
  int64_t grouped = shape.rows;
  if (!shape.groupSizes.empty())
    grouped = std::min<int64_t>(shape.rows, std::accumulate(shape.groupSizes.begin(), shape.groupSizes.end(),
                                                             int64_t(0)));
  return static_cast<double>(grouped) * shape.depth * weightColumns(shape);
}
