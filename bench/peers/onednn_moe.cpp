//===- onednn_moe.cpp - oneDNN per-expert MoE peer for moe-bench ----------===//
//
// The MoE block's forward as a oneDNN user would write it: one matmul
// primitive per expert for the up projection ([m_e,H] x [H,2M], gate and up
// fused as W13, gate columns first) and one for the down projection
// ([m_e,M] x [M,H]), created at setup for the row count m_e the routing gives
// that expert, with weights of format_tag::any reordered once at setup into
// the layout the primitive prefers. The timed forward zeroes y, and per
// expert gathers its x rows into a contiguous buffer, runs the up matmul,
// SwiGLU (f32 math), the down matmul, and adds the rows times the routing
// weight into y.
//
//   y[t] = sum_k w[t,k] * (silu(x[t] @ W1[e]) * (x[t] @ W3[e])) @ W2[e]
//
// Ids outside [0, E) (null slots >= E, and negative ids, as moe.pack does)
// are left out and cost nothing. x and the weights come from the closed
// formula in detValue, shared with bench/peers/torch_moe.py, so the two peers
// compute the same y. One result line goes to stdout:
//
//   PEER peer=onednn dtype=... tokens=T topk=K experts=E hidden=H mlp_dim=M
//        threads=N real_assignments=A median_ms=X tflops=Y tokens_per_s=Z
//
// with FLOPs = 6*H*M*A; everything else goes to stderr.
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

const char *const kProg = "moe-peer-onednn";

[[noreturn]] void fail(const std::string &msg) {
  std::fprintf(stderr, "%s: error: %s\n", kProg, msg.c_str());
  std::exit(1);
}

void usage(FILE *out) {
  std::fprintf(out,
               "usage: %s --routing DIR --hidden H --mlp-dim M --experts E\n"
               "         [--dtype f32|bf16] [--iters N] [--warmup W] [--threads N]\n"
               "         [--check] [--dump-y FILE.npy]\n"
               "\n"
               "oneDNN per-expert MoE peer for moe-bench (forward only).\n"
               "  --routing DIR   DIR/ids.npy (int32 [T,K]) and DIR/weights.npy (float32 [T,K])\n"
               "  --dtype         f32 (default) or bf16 (bf16 src/weights, f32 accumulation and y)\n"
               "  --iters N       timed iterations, median reported (default 5)\n"
               "  --warmup W      untimed iterations first (default 1)\n"
               "  --threads N     OpenMP threads (default: OMP_NUM_THREADS if set, else 2)\n"
               "  --check         compare y with a double reference on <= 32 sampled tokens\n"
               "  --dump-y FILE   write y [T,H] as float32 .npy\n",
               kProg);
}

struct Options {
  std::string routing;
  int64_t hidden = 0, mlpDim = 0, experts = 0;
  bool bf16 = false;
  int64_t iters = 5, warmup = 1, threads = 0; // threads 0: not given
  bool check = false;
  std::string dumpY;
};

