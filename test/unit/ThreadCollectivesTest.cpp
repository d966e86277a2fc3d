//===- ThreadCollectivesTest.cpp - the in-process collectives ------------===//
//
// ThreadMesh with real threads: group membership by the shard dialect's
// row-major convention, every collective's values on 1-D and 2-D meshes
// (ragged all-to-all with empty blocks and padding), and the failure modes
// the sharded runtime must turn into errors instead of hangs: a rank that
// never arrives (timeout naming it), a rank that fails (abort), ranks that
// call different collectives or the same one over different axes, a
// receive over capacity seen by one rank only, negative counts, mismatched
// sizes.
//
//===----------------------------------------------------------------------===//

#include "runtime/ThreadCollectives.h"
#include "runtime/Bf16.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <numeric>
#include <thread>

using namespace moec;
using namespace std::chrono_literals;

namespace {

/// Runs body(rank) on one thread per rank; returns each rank's error
/// message ("" when it returned normally).
std::vector<std::string> runRanks(ThreadMesh &mesh, const std::function<void(int64_t)> &body) {
  std::vector<std::string> errors(mesh.size());
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < mesh.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception &e) {
        errors[r] = e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

void expectNoErrors(const std::vector<std::string> &errors) {
  for (size_t r = 0; r < errors.size(); ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(ThreadMesh, GroupsAreRowMajorOverTheOtherAxes) {
  ThreadMesh mesh({2, 3}, 1s); // rank = 3 * a0 + a1
  EXPECT_EQ(mesh.size(), 6);
  EXPECT_EQ(mesh.coordinates(4), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(mesh.group(4, {1}), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(mesh.group(4, {0}), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(mesh.group(4, {0, 1}), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  // The first listed axis is the most significant.
  EXPECT_EQ(mesh.group(4, {1, 0}), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(mesh.group(4, {}), (std::vector<int64_t>{4}));
  EXPECT_THROW(mesh.group(0, {2}), std::invalid_argument);
  EXPECT_THROW(ThreadMesh({2, 0}, 1s), std::invalid_argument);
  EXPECT_THROW(ThreadMesh({}, 1s), std::invalid_argument);
}

TEST(ThreadMesh, AllReduceSumsWithinEachGroup) {
  ThreadMesh mesh({2, 2}, 5s);
  constexpr int64_t kCount = 1001; // not a multiple of the group size
  std::vector<std::vector<float>> data(4);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    data[r].resize(kCount);
    for (int64_t i = 0; i < kCount; ++i)
      data[r][i] = float(r * 1000 + i);
    mesh.allReduceSum(r, {1}, data[r].data(), kCount); // groups {0,1}, {2,3}
  });
  expectNoErrors(errors);
  for (int64_t r = 0; r < 4; ++r) {
    int64_t first = r < 2 ? 0 : 2;
    for (int64_t i = 0; i < kCount; ++i)
      ASSERT_EQ(data[r][i], float(first * 1000 + i + (first + 1) * 1000 + i))
          << "rank " << r << " element " << i;
  }
}

// Slices longer than the in-place sum's chunk (1024 values), not a multiple
// of it: every element summed once, on every rank.
TEST(ThreadMesh, AllReduceOfSlicesLongerThanItsChunk) {
  ThreadMesh mesh({3}, 5s);
  constexpr int64_t kCount = 3 * 2048 + 7;
  std::vector<std::vector<float>> data(3);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    data[r].resize(kCount);
    for (int64_t i = 0; i < kCount; ++i)
      data[r][i] = float((r + 1) * (i % 997));
    mesh.allReduceSum(r, {0}, data[r].data(), kCount);
  });
  expectNoErrors(errors);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < kCount; ++i)
      ASSERT_EQ(data[r][i], float(6 * (i % 997))) << "rank " << r << " element " << i;
}

// Values whose sum rounds: every rank gets the same bits, the sum taken in
// member order from zero; two members that pass the same buffer count it
// twice (each sums its slice of every member's buffer before writing it).
TEST(ThreadMesh, AllReduceIsBitwiseEqualOnEveryRankAndTakesASharedBufferTwice) {
  ThreadMesh mesh({3}, 5s);
  constexpr int64_t kCount = 2500;
  std::vector<float> shared(kCount), own(kCount), expected(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    shared[i] = 0.1f * float(i + 1) / 3.0f;
    own[i] = 1e4f / float(i + 7);
    expected[i] = ((0.0f + shared[i]) + shared[i]) + own[i];
  }
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    float *data = r < 2 ? shared.data() : own.data(); // ranks 0 and 1 share
    mesh.allReduceSum(r, {0}, data, kCount);
  });
  expectNoErrors(errors);
  for (int64_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(std::memcmp(&shared[i], &expected[i], sizeof(float)), 0) << "element " << i;
    ASSERT_EQ(std::memcmp(&own[i], &expected[i], sizeof(float)), 0) << "element " << i;
  }
}

// bf16 in place: each element the f32 sum of the members' widened values
// in member order, rounded to bf16 once (what the all-reduce computed when
// it widened the whole buffer into an f32 copy), bitwise the same on every
// rank, over slices longer than the sum's chunk; a shared buffer counts
// twice, as in f32.
TEST(ThreadMesh, Bf16AllReduceSumsInF32AndRoundsOnce) {
  ThreadMesh mesh({4}, 5s);
  constexpr int64_t kCount = 7001; // slices of 1750-1751: two chunks each
  std::vector<uint16_t> shared(kCount), second(kCount), third(kCount), expected(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    shared[i] = f32ToBf16(0.37f * float(i % 97) - 11.0f);
    second[i] = f32ToBf16(1e3f / float(i + 3));
    third[i] = f32ToBf16(0.013f * float(i % 1013) + 0.5f);
    float sum = (((0.0f + bf16ToF32(shared[i])) + bf16ToF32(shared[i])) + bf16ToF32(second[i])) +
                bf16ToF32(third[i]);
    expected[i] = f32ToBf16(sum);
  }
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    uint16_t *data = r < 2 ? shared.data() : r == 2 ? second.data() : third.data();
    mesh.allReduceSumBf16(r, {0}, data, kCount); // ranks 0 and 1 share
  });
  expectNoErrors(errors);
  for (int64_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(shared[i], expected[i]) << "element " << i;
    ASSERT_EQ(second[i], expected[i]) << "element " << i;
    ASSERT_EQ(third[i], expected[i]) << "element " << i;
  }
}

