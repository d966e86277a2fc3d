//===- Session.h - compile moe programs, call them on named buffers -------===//

#ifndef MOEC_TOOLS_MOEBENCH_SESSION_H
#define MOEC_TOOLS_MOEBENCH_SESSION_H

#include "compiler/Compiler.h"
#include "runtime/Buffer.h"
#include "runtime/ShardedRun.h"

#include "mlir/IR/MLIRContext.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace moebench {

/// One compiled module and the signatures of its functions.
/// What moe-remat decided for a forward_backward function.
struct RematChoice {
  int64_t keptBytes = 0, recomputedFlops = 0;
};

class Compiled {
public:
  /// Parses, lowers (with `gmm`) and JIT-compiles `source`; nullptr and
  /// `error` on failure. `seconds` gets the wall time of it all.
  /// `prepare`, when given, is a pipeline run before anything else (e.g.
  /// moe-generate-backward, which adds the function to call).
  static std::unique_ptr<Compiled> build(const std::string &source,
                                         const moec::GmmChoices &gmm, double &seconds,
                                         std::string &error, const std::string &prepare = "");

  /// Calls `function` on the buffers named by `args` (lent, not copied) and
  /// stores its results under `results`; buffers the pool held under those
  /// names (and not among `args`) are freed before the call, so its
  /// allocations reuse their memory (lost if the call fails). Returns the
  /// wall time of the call in seconds, or a negative value with `error`.
  double call(const std::string &function, std::map<std::string, moec::Buffer> &pool,
              const std::vector<std::string> &args, const std::vector<std::string> &results,
              std::string &error);

  /// The same for a per-shard function (moe-partition): the pool's full
  /// buffers are cut per rank, every rank runs (threads of this process, or
  /// this process's rank through `mpi`), the full results are assembled.
  /// `timeout` bounds every collective's wait for a peer. `ranks` gets
  /// each rank's time and counters; returns the slowest rank's
  /// time (the call's, without cutting and assembling), or negative.
  double callSharded(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                     const std::vector<std::string> &args,
                     const std::vector<std::string> &results, moec::ShardComm *mpi,
                     std::chrono::milliseconds timeout, std::vector<moec::RankStats> &ranks,
                     std::string &error);

  /// Where per-shard `function` runs (nullptr: not a per-shard function).
  const moec::MeshLayout *layout(const std::string &function) const;

  /// Calls the prepare function of `function`'s prepared form (moe-quantize's
  /// int8 weights, moe-prepare-weights' packed ones) once, on the pool's
  /// buffers among `args` (`function`'s arguments by name; a copy, so that
  /// `preparedArgs` may be the same vector) it takes; its
  /// results go into the pool as `<prefix>0`, `<prefix>1`, ... `preparedArgs`
  /// gets the prepared function's arguments and `preparedWeights` the new
  /// names. Returns the call's seconds, or a negative value with `error`.
  double prepareWeights(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                        std::vector<std::string> args, const std::string &prefix,
                        std::vector<std::string> &preparedArgs,
                        std::vector<std::string> &preparedWeights, std::string &error);
  /// `function`'s prepared form (nullptr: none).
  const moec::PreparedForm *preparedForm(const std::string &function) const;
  /// Whether `function`'s prepare function packs the weights into the
  /// kernels' layout (false: it only quantizes them, or there is none).
  bool preparePacks(const std::string &function) const;

  /// call(), timing each stage of `function` compiled with stage timers
  /// (GmmChoices::stageTimers): `stageSeconds` gets one time per stage
  /// (stages()' order).
  double callStaged(const std::string &function, std::map<std::string, moec::Buffer> &pool,
                    const std::vector<std::string> &args, const std::vector<std::string> &results,
                    std::vector<double> &stageSeconds, std::string &error);
  /// The names of `function`'s stages (empty: compiled without stage timers).
  std::vector<std::string> stages(const std::string &function) const;

  /// The tensor signature of public `function` (nullptr: none such).
  const moec::FunctionSignature *signature(const std::string &function) const;
  /// moe-remat's decision for `function` (nullopt: no remat ran on it).
  std::optional<RematChoice> remat(const std::string &function) const;

private:
  mlir::MLIRContext context;
  std::map<std::string, moec::FunctionSignature> signatures;
  std::map<std::string, RematChoice> rematChoices;
  std::map<std::string, moec::MeshLayout> layouts;
  std::map<std::string, moec::PreparedHalves> preparedHalves;
  std::map<std::string, std::vector<std::string>> stageNames;
  std::unique_ptr<moec::JitProgram> program;
};

/// Fills `b` with uniform values in [-scale, scale) from `seed`: fast enough
/// for gigabytes of weights (whose values do not change the speed).
void fillUniform(moec::Buffer &b, uint64_t seed, float scale);

} // namespace moebench

#endif