int64_t parseInt(const std::string &opt, const std::string &text, int64_t min) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0')
    fail(opt + ": '" + text + "' is not an integer");
  if (v < min)
    fail(opt + ": '" + text + "' must be >= " + std::to_string(min));
  return v;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  bool haveRouting = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool inlineValue = false;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        inlineValue = true;
      }
    }
    auto next = [&]() -> std::string {
      if (inlineValue)
        return value;
      if (i + 1 >= argc)
        fail(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (arg == "--routing") {
      o.routing = next();
      haveRouting = true;
    } else if (arg == "--hidden") {
      o.hidden = parseInt(arg, next(), 1);
    } else if (arg == "--mlp-dim") {
      o.mlpDim = parseInt(arg, next(), 1);
    } else if (arg == "--experts") {
      o.experts = parseInt(arg, next(), 1);
    } else if (arg == "--dtype") {
      std::string d = next();
      if (d == "f32")
        o.bf16 = false;
      else if (d == "bf16")
        o.bf16 = true;
      else
        fail("--dtype: '" + d + "' is not f32 or bf16");
    } else if (arg == "--iters") {
      o.iters = parseInt(arg, next(), 1);
    } else if (arg == "--warmup") {
      o.warmup = parseInt(arg, next(), 0);
    } else if (arg == "--threads") {
      o.threads = parseInt(arg, next(), 1);
    } else if (arg == "--check" && !inlineValue) {
      o.check = true;
    } else if (arg == "--dump-y") {
      o.dumpY = next();
    } else {
      usage(stderr);
      fail("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  std::string missing;
  if (!haveRouting)
    missing += " --routing";
  if (!o.hidden)
    missing += " --hidden";
  if (!o.mlpDim)
    missing += " --mlp-dim";
  if (!o.experts)
    missing += " --experts";
  if (!missing.empty()) {
    usage(stderr);
    fail("missing required option(s):" + missing);
  }
  return o;
}

//===----------------------------------------------------------------------===//
// Deterministic inputs, shared with torch_moe.py (det_uniform there).
// value(tag, i) = (k - 2^23) * (scale / 2^23), k = top 24 bits of
// splitmix64(i + tag * 0x9E3779B97F4A7C15), computed in double and rounded to
// float: uniform in [-scale, scale). Flat indices:
//   x   [T,H]     tag 1  i = t*H + h                       scale 1
//   W13 [E,H,2M]  tag 2  i = (e*H + h)*2M + j (j < M: W1)  scale kWScale
//   W2  [E,M,H]   tag 3  i = (e*M + m)*H + h               scale kWScale
//===----------------------------------------------------------------------===//

constexpr uint64_t kTagX = 1, kTagW13 = 2, kTagW2 = 3;
constexpr double kXScale = 1.0;
constexpr double kWScale = 0.0346; // uniform +-0.0346: standard deviation ~0.02

inline float detValue(uint64_t tag, uint64_t i, double scale) {
  uint64_t z = i + tag * 0x9E3779B97F4A7C15ull;
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  int64_t k = static_cast<int64_t>(z >> 40) - (int64_t(1) << 23);
  return static_cast<float>(static_cast<double>(k) * (scale / 8388608.0));
}

//===----------------------------------------------------------------------===//
// SwiGLU: h[j] = silu(g[j]) * u[j] in f32, with an exp simple enough to
// vectorize (glibc's expf does not without -ffast-math). One row per call,
// in an AVX-512 version where the CPU has it (target_clones cannot name
// avx512bw, which the bf16 stores need) and a generic one otherwise.
//===----------------------------------------------------------------------===//

// exp(x) = 2^n * p(r), n = round(x / ln2), r = x - n ln2 (Cody-Waite split),
// p = degree-6 Taylor polynomial: within ~2 ulp of expf on [-87, 88].
__attribute__((always_inline)) inline float vexp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // Round to nearest by adding and subtracting 1.5 * 2^23 (std::floor does
  // not vectorize here).
  float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

__attribute__((always_inline)) inline uint16_t toBf16(float f) {
  uint32_t b; // round to nearest even; the inputs are finite
  std::memcpy(&b, &f, sizeof b);
  b += 0x7FFFu + ((b >> 16) & 1u);
  return static_cast<uint16_t>(b >> 16);
}

__attribute__((always_inline)) inline float store(float f, float *) { return f; }
__attribute__((always_inline)) inline uint16_t store(float f, uint16_t *) { return toBf16(f); }

template <typename Out>
__attribute__((always_inline)) inline void swigluBody(const float *g, const float *u, Out *h,
                                                      int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    h[j] = store(g[j] / (1.0f + vexp(-g[j])) * u[j], h);
}

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
AVX512 void swigluAvx512(const float *g, const float *u, float *h, int64_t n) {
  swigluBody(g, u, h, n);
}
AVX512 void swigluAvx512(const float *g, const float *u, uint16_t *h, int64_t n) {
  swigluBody(g, u, h, n);
}
#undef AVX512
void swigluGeneric(const float *g, const float *u, float *h, int64_t n) { swigluBody(g, u, h, n); }
void swigluGeneric(const float *g, const float *u, uint16_t *h, int64_t n) {
  swigluBody(g, u, h, n);
}

bool haveAvx512() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  }();
  return have;
}

template <typename Out> void swigluRow(const float *g, const float *u, Out *h, int64_t n) {
  haveAvx512() ? swigluAvx512(g, u, h, n) : swigluGeneric(g, u, h, n);
}

//===----------------------------------------------------------------------===//

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};
using AlignedBuf = std::unique_ptr<char, AlignedFree>;