// A rank summing bf16 where its peers sum f32 (or fewer values) is refused
// on every rank, naming the bf16 collective.
TEST(ThreadMesh, Bf16AllReduceAgainstF32OrAnotherCountIsRefused) {
  ThreadMesh mesh({2}, 5s);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    float f[4] = {};
    uint16_t b[4] = {};
    if (r == 0)
      mesh.allReduceSumBf16(r, {0}, b, 4);
    else
      mesh.allReduceSum(r, {0}, f, 4);
  });
  for (const std::string &e : errors)
    EXPECT_NE(e.find("all_reduce (bf16)"), std::string::npos) << e;
  ThreadMesh again({2}, 5s); // a failed mesh stays failed
  errors = runRanks(again, [&](int64_t r) {
    uint16_t b[4] = {};
    again.allReduceSumBf16(r, {0}, b, r == 0 ? 4 : 3);
  });
  EXPECT_NE(errors[0].find("all_reduce (bf16): rank 0 has 4 values but rank 1 has 3"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("all_reduce (bf16): rank 1 has 3 values but rank 0 has 4"),
            std::string::npos)
      << errors[1];
}

// The conversions the bf16 sums use, inline for vectorizing (runtime/Bf16.h):
// round to nearest, ties to even, NaN kept quiet, infinities kept.
TEST(Bf16, RoundsToNearestEvenAndKeepsNaNAndInfinity) {
  auto bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f32ToBf16(f);
  };
  EXPECT_EQ(bits(0x3F800000u), 0x3F80);          // 1.0
  EXPECT_EQ(bits(0x3F808000u), 0x3F80);          // a tie, to the even 0x3F80
  EXPECT_EQ(bits(0x3F818000u), 0x3F82);          // a tie, to the even 0x3F82
  EXPECT_EQ(bits(0x3F808001u), 0x3F81);          // above the tie
  EXPECT_EQ(bits(0x7F800000u), 0x7F80);          // +inf
  EXPECT_EQ(bits(0xFF800000u), 0xFF80);          // -inf
  EXPECT_EQ(bits(0x7F800001u) & 0x7FC0, 0x7FC0); // a signalling NaN comes out quiet
  EXPECT_EQ(bf16ToF32(0xC040), -3.0f);
}

