//===- Peak.cpp - this machine's peaks per unit, measured -----------------===//
//
// FP32 FMA, AVX512_BF16, AVX512-VNNI, AVX2's vpmaddwd and AMX (bf16, int8):
// for the vector units, independent accumulators (more than latency x
// ports, 4 x 2 here: 24 of the 32 zmm registers, 12 of the 16 ymm ones),
// multiplied and added in registers only: the rate no matmul can beat. A peak is quoted as an
// upper bound, so the steps are asm on register operands: the compiler can
// neither drop them nor spill an accumulator between them (GCC 12 copied
// and spilled the VNNI intrinsics' accumulators, and 24 ymm chains on the
// 16 ymm registers spilled 44 times a round, quoting AVX2 hosts below
// their peak). Each thread's sum is stored to an atomic.
//
//===----------------------------------------------------------------------===//

#include "tooling/Peak.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {
#define MOEC_X12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define MOEC_X24(X)                                                                  \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) \
      X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)

/// The lanes' sum (through memory: GCC 12's _mm512_reduce_add_ps warns of
/// an uninitialized operand when its input comes from asm).
__attribute__((target("avx512f"))) float sumLanes(__m512 s) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float lane : lanes)
    total += lane;
  return total;
}

__attribute__((target("avx512f"))) float fmaChains512(long rounds) {
#define DECL(i) __m512 c##i = _mm512_set1_ps(i * 1e-3f);
// c = a c + b (AT&T operand order: the addend, the multiplier, c).
#define STEP(i) asm("vfmadd213ps %2, %1, %0" : "+v"(c##i) : "v"(a), "v"(b));
#define SUM(i) s = _mm512_add_ps(s, c##i);
  MOEC_X24(DECL)
  __m512 a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-5f);
  for (long r = 0; r < rounds; ++r) {
    MOEC_X24(STEP)
  }
  __m512 s = _mm512_setzero_ps();
  MOEC_X24(SUM)
  return sumLanes(s);
#undef DECL
#undef STEP
#undef SUM
}

__attribute__((target("avx2,fma"))) float fmaChains256(long rounds) {
#define DECL(i) __m256 c##i = _mm256_set1_ps(i * 1e-3f);
#define STEP(i) asm("vfmadd213ps %2, %1, %0" : "+x"(c##i) : "x"(a), "x"(b));
#define SUM(i) s = _mm256_add_ps(s, c##i);
  MOEC_X12(DECL)
  __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-5f);
  for (long r = 0; r < rounds; ++r) {
    MOEC_X12(STEP)
  }
  __m256 s = _mm256_setzero_ps();
  MOEC_X12(SUM)
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
#undef DECL
#undef STEP
#undef SUM
}
/// The same chains on vdpbf16ps: each lane adds two bf16 products a round.
__attribute__((target("avx512f,avx512bf16"))) float dotChains512(long rounds) {
#define DECL(i) __m512 c##i = _mm512_set1_ps(i * 1e-3f);
#define STEP(i) asm("vdpbf16ps %2, %1, %0" : "+v"(c##i) : "v"(a), "v"(b));
#define SUM(i) s = _mm512_add_ps(s, c##i);
  MOEC_X24(DECL)
  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3c00);
  for (long r = 0; r < rounds; ++r) {
    MOEC_X24(STEP)
  }
  __m512 s = _mm512_setzero_ps();
  MOEC_X24(SUM)
  return sumLanes(s);
#undef DECL
#undef STEP
#undef SUM
}

/// The i32 chains' lanes summed as the hardware's sums wrap around: unsigned,
/// not with _mm512_reduce_add_epi32's signed int arithmetic (UBSan:
/// overflow).
template <size_t N> float wrappingSum(const uint32_t (&lanes)[N]) {
  uint32_t total = 0;
  for (uint32_t lane : lanes)
    total += lane;
  return static_cast<float>(total);
}

