//===- ShardedRunTest.cpp - in-process shards as the generated code sees them -===//
//
// runInProcess with real threads, each rank's body calling the moert_* C
// entry points exactly as compiled per-shard code does (memrefs unpacked,
// axes encoded, the communicator bound to the thread), on inputs cut by
// shardInputs and results put together by assembleResults: the whole host
// side of a sharded run without the compiler. ThreadSanitizer runs these
// too (moe-runtime-tests-tsan).
//
//===----------------------------------------------------------------------===//

#include "runtime/ShardComm.h"
#include "runtime/ShardedRun.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <set>

using namespace moec;
using namespace std::chrono_literals;

namespace {

/// The generated code's encoding of a collective's mesh axes: 4 bits each,
/// the first in the lowest bits, ended by 0xF. Written out here on purpose,
/// apart from abi::encodeAxes, so that the test checks the encoding both
/// sides share rather than the function they share (AbiEncoding below
/// checks that function against this).
int64_t axesCode(std::vector<int64_t> axes) {
  int64_t code = 0xF;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it)
    code = (code << 4) | *it;
  return code;
}

// A memref argument as func-to-llvm unpacks it: allocated and aligned
// pointers, offset, size, stride.
#define MEMREF(p, n) (p), (p), 0, (n), 1

// Data parallel over `data`, experts over `expert` (2x2): x [4, 3] split by
// rows over data; each rank adds its expert index to its rows, psums over
// expert, gathers over data, and sends one row to each expert peer.
// Every name codegen can call is in the runtime's symbol map, and the
// shared axes encoding is the one the runtime decodes.
TEST(RuntimeAbi, EveryEntryPointCodegenNamesIsInTheSymbolMap) {
  std::set<std::string> symbols;
  for (const auto &[name, address] : shardRuntimeSymbols()) {
    EXPECT_NE(address, nullptr) << name;
    symbols.insert(name);
  }
  namespace abi = ::moec::abi;
  using abi::Collective, abi::Element;
  int named = 0;
  for (Collective c : {Collective::AllReduceSum, Collective::ReduceScatterSum,
                       Collective::AllGather, Collective::AllToAll})
    for (Element e : {Element::F32, Element::BF16, Element::I32})
      if (const char *name = abi::entryPoint(c, e)) {
        EXPECT_TRUE(symbols.count(name)) << name;
        ++named;
      }
  EXPECT_EQ(named, 10); // sums of f32 and bf16, copies of all three
  EXPECT_TRUE(symbols.count(abi::meshCoordinateEntryPoint()));
  EXPECT_TRUE(symbols.count(abi::countDroppedRowsEntryPoint()));
}

TEST(RuntimeAbi, AxesEncodingRoundTrips) {
  for (std::vector<int64_t> axes : std::vector<std::vector<int64_t>>{
           {}, {0}, {1, 0}, {2, 0, 1}, {14, 3, 0, 7, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13}}) {
    namespace abi = ::moec::abi;
    int64_t code = abi::encodeAxes(axes.data(), int(axes.size()));
    EXPECT_EQ(code, axesCode(axes));
    for (size_t i = 0; i < axes.size(); ++i)
      EXPECT_EQ(abi::decodeAxis(code, int(i)), axes[i]);
    EXPECT_EQ(abi::decodeAxis(code, int(axes.size())), abi::kAxesEnd);
  }
}

