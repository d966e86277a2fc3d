//===- GmmTiling.cpp - cost model and tuning table for the gmm tiles ------===//

#include "strategy/GmmTiling.h"

#include "strategy/TargetCpu.h"
#include "runtime/AtomicFile.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir::moe::strategy;

std::string GmmTiling::str() const {
  return "mr=" + std::to_string(rows) + ",nv=" + std::to_string(vectors) +
         ",kc=" + std::to_string(depthBlock) + ",nc=" + std::to_string(columnBlock) +
         ",mc=" + std::to_string(rowBlock);
}

llvm::Expected<GmmTiling> GmmTiling::parse(llvm::StringRef text) {
  GmmTiling t;
  llvm::SmallVector<llvm::StringRef> items;
  text.trim().split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    int64_t v = 0;
    if (value.trim().getAsInteger(10, v) || v <= 0)
      return llvm::createStringError("gmm tiling '" + text.str() + "': '" + item.str() +
                                     "' is not key=positive integer");
    if (key == "mr")
      t.rows = v;
    else if (key == "nv")
      t.vectors = v;
    else if (key == "kc")
      t.depthBlock = v;
    else if (key == "nc")
      t.columnBlock = v;
    else if (key == "mc")
      t.rowBlock = v;
    else
      return llvm::createStringError("gmm tiling '" + text.str() + "': unknown key '" +
                                     key.str() + "' (expected mr, nv, kc, nc, mc)");
  }
  return t;
}

std::string GmmTiling::invalidReason(bool swiglu, int64_t vectorRegisters) const {
  // Accumulators, one weight vector each, one broadcast: the register file
  // (first: the most telling refusal of a tile too large).
  // (Sizes past any register file are gmmTileError's, before a product
  // that could overflow.)
  if (rows > 0 && vectors > 0 && rows <= kMaxTileBlock && vectors <= kMaxTileBlock &&
      registersFor(rows, vectors) > vectorRegisters)
    return "register tile mr=" + std::to_string(rows) + " x nv=" + std::to_string(vectors) +
           " needs " + std::to_string(registersFor(rows, vectors)) +
           " vector registers, more than the target's " + std::to_string(vectorRegisters);
  return gmmTileError(rows, vectors, depthBlock, columnBlock, rowBlock, swiglu);
}

GmmTiling GmmTiling::of(GmmLoweringAttr lowering) {
  GmmTiling t;
  t.rows = lowering.getMr(), t.vectors = lowering.getNv(), t.depthBlock = lowering.getKc();
  t.columnBlock = lowering.getNc(), t.rowBlock = lowering.getMc();
  return t;
}

MachineModel MachineModel::hostCaches() {
  MachineModel m;
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE); l1 > 0)
    m.l1Bytes = l1;
  if (long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0)
    m.l2Bytes = l2;
#endif
  return m;
}

MachineModel MachineModel::fromTarget(TargetAttr target) {
  // The features' rules are forFeatures'; the numbers are the attribute's
  // (which may have been edited).
  llvm::StringMap<bool> features;
  for (Attribute f : target.getFeatures())
    features[cast<StringAttr>(f).getValue()] = true;
  MachineModel m = forFeatures(features, /*host=*/false);
  m.vectorRegisters = target.getVectorRegisters();
  m.l1Bytes = target.getL1Bytes();
  m.l2Bytes = target.getL2Bytes();
  return m;
}

int64_t mlir::moe::strategy::packedColumnsFor(const GmmShape &shape, bool int8,
                                              const MachineModel &machine) {
  auto roundUp = [](int64_t v, int64_t m) { return (v + m - 1) / m * m; };
  int64_t depthPerLane = int8 ? 4 : 2;      // depth values in a 32-bit lane
  int64_t tileDepth = 64 / (4 / depthPerLane); // depth values in a 64-byte tile row
  int64_t rowBytes = roundUp(shape.depth, tileDepth) * 4 / depthPerLane;
  int64_t needed = roundUp(shape.swiglu ? 2 * roundUp(shape.width, 16) : shape.width, 32);
  // Whole register tiles: the dot kernels' tiles are two column pairs (64
  // weight columns); a block of an odd number of pairs computes its last pair
  // twice (measured: the down projection at 160 columns, 5 pairs, ran at 72%
  // of the peak where the up one at 128 ran at 85%). A weight too deep for
  // 64 columns in half of L2 keeps one pair (32), as before: a 64-column block
  // would fill most of L2 (not measured against the doubled pair).
  int64_t fitting = (machine.l2Bytes / 2) / rowBytes;
  int64_t columns = fitting < 64 ? 32 : std::min<int64_t>(fitting / 64 * 64, 512);
  return std::min(columns, needed);
}