AlignedBuf alignedAlloc(size_t bytes) {
  size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    throw std::bad_alloc();
  return AlignedBuf(static_cast<char *>(p));
}

struct Expert {
  std::vector<int32_t> tokens; // row r of this expert is token tokens[r]
  std::vector<float> weights;  // and carries routing weight weights[r]
  dnnl::matmul up, down;
  dnnl::memory upSrc, upWei, upDst, downSrc, downWei, downDst;
};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

dnnl::matmul::primitive_desc matmulPd(const dnnl::engine &eng, const dnnl::memory::desc &src,
                                      const dnnl::memory::desc &wei,
                                      const dnnl::memory::desc &dst) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(eng, src, wei, dst);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, dst), eng);
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int run(const Options &o) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;

  // Threads first, before oneDNN creates anything.
  if (o.threads > 0)
    omp_set_num_threads(static_cast<int>(o.threads));
  else if (!std::getenv("OMP_NUM_THREADS"))
    omp_set_num_threads(2);
  const int threads = omp_get_max_threads();

  // Routing.
  std::string err;
  auto readArray = [&](const std::string &name, moec::DType want) {
    std::string path = o.routing + "/" + name;
    auto arr = moec::readNpy(path, err);
    if (!arr)
      fail(err);
    auto buf = moec::toBuffer(*arr, want, err);
    if (!buf)
      fail(path + ": " + err);
    return std::move(*buf);
  };
  moec::Buffer idsBuf = readArray("ids.npy", moec::DType::I32);
  moec::Buffer wBuf = readArray("weights.npy", moec::DType::F32);
  if (idsBuf.rank() != 2 || idsBuf.shape()[0] == 0 || idsBuf.shape()[1] == 0)
    fail(o.routing + "/ids.npy: shape " + moec::shapeString(idsBuf.shape()) +
         " is not a non-empty [T,K]");
  if (wBuf.shape() != idsBuf.shape())
    fail(o.routing + "/weights.npy: shape " + moec::shapeString(wBuf.shape()) +
         " does not match ids.npy " + moec::shapeString(idsBuf.shape()));
  if (!o.dumpY.empty()) { // fail now rather than after the run
    FILE *f = std::fopen(o.dumpY.c_str(), "ab");
    if (!f)
      fail("--dump-y: " + o.dumpY + ": cannot create: " + std::strerror(errno));
    std::fclose(f);
  }
  const int64_t T = idsBuf.shape()[0], K = idsBuf.shape()[1];
  const int64_t H = o.hidden, M = o.mlpDim, E = o.experts;
  const int32_t *ids = idsBuf.as<int32_t>();
  const float *rw = wBuf.as<float>();

  std::vector<Expert> experts(E);
  int64_t real = 0, maxRows = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t k = 0; k < K; ++k) {
      int64_t e = ids[t * K + k];
      if (e < 0 || e >= E)
        continue;
      experts[e].tokens.push_back(static_cast<int32_t>(t));
      experts[e].weights.push_back(rw[t * K + k]);
      ++real;
    }
  for (auto &ex : experts)
    maxRows = std::max<int64_t>(maxRows, ex.tokens.size());

  const dt wdt = o.bf16 ? dt::bf16 : dt::f32;
  const size_t es = o.bf16 ? 2 : 4;
  auto t0 = Clock::now();

  // x in the compute dtype, as the block's input would be.
  AlignedBuf x = alignedAlloc(T * H * es);