TEST(ShardedRun, GeneratedCodeCollectivesOnA2x2Mesh) {
  MeshLayout layout;
  layout.axisNames = {"data", "expert"};
  layout.shape = {2, 2};
  layout.inputs = {TensorSplit{{0}, {}}};
  layout.results = {TensorSplit{{0}, {}}, TensorSplit{{}, {}}, TensorSplit{{0}, {}}};

  Buffer x(DType::F32, {4, 3});
  std::iota(x.as<float>(), x.as<float>() + 12, 1.0f);
  std::vector<Buffer> full;
  full.push_back(std::move(x));
  std::string error;
  auto local = localShardInputs(full, layout, nullptr, error);
  ASSERT_TRUE(local) << error;

  for (int repeat = 0; repeat < 20; ++repeat) { // stay in step over many runs
    std::vector<std::vector<Buffer>> blocks(4);
    ASSERT_TRUE(runInProcess(
        layout.shape, 5s,
        [&](int64_t rank, std::string &why) {
          int64_t expert = moert_mesh_coordinate(/*axis=*/1, /*axisSize=*/2, /*meshRank=*/2);
          EXPECT_EQ(expert, rank % 2);
          const Buffer &mine = (*local)[rank][0]; // [2, 3]
          Buffer summed(DType::F32, {2, 3});
          for (int64_t i = 0; i < 6; ++i)
            summed.as<float>()[i] = mine.as<float>()[i] + float(expert);
          moert_all_reduce_sum_f32(MEMREF(summed.as<float>(), 6), axesCode({1}), 2);
          // Every data rank's first value, gathered over data.
          Buffer first(DType::I32, {1}), gathered(DType::I32, {2, 1});
          first.as<int32_t>()[0] = int32_t(mine.as<float>()[0]);
          moert_all_gather_i32(MEMREF(first.as<int32_t>(), 1), MEMREF(gathered.as<int32_t>(), 2),
                               axesCode({0}), 2);
          // Row r of this rank's block goes to expert peer r.
          Buffer sendCounts(DType::I32, {2}), recvCounts(DType::I32, {2});
          sendCounts.as<int32_t>()[0] = sendCounts.as<int32_t>()[1] = 1;
          Buffer received(DType::F32, {2, 3});
          moert_all_to_all_f32(MEMREF(const_cast<float *>(mine.as<float>()), 6),
                               MEMREF(sendCounts.as<int32_t>(), 2),
                               MEMREF(received.as<float>(), 6),
                               MEMREF(recvCounts.as<int32_t>(), 2), 3, axesCode({1}), 2);
          blocks[rank].push_back(std::move(summed));
          blocks[rank].push_back(std::move(gathered));
          blocks[rank].push_back(std::move(received));
          why = takeShardFailure();
          return why.empty();
        },
        error))
        << error;
    auto results = assembleResults(blocks, layout, error);
    ASSERT_TRUE(results) << error;
    // psum over expert: 2 x + 0 + 1.
    for (int64_t i = 0; i < 12; ++i)
      ASSERT_EQ((*results)[0].as<float>()[i], 2 * float(i + 1) + 1) << i;
    EXPECT_EQ((*results)[1].as<int32_t>()[0], 1);
    EXPECT_EQ((*results)[1].as<int32_t>()[1], 7);
    // Both expert ranks of a data row hold the same block: expert e
    // received row e of each peer's (identical) block, twice; the result
    // is split over data only, so the expert-0 replica's block stands:
    // its data block's row 0, twice.
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t row = 0; row < 2; ++row)
        for (int64_t j = 0; j < 3; ++j)
          EXPECT_EQ((*results)[2].as<float>()[(2 * d + row) * 3 + j],
                    float(6 * d + j + 1))
              << "data " << d << " row " << row;
  }
}

// A rank that fails between collectives stops its peers, which are
// waiting in the next one: the run ends with the failing rank's reason,
// long before the timeout.
TEST(ShardedRun, AFailingRankStopsThePeersWaitingInACollective) {
  std::atomic<int> returned{0};
  std::string error;
  auto start = std::chrono::steady_clock::now();
  bool ok = runInProcess(
      {4}, 30s,
      [&](int64_t rank, std::string &why) {
        float value = 1;
        moert_all_reduce_sum_f32(MEMREF(&value, 1), axesCode({0}), 4);
        if (rank == 2) {
          why = "rank two gives up";
          return false;
        }
        moert_all_reduce_sum_f32(MEMREF(&value, 1), axesCode({0}), 4);
        returned += takeShardFailure().empty() ? 0 : 1;
        return true;
      },
      error);
  EXPECT_FALSE(ok);
  EXPECT_EQ(error, "rank 2 failed: rank two gives up");
  EXPECT_EQ(returned.load(), 3); // every peer's second collective failed
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

// Compiled for a group of 4, run on a mesh whose axis has 2: refused on
// every rank with the reason, not a wrong sum.
TEST(ShardedRun, AGroupSizeTheMeshDoesNotHaveIsAnError) {
  std::string error;
  bool ok = runInProcess(
      {2}, 5s,
      [&](int64_t, std::string &) {
        float value = 1;
        moert_all_reduce_sum_f32(MEMREF(&value, 1), axesCode({0}), 4);
        return true;
      },
      error);
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find("4"), std::string::npos) << error;
}