// The global loss of a sharded backward sums one value over the shards:
// some members own an empty slice of it and copy nothing.
TEST(ThreadMesh, AllReduceOfFewerValuesThanShards) {
  ThreadMesh mesh({3}, 5s);
  std::vector<float> value(3);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    value[r] = float(r + 1);
    mesh.allReduceSum(r, {0}, &value[r], 1);
  });
  expectNoErrors(errors);
  for (int64_t r = 0; r < 3; ++r)
    EXPECT_EQ(value[r], 6.0f) << "rank " << r;
}

TEST(ThreadMesh, ReduceScatterThenAllGatherIsAllReduce) {
  ThreadMesh mesh({3}, 5s);
  constexpr int64_t kBlock = 5;
  std::vector<std::vector<float>> gathered(3);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    std::vector<float> in(3 * kBlock);
    for (int64_t i = 0; i < 3 * kBlock; ++i)
      in[i] = float((r + 1) * (i + 1));
    std::vector<float> mine(kBlock);
    mesh.reduceScatterSum(r, {0}, in.data(), kBlock, mine.data());
    // Block r of the sum: sum over ranks p of (p + 1) * (i + 1) = 6 (i + 1).
    for (int64_t j = 0; j < kBlock; ++j)
      if (mine[j] != float(6 * (r * kBlock + j + 1)))
        throw std::runtime_error("reduce_scatter block " + std::to_string(r) + " element " +
                                 std::to_string(j) + " = " + std::to_string(mine[j]));
    gathered[r].resize(3 * kBlock);
    mesh.allGather(r, {0}, mine.data(), kBlock * sizeof(float), gathered[r].data());
  });
  expectNoErrors(errors);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t i = 0; i < 3 * kBlock; ++i)
      ASSERT_EQ(gathered[r][i], float(6 * (i + 1))) << "rank " << r << " element " << i;
}