/// The same chains on vpdpbusd: each i32 lane adds four u8 x s8 products a
/// round. In asm: GCC 12 copies and spills the accumulators of
/// _mm512_dpbusd_epi32 (measured at two thirds of this rate).
__attribute__((target("avx512f,avx512vnni"))) float vnniChains512(long rounds) {
#define DECL(i) __m512i c##i = _mm512_set1_epi32(i);
#define STEP(i) asm("vpdpbusd %2, %1, %0" : "+v"(c##i) : "v"(a), "v"(b));
#define SUM(i) s = _mm512_add_epi32(s, c##i);
  MOEC_X24(DECL)
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-5);
  for (long r = 0; r < rounds; ++r) {
    MOEC_X24(STEP)
  }
  __m512i s = _mm512_setzero_si512();
  MOEC_X24(SUM)
  alignas(64) uint32_t lanes[16];
  _mm512_store_si512(lanes, s);
  return wrappingSum(lanes);
#undef DECL
#undef STEP
#undef SUM
}

/// AVX2's int8 step without VNNI (Int8Avx2Kernel.cpp): vpmaddwd (16 16-bit
/// products summed in pairs) into a temporary, vpaddd into one of 12
/// accumulator chains. The temporary is one register for every step: each
/// vpmaddwd writes it afresh, which renaming makes independent.
__attribute__((target("avx2"))) float maddChains256(long rounds) {
#define DECL(i) __m256i c##i = _mm256_set1_epi32(i);
#define STEP(i)                                                                                              \
  asm("vpmaddwd %[b], %[a], %[t]\n\tvpaddd %[t], %[c], %[c]" : [c] "+x"(c##i), [t] "=&x"(t) : [a] "x"(a), [b] "x"(b));
#define SUM(i) s = _mm256_add_epi32(s, c##i);
  MOEC_X12(DECL)
  __m256i a = _mm256_set1_epi16(3), b = _mm256_set1_epi16(-5), t;
  for (long r = 0; r < rounds; ++r) {
    MOEC_X12(STEP)
  }
  __m256i s = _mm256_setzero_si256();
  MOEC_X12(SUM)
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), s);
  return wrappingSum(lanes);
#undef DECL
#undef STEP
#undef SUM
}

/// The tile configuration ldtilecfg reads (palette 1): eight 16 x 64-byte
/// tiles.
struct alignas(64) TileConfig {
  uint8_t palette = 1, startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};

/// Four independent accumulator tiles, each updated by tdpbf16ps (or, with
/// `int8`, tdpbssd) from operand tiles that never change: the tile unit's
/// rate, no memory.
template <bool int8>
__attribute__((target("amx-tile,amx-bf16,amx-int8"))) float amxChains(long rounds) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = 16;
    config.bytesPerRow[t] = 64;
  }
  _tile_loadconfig(&config);
  alignas(64) uint16_t operand[16 * 32];
  std::fill(std::begin(operand), std::end(operand), uint16_t(0x3c00)); // bf16 2^-7
  alignas(64) float out[16 * 16];
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long r = 0; r < rounds; ++r) {
    if constexpr (int8) {
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 4, 7);
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    } else {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, out, 64);
  float sum = out[0];
  _tile_stored(3, out, 64);
  sum += out[255];
  _tile_release();
  return sum;
}

} // namespace

double moec::bestOfFive(long rounds, double opsPerRound, llvm::function_ref<unsigned()> attempt) {
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    unsigned threads = attempt();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (threads == 0)
      return 0;
    best = std::max(best, threads * rounds * opsPerRound / s / 1e9);
  }
  return best;
}

bool moec::amxTilesGranted() {
  // The kernel grants the tile state only where the CPU has AMX; without
  // it the first tile instruction would fault.
  constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
}

moec::PeakLoop moec::amxBf16PeakLoop() {
  return {amxTilesGranted() ? amxChains<false> : nullptr, 4 * 16 * 16 * 32 * 2.0, 1000e9};
}

moec::PeakLoop moec::avx512Bf16PeakLoop() {
  return {__builtin_cpu_supports("avx512bf16") ? dotChains512 : nullptr, 24 * 16 * 2 * 2.0, 200e9};
}

moec::PeakLoop moec::amxInt8PeakLoop() {
  return {amxTilesGranted() ? amxChains<true> : nullptr, 4 * 16 * 16 * 64 * 2.0, 2000e9};
}

