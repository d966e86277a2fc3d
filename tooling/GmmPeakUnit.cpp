//===- GmmPeakUnit.cpp - the unit a block's gmms are measured against -----===//

#include "tooling/GmmPeakUnit.h"

#include "strategy/GmmTiling.h"
#include "strategy/TargetCpu.h"
#include "tooling/Peak.h"

using namespace moec;
namespace strategy = mlir::moe::strategy;

PeakUnit moec::fp32PeakUnit() { return PeakUnit{"FP32 FMA", "GFLOP/s", measureFp32PeakGflops, fp32PeakLoop}; }

std::optional<PeakUnit> moec::gmmPeakUnit(strategy::GmmStrategy gmmStrategy, mlir::moe::TargetAttr target,
                                          bool bf16, bool int8, std::string &error) {
  // The kinds moe-select-lowering compiles in: from the module's target
  // where it has one (as that pass reads it), else the compiler's.
  auto kinds = target ? strategy::packedKindsFor(gmmStrategy, strategy::MachineModel::fromTarget(target),
                                                 target.getCpu(), error)
                      : strategy::packedKindsFor(gmmStrategy, strategy::MachineModel::target(),
                                                 strategy::targetCpuName(), error);
  if (!kinds)
    return std::nullopt;
  // One multiply and one add per int8 product, counted as FLOPs are.
  if (int8 && kinds->amxInt8 && amxTilesGranted())
    return PeakUnit{"AMX INT8", "GOP/s", measureAmxInt8PeakGops, amxInt8PeakLoop};
  if (int8 && kinds->avx512Vnni)
    return PeakUnit{"AVX512_VNNI", "GOP/s", measureVnniPeakGops, vnniPeakLoop};
  if (int8 && kinds->avx2Int8)
    return PeakUnit{"AVX2 VPMADDWD", "GOP/s", measureAvx2MaddPeakGops, avx2MaddPeakLoop};
  if (bf16 && kinds->amxBf16 && amxTilesGranted())
    return PeakUnit{"AMX BF16", "GFLOP/s", measureAmxBf16PeakGflops, amxBf16PeakLoop};
  if (bf16 && kinds->avx512Bf16)
    return PeakUnit{"AVX512_BF16", "GFLOP/s", measureAvx512Bf16PeakGflops, avx512Bf16PeakLoop};
  return fp32PeakUnit();
}