TEST(ThreadMesh, RaggedAllToAllReturnsEveryRowToItsPeer) {
  // 3 ranks; rank s sends counts[s][d] rows to rank d (row = {s, d, k}).
  const int32_t counts[3][3] = {{2, 0, 1}, {1, 3, 0}, {0, 2, 2}};
  constexpr int64_t kCapacity = 6;
  ThreadMesh mesh({3}, 5s);
  std::vector<std::vector<int32_t>> received(3), recvCounts(3), back(3);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t s) {
    std::vector<int32_t> rows;
    for (int64_t d = 0; d < 3; ++d)
      for (int32_t k = 0; k < counts[s][d]; ++k)
        rows.insert(rows.end(), {int32_t(s), int32_t(d), k});
    received[s].assign(kCapacity * 3, -1);
    recvCounts[s].assign(3, -1);
    mesh.allToAllV(s, {0}, rows.data(), counts[s], 3 * sizeof(int32_t), received[s].data(),
                   recvCounts[s].data(), kCapacity);
    // And back by the counts received: every sender gets its rows again.
    back[s].assign(kCapacity * 3, -1);
    std::vector<int32_t> backCounts(3);
    mesh.allToAllV(s, {0}, received[s].data(), recvCounts[s].data(), 3 * sizeof(int32_t),
                   back[s].data(), backCounts.data(), kCapacity);
    for (int64_t d = 0; d < 3; ++d)
      if (backCounts[d] != counts[s][d])
        throw std::runtime_error("returned counts differ");
    for (size_t i = 0; i < rows.size(); ++i)
      if (back[s][i] != rows[i])
        throw std::runtime_error("row " + std::to_string(i / 3) + " came back changed");
  });
  expectNoErrors(errors);
  for (int64_t d = 0; d < 3; ++d) {
    size_t at = 0;
    for (int64_t s = 0; s < 3; ++s) {
      EXPECT_EQ(recvCounts[d][s], counts[s][d]) << "rank " << d << " from " << s;
      for (int32_t k = 0; k < counts[s][d]; ++k, at += 3)
        EXPECT_EQ((std::vector<int32_t>(received[d].begin() + at, received[d].begin() + at + 3)),
                  (std::vector<int32_t>{int32_t(s), int32_t(d), k}));
    }
    for (; at < received[d].size(); ++at)
      EXPECT_EQ(received[d][at], 0) << "padding of rank " << d;
  }
}

TEST(ThreadMesh, ARankThatNeverArrivesIsNamedWithinTheTimeout) {
  ThreadMesh mesh({2}, 200ms);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    if (r == 1)
      return; // hangs or exits without the collective
    mesh.barrier(r);
  });
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_NE(errors[0].find("rank 0 waited 200 ms in barrier for rank(s) 1"), std::string::npos)
      << errors[0];
  EXPECT_LT(elapsed, 5s);
  // The mesh stays failed: a late rank gets the same error at once.
  EXPECT_THROW(mesh.barrier(1), CollectiveError);
}

TEST(ThreadMesh, AFailedRankStopsTheOthersAtOnce) {
  ThreadMesh mesh({3}, 60s);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    if (r == 2) {
      std::this_thread::sleep_for(50ms);
      mesh.abort(r, "input of the wrong shape");
      return;
    }
    float v = 1;
    mesh.allReduceSum(r, {0}, &v, 1);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s); // far below the 60 s timeout
  for (int64_t r = 0; r < 2; ++r)
    EXPECT_EQ(errors[r], "rank 2 failed: input of the wrong shape") << "rank " << r;
}

TEST(ThreadMesh, DivergedProgramsAreRefusedOnEveryRank) {
  ThreadMesh mesh({2}, 5s);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    float x = 1, out[2];
    if (r == 0)
      mesh.barrier(r);
    else
      mesh.allGather(r, {0}, &x, sizeof x, out);
  });
  for (int64_t r = 0; r < 2; ++r)
    EXPECT_NE(errors[r].find("the ranks' programs diverged"), std::string::npos) << errors[r];
}

TEST(ThreadMesh, OverCapacityAndMismatchedSizesAreErrorsEverywhere) {
  {
    ThreadMesh mesh({2}, 5s);
    std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
      float rows[4] = {1, 2, 3, 4}, received[2];
      int32_t send[2] = {2, 2}, recv[2];
      mesh.allToAllV(r, {0}, rows, send, sizeof(float), received, recv, 2); // receives 4 > 2
    });
    for (int64_t r = 0; r < 2; ++r)
      EXPECT_NE(errors[r].find("receives 4 rows but has room for 2"), std::string::npos)
          << errors[r];
  }
  {
    ThreadMesh mesh({2}, 5s);
    std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
      std::vector<float> v(r == 0 ? 3 : 4, 1.0f);
      mesh.allReduceSum(r, {0}, v.data(), int64_t(v.size()));
    });
    for (int64_t r = 0; r < 2; ++r)
      EXPECT_NE(errors[r].find("all_reduce: rank"), std::string::npos) << errors[r];
  }
}