moec::PeakLoop moec::vnniPeakLoop() {
  return {__builtin_cpu_supports("avx512vnni") ? vnniChains512 : nullptr, 24 * 16 * 4 * 2.0, 400e9};
}

moec::PeakLoop moec::avx2MaddPeakLoop() {
  // 12 ymm steps of 16 products, each a multiply and an add.
  return {__builtin_cpu_supports("avx2") ? maddChains256 : nullptr, 12 * 16 * 2.0, 100e9};
}

moec::PeakLoop moec::fp32PeakLoop() {
  // 24 zmm chains of 16 lanes, or 12 ymm chains of 8.
  if (__builtin_cpu_supports("avx512f"))
    return {fmaChains512, 24.0 * 16 * 2, 100e9};
  return {fmaChains256, 12.0 * 8 * 2, 100e9};
}

long moec::PeakLoop::roundsFor(double seconds) const {
  return std::max(1L, static_cast<long>(seconds * ratePerThread / opsPerRound));
}

namespace {
/// `loop`'s rate over `threads` threads for about `seconds`, best of five;
/// 0 where this host lacks its unit.
double unitPeak(const moec::PeakLoop &loop, unsigned threads, double seconds) {
  if (!loop.run)
    return 0;
  threads = std::max(1u, threads);
  long rounds = loop.roundsFor(seconds);
  // The chains' sums go to an atomic: stores the compiler must keep.
  std::atomic<float> sink{0};
  return moec::bestOfFive(rounds, loop.opsPerRound, [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] { sink.store(loop.run(rounds)); });
    for (auto &th : pool)
      th.join();
    return threads;
  });
}
} // namespace

double moec::measureAmxBf16PeakGflops(unsigned threads, double seconds) {
  return unitPeak(amxBf16PeakLoop(), threads, seconds);
}

double moec::measureAvx512Bf16PeakGflops(unsigned threads, double seconds) {
  return unitPeak(avx512Bf16PeakLoop(), threads, seconds);
}

double moec::measureAmxInt8PeakGops(unsigned threads, double seconds) {
  return unitPeak(amxInt8PeakLoop(), threads, seconds);
}

double moec::measureVnniPeakGops(unsigned threads, double seconds) {
  return unitPeak(vnniPeakLoop(), threads, seconds);
}

double moec::measureAvx2MaddPeakGops(unsigned threads, double seconds) {
  return unitPeak(avx2MaddPeakLoop(), threads, seconds);
}

double moec::measureFp32PeakGflops(unsigned threads, double seconds) {
  return unitPeak(fp32PeakLoop(), threads, seconds);
}