MachineModel MachineModel::forFeatures(const llvm::StringMap<bool> &features, bool host) {
  MachineModel m = host ? hostCaches() : MachineModel();
  // 16-lane f32 vectors the register file holds: 32 zmm, or 16 ymm (two a
  // vector) without AVX-512.
  m.vectorRegisters = features.lookup("avx512f") ? 32 : 8;
  m.amxBf16 = features.lookup("amx-tile") && features.lookup("amx-bf16");
  m.amxInt8 = features.lookup("amx-tile") && features.lookup("amx-int8");
  m.avx512Bf16 = features.lookup("avx512bf16");
  m.avx512Vnni = features.lookup("avx512vnni");
  m.avx2 = features.lookup("avx2");
  return m;
}

MachineModel MachineModel::target() {
  return forFeatures(targetCpuFeatures(), targetCpuOverride().empty());
}

std::string GmmShape::key() const {
  return "D=" + std::to_string(depth) + ",N=" + std::to_string(width) +
         ",swiglu=" + std::to_string(swiglu ? 1 : 0) + ",bytes=" + std::to_string(elementBytes);
}

namespace {
/// The most bytes of the fma kind's packed f32 weight block (costModelTiling).
constexpr int64_t kMaxWeightBlockBytes = 256 * 1024;
} // namespace

GmmTiling mlir::moe::strategy::costModelTiling(const GmmShape &shape,
                                              const MachineModel &machine) {
  GmmTiling t;
  // Four vectors a row (a 64-float row of the weight panel: four cache
  // lines, loads that never split), then as many rows as the register file
  // holds beside the four weight vectors and the broadcast.
  // Where the register file holds fewer (AVX2's 16 ymm hold 8 16-lane
  // vectors): one vector a row, so that 6 rows give 12 ymm accumulators, more
  // than the 8 FMAs in flight (2 ports x 4 cycles) that a 2 x 2 tile's 8
  // barely cover, and 2 weight loads per 12 FMAs instead of 4 per 8 from the
  // L2-resident panels. Measured on AMD EPYC znver3 (moe-kernel-bench, 2048
  // rows x 1408 x 2048, 2 threads, best of 6): 2 x 2 83.8 ms, 6 x 1 72.1-74.2,
  // 4 x 1 77.9. A fused SwiGLU splits the one vector (8 gate and 8 up
  // lanes): measured there at 546 rows x 1408 x 2048 (2816 weight columns,
  // moe-kernel-bench), 2 x 2 128-132 GFLOP/s, the split 6 x 1 154-177; in
  // the forward at T 4096 top-8 the up gmm went from 128 to 147.
  t.vectors = machine.vectorRegisters >= 32 ? 4 : 1;
  t.rows = std::max<int64_t>(1, GmmTiling::maxRows(t.vectors, machine.vectorRegisters));
  int64_t nr = 16 * t.vectors;
  // The register tile's rows of A (mr x kc) stay in L1 while every weight
  // panel of the block passes by: a quarter of L1, or with four vectors a
  // row 3/8 of it up to kc 512, fewer depth blocks (each a pass of the
  // tile's partial sums through memory). A 48 KiB L1 gives kc 512 either
  // way (a larger L1 is capped there: kc 672 and 1024 were no faster); a
  // 32 KiB one now gets the 48 KiB hosts' tiles, nc and mc following (kc
  // 512, nc 128, mc 510 against the quarter's 336, 192, 336 with a 1 MiB
  // L2). Measured on an AMD EPYC znver4 (256-bit units), f32 T 4096 H 2048
  // M 1408 E 60, 2 threads, alternating: top-2 640.1-648.4 ms against
  // 645.5-667.7 (four pairs, each faster), top-8 2523.6 / 2533.6 against
  // 2541.3 / 2547.7, the T 512 training step unchanged. Not measured on
  // Skylake-X's full-width units. AVX2's 6 x 1 tile kept the quarter: kc
  // 336 ran 2748 / 2789 ms against 512's 2842 / 2800 (znver3 code on that
  // host, T 4096 top-8).
  int64_t kc = t.vectors == 4 ? std::min<int64_t>(512, machine.l1Bytes / 8 * 3 / (t.rows * 4))
                              : machine.l1Bytes / 4 / (t.rows * 4);
  kc = std::max<int64_t>(16, kc / 16 * 16);
  t.depthBlock = std::min(kc, std::max<int64_t>(shape.depth, 16));
  // The packed weight block (kc x nc weight columns, f32) in a quarter of
  // L2, and at most kMaxWeightBlockBytes: measured on a Sapphire Rapids (2
  // MiB L2, kc 512), f32 T 4096 H 2048 M 1408 E 60, 2 threads, builds
  // alternating, a 256 KiB block (nc 128) against the quarter's 512 KiB
  // (nc 256): top-2 460-469 against 488-504 ms, top-8 unchanged; kc 256 x
  // nc 256 (also 256 KiB) about as fast at top-2. An AMD EPYC Zen 5's
  // quarter of its 1 MiB L2 is that block already; other hosts with more
  // than 1 MiB of L2 (and a named --target-cpu's 2 MiB default) take the
  // cap too, measured only on the Sapphire Rapids.
  int64_t quarterColumns = std::max(nr, machine.l2Bytes / 4 / (t.depthBlock * 4) / nr * nr);
  int64_t capColumns = std::max(nr, kMaxWeightBlockBytes / (t.depthBlock * 4) / nr * nr);
  int64_t weightColumns = std::min(quarterColumns, capColumns);
  int64_t outputPerPanel = shape.swiglu ? nr / 2 : nr;
  int64_t neededColumns = (shape.width + outputPerPanel - 1) / outputPerPanel * nr;
  t.columnBlock = std::max(nr, std::min(weightColumns, neededColumns));
  // mc rows of the quarter's columns (f32 partial sums) in another quarter
  // of L2, not raised for the capped block: mc 1020 with nc 128 made the
  // top-8 call 1751-1873 ms against 1594-1686 at mc 510 (the same hour).
  int64_t mc = machine.l2Bytes / 4 / (quarterColumns * 4);
  t.rowBlock = std::max(t.rows, mc / t.rows * t.rows);
  return t;
}