#pragma omp parallel for
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      float v = detValue(kTagX, t * H + h, kXScale);
      if (o.bf16)
        reinterpret_cast<uint16_t *>(x.get())[t * H + h] = moec::f32ToBf16(v);
      else
        reinterpret_cast<float *>(x.get())[t * H + h] = v;
    }

  // Shared work buffers, sized for the largest expert.
  AlignedBuf src = alignedAlloc(maxRows * H * es);
  AlignedBuf upOut = alignedAlloc(maxRows * 2 * M * sizeof(float));
  AlignedBuf hBuf = alignedAlloc(maxRows * M * es);
  AlignedBuf downOut = alignedAlloc(maxRows * H * sizeof(float));
  AlignedBuf yBuf = alignedAlloc(T * H * sizeof(float));
  float *y = reinterpret_cast<float *>(yBuf.get());

  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  std::vector<float> plain(std::max(H * 2 * M, M * H));
  std::string upImpl, downImpl;
  int64_t active = 0;
  for (int64_t e = 0; e < E; ++e) {
    Expert &ex = experts[e];
    const int64_t m = ex.tokens.size();
    if (m == 0)
      continue;
    ++active;
    auto upPd = matmulPd(eng, memory::desc({m, H}, wdt, tag::ab),
                         memory::desc({H, 2 * M}, wdt, tag::any),
                         memory::desc({m, 2 * M}, dt::f32, tag::ab));
    auto downPd = matmulPd(eng, memory::desc({m, M}, wdt, tag::ab),
                           memory::desc({M, H}, wdt, tag::any),
                           memory::desc({m, H}, dt::f32, tag::ab));
    ex.up = matmul(upPd);
    ex.down = matmul(downPd);
    ex.upSrc = memory(upPd.src_desc(), eng, src.get());
    ex.upDst = memory(upPd.dst_desc(), eng, upOut.get());
    ex.downSrc = memory(downPd.src_desc(), eng, hBuf.get());
    ex.downDst = memory(downPd.dst_desc(), eng, downOut.get());
    if (m == maxRows) {
      upImpl = upPd.impl_info_str();
      downImpl = downPd.impl_info_str();
    }

    // Weights: generated plain (row-major f32), reordered once into the
    // primitive's layout and dtype.
    auto prepack = [&](const memory::desc &want, int64_t rows, int64_t cols, uint64_t tagId,
                       uint64_t base) {
      float *p = plain.data();
#pragma omp parallel for
      for (int64_t i = 0; i < rows * cols; ++i)
        p[i] = detValue(tagId, base + i, kWScale);
      memory user(memory::desc({rows, cols}, dt::f32, tag::ab), eng, p);
      memory packed(want, eng);
      reorder(user, packed).execute(strm, user, packed);
      strm.wait();
      return packed;
    };
    ex.upWei = prepack(upPd.weights_desc(), H, 2 * M, kTagW13, uint64_t(e) * H * 2 * M);
    ex.downWei = prepack(downPd.weights_desc(), M, H, kTagW2, uint64_t(e) * M * H);
  }
  plain = std::vector<float>();
  std::fprintf(stderr,
               "%s: setup %.1f s: T=%lld K=%lld E=%lld (%lld with rows, max %lld rows) H=%lld "
               "M=%lld dtype=%s threads=%d\n%s: largest expert's matmuls: up %s, down %s\n",
               kProg, since(t0), (long long)T, (long long)K, (long long)E, (long long)active,
               (long long)maxRows, (long long)H, (long long)M, o.bf16 ? "bf16" : "f32", threads,
               kProg, upImpl.c_str(), downImpl.c_str());

  // The forward. Phase times (seconds) are summed into `phase`.
  enum { Gather, Up, Swiglu, Down, Scatter, NumPhases };
  double phase[NumPhases] = {};
  auto forward = [&]() {
#pragma omp parallel for
    for (int64_t t = 0; t < T; ++t)
      std::memset(y + t * H, 0, H * sizeof(float));
    for (int64_t e = 0; e < E; ++e) {
      Expert &ex = experts[e];
      const int64_t m = ex.tokens.size();
      if (m == 0)
        continue;
      const int32_t *tok = ex.tokens.data();
      const float *wt = ex.weights.data();

      auto c = Clock::now();
      char *s = src.get();
      const char *xs = x.get();
#pragma omp parallel for
      for (int64_t r = 0; r < m; ++r)
        std::memcpy(s + r * H * es, xs + int64_t(tok[r]) * H * es, H * es);
      phase[Gather] += since(c);

      c = Clock::now();
      ex.up.execute(strm, {{DNNL_ARG_SRC, ex.upSrc},
                           {DNNL_ARG_WEIGHTS, ex.upWei},
                           {DNNL_ARG_DST, ex.upDst}});
      strm.wait();
      phase[Up] += since(c);

      c = Clock::now();
      const float *gu = reinterpret_cast<const float *>(upOut.get());
      if (o.bf16) {
        uint16_t *hb = reinterpret_cast<uint16_t *>(hBuf.get());
#pragma omp parallel for
        for (int64_t r = 0; r < m; ++r)
          swigluRow(gu + r * 2 * M, gu + r * 2 * M + M, hb + r * M, M);
      } else {
        float *hf = reinterpret_cast<float *>(hBuf.get());
#pragma omp parallel for
        for (int64_t r = 0; r < m; ++r)
          swigluRow(gu + r * 2 * M, gu + r * 2 * M + M, hf + r * M, M);
      }
      phase[Swiglu] += since(c);

      c = Clock::now();
      ex.down.execute(strm, {{DNNL_ARG_SRC, ex.downSrc},
                             {DNNL_ARG_WEIGHTS, ex.downWei},
                             {DNNL_ARG_DST, ex.downDst}});
      strm.wait();
      phase[Down] += since(c);

      // Split the columns between the threads, so that a token appearing
      // twice in one expert (a routing may do that) never races.
      c = Clock::now();
      const float *out = reinterpret_cast<const float *>(downOut.get());
#pragma omp parallel
      {
        const int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        const int64_t chunk = ((H + nt - 1) / nt + 15) / 16 * 16;
        const int64_t c0 = std::min(H, id * chunk), c1 = std::min(H, c0 + chunk);
        for (int64_t r = 0; r < m; ++r) {
          float *yr = y + int64_t(tok[r]) * H;
          const float *orow = out + r * H;
          const float w = wt[r];
#pragma omp simd
          for (int64_t j = c0; j < c1; ++j)
            yr[j] += w * orow[j];
        }
      }
      phase[Scatter] += since(c);
    }
  };

  for (int64_t i = 0; i < o.warmup; ++i)
    forward();
  std::fill(std::begin(phase), std::end(phase), 0.0);
  std::vector<double> times;
  for (int64_t i = 0; i < o.iters; ++i) {
    auto c = Clock::now();
    forward();
    times.push_back(since(c));
    std::fprintf(stderr, "%s: iter %lld: %.3f ms\n", kProg, (long long)i, times.back() * 1e3);
  }
  const double med = median(times);
  std::fprintf(stderr,
               "%s: mean per iteration: gather %.3f ms, up %.3f ms, swiglu %.3f ms, "
               "down %.3f ms, scatter %.3f ms\n",
               kProg, phase[Gather] * 1e3 / o.iters, phase[Up] * 1e3 / o.iters,
               phase[Swiglu] * 1e3 / o.iters, phase[Down] * 1e3 / o.iters,
               phase[Scatter] * 1e3 / o.iters);

  if (o.check) {
    // y on sampled tokens in double from the formulas, with x and the weights
    // rounded to bf16 when the peer computes in bf16.
    auto q = [&](float v) { return o.bf16 ? double(moec::bf16ToF32(moec::f32ToBf16(v))) : double(v); };
    const int64_t stride = std::max<int64_t>(1, (T + 31) / 32);
    double maxErr = 0, maxRef = 0;
    bool finite = true;
    int64_t checked = 0;
    std::vector<double> xr(H), g(2 * M), hv(M), ref(H);
    for (int64_t t = 0; t < T; t += stride, ++checked) {
      std::fill(ref.begin(), ref.end(), 0.0);
      for (int64_t h = 0; h < H; ++h)
        xr[h] = q(detValue(kTagX, t * H + h, kXScale));
      for (int64_t k = 0; k < K; ++k) {
        int64_t e = ids[t * K + k];
        if (e < 0 || e >= E)
          continue;
#pragma omp parallel for
        for (int64_t j = 0; j < 2 * M; ++j) {
          double acc = 0;
          for (int64_t h = 0; h < H; ++h)
            acc += xr[h] * q(detValue(kTagW13, (uint64_t(e) * H + h) * 2 * M + j, kWScale));
          g[j] = acc;
        }
        for (int64_t j = 0; j < M; ++j)
          hv[j] = g[j] / (1.0 + std::exp(-g[j])) * g[M + j];
        const double w = rw[t * K + k];
#pragma omp parallel for
        for (int64_t h = 0; h < H; ++h) {
          double acc = 0;
          for (int64_t j = 0; j < M; ++j)
            acc += hv[j] * q(detValue(kTagW2, (uint64_t(e) * M + j) * H + h, kWScale));
          ref[h] += w * acc;
        }
      }
      for (int64_t h = 0; h < H; ++h) {
        double v = y[t * H + h];
        finite = finite && std::isfinite(v);
        maxErr = std::max(maxErr, std::fabs(v - ref[h]));
        maxRef = std::max(maxRef, std::fabs(ref[h]));
      }
    }
    const double rel = maxErr / std::max(maxRef, 1e-30), tol = o.bf16 ? 3e-2 : 1e-4;
    const bool ok = finite && rel <= tol;
    std::fprintf(stderr, "%s: check: %lld tokens, max|y-ref|/max|ref| = %.3g (tolerance %g): %s\n",
                 kProg, (long long)checked, rel, tol, ok ? "ok" : "FAILED");
    if (!ok)
      return 1;
  }

  if (!o.dumpY.empty()) {
    moec::Buffer out(moec::DType::F32, {T, H});
    std::memcpy(out.data(), y, T * H * sizeof(float));
    if (!moec::writeNpy(o.dumpY, out, err))
      fail("--dump-y: " + err);
  }

  const double flops = 6.0 * double(H) * double(M) * double(real);
  std::printf("PEER peer=onednn dtype=%s tokens=%lld topk=%lld experts=%lld hidden=%lld "
              "mlp_dim=%lld threads=%d real_assignments=%lld median_ms=%.3f tflops=%.4f "
              "tokens_per_s=%.1f\n",
              o.bf16 ? "bf16" : "f32", (long long)T, (long long)K, (long long)E, (long long)H,
              (long long)M, threads, (long long)real, med * 1e3, flops / med / 1e12,
              double(T) / med);
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  try {
    return run(o);
  } catch (const dnnl::error &e) {
    std::string why = std::string("oneDNN: ") + e.what() + " (status " + std::to_string(int(e.status)) + ")";
    // dnnl_unimplemented: no implementation of the matmul for these types
    // on this CPU (oneDNN 2.6's bf16 matmul needs AVX-512).
    if (e.status == dnnl_unimplemented)
      why += ": this oneDNN has no " + std::string(o.bf16 ? "bf16" : "f32") + " matmul for this CPU";
    fail(why);
  } catch (const std::bad_alloc &) {
    fail("out of memory (shapes too large for this machine?)");
  }
}
