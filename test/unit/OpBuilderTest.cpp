//===- OpBuilderTest.cpp - C++ API of the moe dialect ---------------------===//
//
// What pass authors do from C++: build ops and rely on inferred types, parse
// and verify programs, capture the verifier's messages, resolve grid axes,
// and run the moe passes through a PassManager.
//
//===----------------------------------------------------------------------===//

#include "dialect/MoeOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class MoeDialectTest : public ::testing::Test {
protected:
  MoeDialectTest() {
    DialectRegistry registry;
    registry.insert<moe::MoeDialect, func::FuncDialect, arith::ArithDialect,
                    tensor::TensorDialect, linalg::LinalgDialect,
                    shard::ShardDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source`; collects diagnostics instead of printing them.
  OwningOpRef<ModuleOp> parse(StringRef source) {
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      diagnostics.push_back(d.str());
      return success();
    });
    return parseSourceString<ModuleOp>(source, &context);
  }

  MLIRContext context;
  std::vector<std::string> diagnostics;
};

TEST_F(MoeDialectTest, RouteInfersIdsAndWeights) {
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto logitsType = RankedTensorType::get({ShapedType::kDynamic, 60}, b.getF32Type());
  auto func = func::FuncOp::create(b, loc, "f", b.getFunctionType({logitsType}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  auto route = moe::RouteOp::create(b, loc, func.getArgument(0), /*k=*/8);
  func::ReturnOp::create(b, loc);

  auto ids = cast<RankedTensorType>(route.getIds().getType());
  auto weights = cast<RankedTensorType>(route.getWeights().getType());
  EXPECT_TRUE(ids.isDynamicDim(0));
  EXPECT_EQ(ids.getDimSize(1), 8);
  EXPECT_TRUE(ids.getElementType().isInteger(32));
  EXPECT_EQ(weights.getDimSize(1), 8);
  EXPECT_TRUE(weights.getElementType().isF32());
  EXPECT_EQ(route.getNumExperts(), 60);
  EXPECT_EQ(route.getScoring(), moe::Scoring::softmax);
  EXPECT_EQ(route.getOrder(), moe::RouteOrder::topk_then_softmax);
  EXPECT_TRUE(succeeded(verify(module)));
  module->erase();
}

TEST_F(MoeDialectTest, PackRowCountFollowsTokensTopkAndCapacity) {
  auto module = parse(R"mlir(
    func.func @f(%x: tensor<16x64xbf16>, %ids: tensor<16x4xi32>, %w: tensor<16x4xf32>) {
      %r, %sw, %p, %s = moe.pack %x, %ids, %w experts 8 : tensor<16x64xbf16>, tensor<16x4xi32>, tensor<16x4xf32>
      %r2, %sw2, %p2, %s2 = moe.pack %x, %ids, %w experts 8 offset 4 local 2 capacity 24 : tensor<16x64xbf16>, tensor<16x4xi32>, tensor<16x4xf32>
      return
    })mlir");
  ASSERT_TRUE(module) << (diagnostics.empty() ? "" : diagnostics.front());
  SmallVector<moe::PackOp> packs;
  module->walk([&](moe::PackOp op) { packs.push_back(op); });
  ASSERT_EQ(packs.size(), 2u);
  auto rows = cast<RankedTensorType>(packs[0].getRows().getType());
  EXPECT_EQ(rows.getShape(), ArrayRef<int64_t>({64, 64}));
  EXPECT_TRUE(rows.getElementType().isBF16());
  EXPECT_EQ(cast<RankedTensorType>(packs[0].getGroupSizes().getType()).getDimSize(0), 8);
  EXPECT_EQ(cast<RankedTensorType>(packs[1].getRows().getType()).getDimSize(0), 24);
  EXPECT_EQ(packs[1].getNumLocalExperts(), 2);
  EXPECT_EQ(cast<RankedTensorType>(packs[1].getGroupSizes().getType()).getDimSize(0), 2);
}

TEST_F(MoeDialectTest, VerifierNamesTheMismatch) {
  auto module = parse(R"mlir(
    func.func @f(%rows: tensor<?x64xf32>, %w: tensor<8x32x128xf32>, %s: tensor<8xi32>) {
      %0 = moe.gmm %rows, %w, %s : tensor<?x64xf32>, tensor<8x32x128xf32>, tensor<8xi32>
      return
    })mlir");
  EXPECT_FALSE(module);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("lhs contraction size (64) does not match rhs "
                                "contraction size (dimension 1) (32)"),
            std::string::npos)
      << diagnostics[0];
}

TEST_F(MoeDialectTest, GridAxesResolveByName) {
  auto module = parse(R"mlir(
    shard.grid @mesh(shape = 2x4) {moe.axes = ["data", "expert"]}
    func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = moe.psum %x over @mesh ["expert", "data"] : tensor<8x16xf32>
      return %0 : tensor<8x16xf32>
    })mlir");
  ASSERT_TRUE(module) << (diagnostics.empty() ? "" : diagnostics.front());
  moe::PsumOp psum;
  module->walk([&](moe::PsumOp op) { psum = op; });
  SymbolTableCollection symbols;
  auto resolved =
      moe::resolveGridAxes(psum, symbols, psum.getGridAttr(), psum.getAxes());
  ASSERT_TRUE(succeeded(resolved));
  EXPECT_EQ(resolved->indices, SmallVector<int16_t>({1, 0}));
  EXPECT_EQ(resolved->shards, 8);
}

TEST_F(MoeDialectTest, ExpandBlockProducesThePrimitives) {
  auto module = parse(R"mlir(
    func.func @f(%x: tensor<?x32xf32>, %l: tensor<?x6xf32>, %w1: tensor<6x32x16xf32>,
                 %w3: tensor<6x32x16xf32>, %w2: tensor<6x16x32xf32>,
                 %sw13: tensor<32x24xf32>, %sw2: tensor<12x32xf32>) -> tensor<?x32xf32> {
      %y = moe.block %x logits(%l : tensor<?x6xf32>)
             gate_up(%w1, %w3 : tensor<6x32x16xf32>, tensor<6x32x16xf32>)
             down(%w2 : tensor<6x16x32xf32>)
             shared_gate_up(%sw13 : tensor<32x24xf32>) shared_down(%sw2 : tensor<12x32xf32>)
             top 2 preweight : tensor<?x32xf32>
      return %y : tensor<?x32xf32>
    })mlir");
  ASSERT_TRUE(module) << (diagnostics.empty() ? "" : diagnostics.front());
  PassManager pm(&context);
  pm.addPass(moe::createMoeExpandBlock());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(succeeded(verify(*module)));

  int blocks = 0, routes = 0, packs = 0, gmms = 0, swiglus = 0, scales = 0,
      combines = 0, matmuls = 0;
  module->walk([&](Operation *op) {
    blocks += isa<moe::BlockOp>(op);
    routes += isa<moe::RouteOp>(op);
    packs += isa<moe::PackOp>(op);
    gmms += isa<moe::GmmOp>(op);
    swiglus += isa<moe::SwigluOp>(op);
    scales += isa<moe::ScaleRowsOp>(op);
    combines += isa<moe::CombineOp>(op);
    matmuls += isa<linalg::MatmulOp>(op);
  });
  EXPECT_EQ(blocks, 0);
  EXPECT_EQ(routes, 1);
  EXPECT_EQ(packs, 1);
  EXPECT_EQ(gmms, 3);    // w1, w3 (baseline), w2
  EXPECT_EQ(swiglus, 2); // routed and shared
  EXPECT_EQ(scales, 1);  // preweight
  EXPECT_EQ(combines, 1);
  EXPECT_EQ(matmuls, 2); // shared sw13 and sw2
  moe::CombineOp combine;
  module->walk([&](moe::CombineOp op) { combine = op; });
  EXPECT_TRUE(combine.getPreweighted());
}

} // namespace