/// `D=<int>,N=<int>,swiglu=<0|1>,bytes=<int>`: GmmShape::key()'s form.
static bool isShapeKey(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> fields;
  text.split(fields, ',');
  const char *keys[] = {"D", "N", "swiglu", "bytes"};
  if (fields.size() != 4)
    return false;
  for (auto [field, name] : llvm::zip(fields, keys)) {
    auto [k, v] = field.split('=');
    int64_t value;
    if (k != name || v.getAsInteger(10, value) || value < 0)
      return false;
  }
  return true;
}

llvm::Expected<std::optional<GmmTiling>>
mlir::moe::strategy::lookupTuningTable(llvm::StringRef path, const GmmShape &shape) {
  // A FIFO would wait for a writer forever (runtime/AtomicFile.h).
  if (std::string error; !moec::checkInputFile(path.str(), error))
    return llvm::createStringError("cannot read tuning table: " + error);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return llvm::createStringError("cannot read tuning table '" + path.str() +
                                   "': " + file.getError().message());
  llvm::SmallVector<llvm::StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  std::string key = shape.key();
  std::optional<GmmTiling> found;
  // Every line is checked, not only the one looked up: a file that is not
  // a tuning table (a wrong path) is an error, not a table without the shape.
  for (auto [number, raw] : llvm::enumerate(lines)) {
    llvm::StringRef line = raw.split('#').first.trim();
    if (line.empty())
      continue;
    std::string where = path.str() + ":" + std::to_string(number + 1) + ": ";
    auto [lineKey, rest] = line.split(' ');
    if (!isShapeKey(lineKey))
      return llvm::createStringError(where + "not a tuning-table line (expected '<shape> <tiling>', "
                                     "e.g. 'D=2048,N=1408,swiglu=1,bytes=4 mr=6,nv=4,kc=256,"
                                     "nc=256,mc=192', as moe-bench --tune writes)");
    auto tiling = GmmTiling::parse(rest.trim());
    if (!tiling)
      return llvm::createStringError(where + llvm::toString(tiling.takeError()));
    if (lineKey != key)
      continue;
    if (std::string why = tiling->invalidReason(shape.swiglu); !why.empty())
      return llvm::createStringError(where + why);
    if (!found)
      found = *tiling;
  }
  return found;
}

llvm::Error mlir::moe::strategy::checkTuningTable(llvm::StringRef path) {
  // No shape has key D=0: every line is read and checked, none matches.
  return lookupTuningTable(path, GmmShape()).takeError();
}

llvm::Error mlir::moe::strategy::storeTuningTable(llvm::StringRef path, const GmmShape &shape,
                                                 const GmmTiling &tiling,
                                                 llvm::StringRef comment) {
  std::string kept;
  if (auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/true)) {
    llvm::SmallVector<llvm::StringRef> lines;
    (*file)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef line : lines)
      if (line.split(' ').first != shape.key())
        kept += line.str() + "\n";
  } else if (llvm::sys::fs::exists(path)) {
    return llvm::createStringError("cannot read tuning table '" + path.str() +
                                   "': " + file.getError().message());
  }
  if (kept.empty())
    kept = "# moec gmm tuning table: <shape> <tiling>, written by moe-bench --tune\n";
  std::string line = shape.key() + " " + tiling.str();
  if (!comment.empty())
    line += " # " + comment.str();
  // Whole or not at all (runtime/AtomicFile.h): a full disk leaves the old
  // table, and no temporary file.
  std::string error;
  if (!moec::writeFileAtomically(path.str(), kept + line + "\n", error))
    return llvm::createStringError("cannot write the tuning table: " + error);
  return llvm::Error::success();
}