namespace {
/// Sums `count` floats (a multiple of 64 x kStreams) with eight independent
/// AVX2 accumulators, as kStreams streams of count / kStreams floats read
/// side by side, each fetching 2 KiB ahead when `fetchAhead`: a read the
/// memory, not the adds or the loads, bounds (two 32-byte loads a cycle are
/// far above what DRAM gives a core; AVX2 is on every host moec runs on).
/// One plain stream is the simplest read; four fetching ahead are what the
/// kernels' prefetching reads reach: on a 2-core Sapphire Rapids VM one
/// plain stream measured 22-30 GB/s where four read 37-39, and moec's f32
/// blocks at T 16 read their weights at 104-112% of the plain stream's rate.
template <int kStreams, bool fetchAhead>
__attribute__((target("avx2"))) float readStreams256(const float *data, size_t count) {
  constexpr size_t kAheadFloats = 2048 / sizeof(float);
  size_t per = count / kStreams;
  __m256 acc[8];
  for (__m256 &a : acc)
    a = _mm256_setzero_ps();
  for (size_t i = 0; i < per; i += 64)
    for (int s = 0; s < kStreams; ++s) {
      const float *p = data + s * per + i;
      // Past a stream's end only into the next stream (the last one's
      // fetches past the buffer fall on nothing it reads: prefetches do
      // not fault).
      if constexpr (fetchAhead)
        for (int line = 0; line < 4; ++line)
          _mm_prefetch(reinterpret_cast<const char *>(p + kAheadFloats + 16 * line), _MM_HINT_T0);
      for (int j = 0; j < 8; ++j)
        acc[j] = _mm256_add_ps(acc[j], _mm256_load_ps(p + 8 * j));
    }
  for (int j = 1; j < 8; ++j)
    acc[0] = _mm256_add_ps(acc[0], acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  float total = 0;
  for (float lane : lanes)
    total += lane;
  return total;
}
} // namespace

double moec::measureReadGBps(unsigned threads, size_t bytes) {
  threads = std::max(1u, threads);
  // Whole 1 KiB blocks per thread (four streams of 256-byte steps), each
  // thread's part 64-byte aligned.
  size_t perThread = bytes / threads / 1024 * 1024;
  if (perThread == 0)
    return 0;
  size_t floatsPerThread = perThread / sizeof(float);
  float *data = static_cast<float *>(std::aligned_alloc(64, perThread * threads));
  if (!data)
    return 0;
  // Each part filled and read by a thread of its own (not pinned: the same
  // node on these one-node machines).
  auto forEachThread = [&](auto body) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { body(data + t * floatsPerThread); });
    for (auto &th : pool)
      th.join();
  };
  // Every 4 KiB page its own content (a marker: the page's number, small
  // normal floats elsewhere): pages alike could be merged by the host (KSM)
  // into one physical page, read from the caches.
  forEachThread([&](float *part) {
    size_t first = size_t(part - data);
    for (size_t i = 0; i < floatsPerThread; ++i) {
      size_t g = first + i;
      part[i] = g % 1024 == 0 ? float(g / 1024) : float(g % 1024);
    }
  });
  std::atomic<float> sink{0};
  double best = 0;
  // Each attempt streams the buffer four times (tens of milliseconds: the
  // threads' start is noise), one plain stream a thread and four fetching
  // ahead in turn; the best of five of each. An upper bound is the best
  // any reading pattern reaches, not the plainest one's.
  constexpr int kPasses = 4;
  for (auto *read : {&readStreams256<1, false>, &readStreams256<4, true>})
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto start = std::chrono::steady_clock::now();
      forEachThread([&](float *part) {
        float sum = 0;
        for (int pass = 0; pass < kPasses; ++pass) {
          // The streams read memory only: without this the compiler may
          // call one once for all the passes (measured: 4x the bandwidth).
          asm volatile("" : : : "memory");
          sum += read(part, floatsPerThread);
        }
        sink.store(sum);
      });
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, double(kPasses) * double(perThread) * threads / s / 1e9);
    }
  std::free(data);
  return best;
}

// From Linux's cache description of cpu0: glibc's _SC_LEVEL3_CACHE_SIZE
// (which strategy's MachineModel::hostCaches reads for L1 and L2, where it
// is right) said 320 MiB for this VM's 32 MiB L3. Where Linux describes no
// cache (a VM without /sys/devices/system/cpu/cpu0/cache), glibc's largest
// level: an overstated L3 counts some DRAM-sized blocks as cached (moe-bench
// --llc-mib corrects it), where no size at all counted a block of kilobytes
// as read from DRAM.
moec::LastLevelCache moec::lastLevelCache() {
  static const LastLevelCache cache = [] {
    double largest = 0;
    for (int index = 0; index < 8; ++index) {
      // Read as a stream: sysfs files report a size of 4096 bytes.
      auto size = llvm::MemoryBuffer::getFileAsStream("/sys/devices/system/cpu/cpu0/cache/index" +
                                                      std::to_string(index) + "/size");
      if (!size)
        break;
      llvm::StringRef text = (*size)->getBuffer().trim();
      double scale = text.consume_back("K") ? 1024 : text.consume_back("M") ? 1048576 : 1;
      uint64_t value;
      if (!text.getAsInteger(10, value))
        largest = std::max(largest, double(value) * scale);
    }
    if (largest > 0)
      return LastLevelCache{largest, false};
#ifdef _SC_LEVEL3_CACHE_SIZE
    for (int name : {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE})
      largest = std::max(largest, double(std::max(0L, sysconf(name))));
#endif
    return LastLevelCache{largest, largest > 0};
  }();
  return cache;
}