// The inputs' blocks on a 2 x 2 mesh (data, expert): a replicated tensor
// and a split of the leading dimension are runs of the full tensor's
// memory, shared rather than copied (in-process data parallelism held a
// copy of every replicated weight per rank); a split of a later dimension
// is a copy. Each block holds the right values after the full tensors are
// gone (shared ownership), and assembling the blocks gives the tensors back.
TEST(ShardedRun, BlocksThatAreOneRunShareTheFullTensorsMemory) {
  MeshLayout layout;
  layout.axisNames = {"data", "expert"};
  layout.shape = {2, 2};
  layout.inputs = {TensorSplit{{}, {}},   // w [2, 3]: replicated
                   TensorSplit{{0}, {}},  // x [4, 3]: rows over data
                   TensorSplit{{}, {1}},  // y [2, 4]: columns over expert
                   TensorSplit{{}, {0}}}; // z [1, 4]: columns over data, one row
  layout.results = layout.inputs;
  std::vector<std::vector<int64_t>> shapes = {{2, 3}, {4, 3}, {2, 4}, {1, 4}};
  std::vector<Buffer> full;
  for (size_t i = 0; i < shapes.size(); ++i) {
    full.emplace_back(DType::F32, shapes[i]);
    std::iota(full[i].as<float>(), full[i].as<float>() + full[i].numElements(), 100.0f * i);
  }
  std::vector<const float *> base;
  for (const Buffer &b : full)
    base.push_back(b.as<float>());
  std::string error;
  auto local = localShardInputs(full, layout, nullptr, error);
  ASSERT_TRUE(local) << error;
  ASSERT_EQ(local->size(), 4u);
  for (int64_t rank = 0; rank < 4; ++rank) {
    const std::vector<Buffer> &mine = (*local)[rank];
    int64_t data = rank / 2;
    EXPECT_EQ(mine[0].as<float>(), base[0]) << rank;
    EXPECT_EQ(mine[1].as<float>(), base[1] + data * 6) << rank;
    EXPECT_EQ(mine[3].as<float>(), base[3] + data * 2) << rank;
    // Columns of two rows: not one run, so not inside y's memory.
    EXPECT_TRUE(mine[2].as<float>() + 4 <= base[2] || mine[2].as<float>() >= base[2] + 8) << rank;
    EXPECT_EQ(mine[2].shape(), (std::vector<int64_t>{2, 2}));
  }
  full.clear(); // the shared blocks keep the memory
  for (int64_t rank = 0; rank < 4; ++rank) {
    const std::vector<Buffer> &mine = (*local)[rank];
    int64_t data = rank / 2, expert = rank % 2;
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(mine[0].as<float>()[i], float(i));
      EXPECT_EQ(mine[1].as<float>()[i], 100.0f + data * 6 + i);
    }
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 2; ++c)
        EXPECT_EQ(mine[2].as<float>()[r * 2 + c], 200.0f + r * 4 + expert * 2 + c);
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_EQ(mine[3].as<float>()[c], 300.0f + data * 2 + c);
  }
  // What moec's memory check counts as copies: y's blocks only.
  for (size_t i = 0; i < shapes.size(); ++i)
    EXPECT_EQ(blockSharesMemory(shapes[i], layout.inputs[i], layout), i != 2) << i;
  auto back = assembleResults(*local, layout, error);
  ASSERT_TRUE(back) << error;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ASSERT_EQ((*back)[i].shape(), shapes[i]);
    for (int64_t e = 0; e < (*back)[i].numElements(); ++e)
      EXPECT_EQ((*back)[i].as<float>()[e], 100.0f * i + e) << i << " " << e;
  }
}

// A scalar is one run (itself); a block with no values shares nothing and
// is an owned empty buffer.
TEST(ShardedRun, AScalarIsSharedAndAnEmptyBlockIsItsOwn) {
  MeshLayout layout;
  layout.axisNames = {"data"};
  layout.shape = {2};
  layout.inputs = {TensorSplit{}, TensorSplit{{0}, {}}};
  Buffer scalar(DType::F32, {});
  scalar.as<float>()[0] = 4.5f;
  std::string error;
  auto s = shardOf(scalar, layout.inputs[0], layout, 1, error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->as<float>(), scalar.as<float>());
  EXPECT_TRUE(blockSharesMemory({}, layout.inputs[0], layout));
  Buffer empty(DType::F32, {4, 0});
  auto e = shardOf(empty, layout.inputs[1], layout, 1, error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->shape(), (std::vector<int64_t>{2, 0}));
  EXPECT_NE(e->data(), empty.data());
  EXPECT_FALSE(blockSharesMemory({4, 0}, layout.inputs[1], layout));
  // An uneven split is refused, not shared.
  Buffer odd(DType::F32, {3, 2});
  EXPECT_FALSE(shardOf(odd, layout.inputs[1], layout, 0, error));
  EXPECT_NE(error.find("does not split evenly"), std::string::npos) << error;
  EXPECT_FALSE(blockSharesMemory({3, 2}, layout.inputs[1], layout));
}

} // namespace