TEST(ThreadMesh, AFailureOnlyOneRankSeesStopsEveryRankAfterThePeersAreDone) {
  // Only rank 0 receives more than its capacity; rank 1's copy reads rank
  // 0's rows, so rank 0 must not return (and free them) before rank 1 is
  // done, and rank 1 must fail too.
  // Rank 1 copies 4 MiB from rank 0 while rank 0 has failed at once: had
  // rank 0 returned early, the ThreadSanitizer build (moe-runtime-tests-tsan)
  // would report its free racing with rank 1's read.
  constexpr int32_t kBig = 1 << 20;
  ThreadMesh mesh({2}, 5s);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    std::vector<float> rows(kBig, 1.0f), received(r == 0 ? 2 : kBig);
    std::vector<int32_t> send = r == 0 ? std::vector<int32_t>{0, kBig} : std::vector<int32_t>{3, 0};
    std::vector<int32_t> recv(2);
    mesh.allToAllV(r, {0}, rows.data(), send.data(), sizeof(float), received.data(), recv.data(),
                   int64_t(received.size()));
  });
  EXPECT_NE(errors[0].find("all_to_all: rank 0 receives 3 rows but has room for 2"),
            std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("rank 0 failed: all_to_all: rank 0 receives 3 rows"), std::string::npos)
      << errors[1];
}

TEST(ThreadMesh, NegativeCountsAndDifferentAxesAreRefused) {
  {
    // The sum of the counts fits the capacity; a negative one must not
    // let the other overflow it.
    ThreadMesh mesh({2}, 5s);
    std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
      std::vector<float> rows(8, 1.0f), received(3);
      std::vector<int32_t> send = r == 0 ? std::vector<int32_t>{5, 0} : std::vector<int32_t>{-2, 0};
      std::vector<int32_t> recv(2);
      mesh.allToAllV(r, {0}, rows.data(), send.data(), sizeof(float), received.data(),
                     recv.data(), 3);
    });
    for (int64_t r = 0; r < 2; ++r)
      EXPECT_NE(errors[r].find("rank 1 sends a negative row count (-2)"), std::string::npos)
          << errors[r];
  }
  {
    // The same collective over different axes: the groups disagree.
    ThreadMesh mesh({2, 2}, 5s);
    std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
      float v[4] = {1, 1, 1, 1};
      mesh.allReduceSum(r, {r % 2 == 0 ? int64_t(0) : int64_t(1)}, v, 4);
    });
    for (int64_t r = 0; r < 4; ++r)
      EXPECT_NE(errors[r].find("the ranks' programs diverged"), std::string::npos) << errors[r];
  }
  {
    ThreadMesh mesh({2}, 5s);
    EXPECT_THROW(mesh.barrier(2), std::invalid_argument);
    EXPECT_THROW(mesh.group(0, {0, 0}), std::invalid_argument);
    EXPECT_THROW(ThreadMesh({2}, std::chrono::milliseconds::max()), std::invalid_argument);
  }
}

TEST(ThreadMesh, ManyCollectivesInARowStayInStep) {
  // Fast and slow ranks reuse their buffers between collectives: the second
  // barrier of each must keep a fast rank from overwriting what a slow one
  // still reads.
  ThreadMesh mesh({2, 2}, 10s);
  std::vector<std::string> errors = runRanks(mesh, [&](int64_t r) {
    std::vector<float> v(257);
    for (int step = 0; step < 200; ++step) {
      std::fill(v.begin(), v.end(), float(step + r));
      if (r == 3 && step % 7 == 0)
        std::this_thread::sleep_for(1ms);
      mesh.allReduceSum(r, {0, 1}, v.data(), int64_t(v.size()));
      float expected = float(4 * step + 6);
      for (float x : v)
        if (x != expected)
          throw std::runtime_error("step " + std::to_string(step) + ": " + std::to_string(x) +
                                   " != " + std::to_string(expected));
    }
  });
  expectNoErrors(errors);
}

} // namespace
