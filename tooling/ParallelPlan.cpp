//===- ParallelPlan.cpp - how a block runs on a mesh ----------------------===//

#include "tooling/ParallelPlan.h"

#include "passes/Passes.h"
#include "runtime/MeshShape.h"
#include "runtime/ThreadLimit.h"


#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace moec;

std::string moec::parseMesh(const std::string &text, MeshRequest &mesh) {
  mesh = MeshRequest();
  if (text.empty())
    return "";
  mesh.given = true;
  // moe-partition's reading of it, then what the plans can use of it.
  std::string error;
  auto axes = mlir::moe::meshAxes(text, error);
  if (!axes)
    return "--mesh '" + text + "': " + error;
  for (const auto &[axis, size] : *axes) {
    if (axis == "data")
      mesh.data = size;
    else if (axis == "expert")
      mesh.expert = size;
    else
      return "--mesh '" + text + "': the parallel plans partition over data and expert (got '" +
             axis + "')";
  }
  return "";
}

std::string moec::choosePlan(ParallelMode mode, mlir::moe::EpDispatch dispatch,
                             const MeshRequest &mesh, int64_t devices, const Workload &w,
                             const Machine &m, Plan &plan) {
  if (mode == ParallelMode::none) {
    if (mesh.given)
      return "--mesh needs --parallel-mode dp, ep or auto";
    plan = {"none", 1, 1};
    return "";
  }
  int64_t data = mesh.data, expert = mesh.expert;
  if (!mesh.given && mode == ParallelMode::dp)
    data = devices;
  if (!mesh.given && mode == ParallelMode::ep)
    expert = devices;
  if (mode == ParallelMode::dp && expert != 1)
    return "--parallel-mode dp splits tokens only: give a mesh without an expert axis";
  if (mode == ParallelMode::ep && expert == 1)
    return "--parallel-mode ep needs an expert axis of size > 1 (--mesh expert=N, or more "
           "than one device)";
  if (mode == ParallelMode::automatic) {
    // Among the plans for as many devices as the mesh (or --devices) has.
    int64_t d = mesh.given ? mesh.devices() : devices;
    std::vector<Plan> plans = candidatePlans(w, d);
    if (plans.empty())
      return "--parallel-mode auto: no plan splits " + std::to_string(w.tokens) + " tokens and " +
             std::to_string(w.experts) + " experts over " + std::to_string(d) + " devices";
    plan = *std::min_element(plans.begin(), plans.end(), [&](const Plan &a, const Plan &b) {
      return predict(w, a, m).totalS() < predict(w, b, m).totalS();
    });
    return "";
  }
  plan = {mode == ParallelMode::dp
              ? std::string("dp")
              : "ep-" + mlir::moe::kEpDispatchChoices.name(dispatch).str(),
          data, expert};
  if (w.experts % expert)
    return "the expert axis (" + std::to_string(expert) + ") must divide the experts (" +
           std::to_string(w.experts) + ")";
  return "";
}

mlir::moe::EpDispatch moec::planDispatch(const Plan &plan) {
  if (plan.mode == "dp")
    return mlir::moe::EpDispatch::compact;
  return *mlir::moe::kEpDispatchChoices.parse(llvm::StringRef(plan.mode).drop_front(3));
}

std::string moec::planMesh(const Plan &plan) {
  std::string data = "data=" + std::to_string(plan.data);
  std::string expert = "expert=" + std::to_string(plan.expert);
  if (plan.expert == 1)
    return data;
  return plan.data == 1 ? expert : data + "," + expert;
}

std::vector<int64_t> moec::meshShape(const Plan &plan) {
  if (plan.expert == 1)
    return {plan.data};
  if (plan.data == 1)
    return {plan.expert};
  return {plan.data, plan.expert};
}

std::vector<ShardWork> moec::shardWork(const Plan &plan, const MeshLayout &layout,
                                       const int32_t *ids, const Workload &w) {
  auto axis = [&](const char *name) -> int64_t {
    auto it = std::find(layout.axisNames.begin(), layout.axisNames.end(), name);
    return it == layout.axisNames.end() ? -1 : it - layout.axisNames.begin();
  };
  int64_t dataAxis = axis("data"), expertAxis = axis("expert");
  bool ep = plan.mode != "dp";
  bool tokensOverExpert = plan.mode == "ep-ring" || plan.mode == "ep-a2a";
  int64_t perData = w.tokens / plan.data, local = w.experts / plan.expert;
  std::vector<ShardWork> work;
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    std::vector<int64_t> at = moec::mesh::coordinates(layout.shape, r);
    int64_t d = dataAxis < 0 ? 0 : at[dataAxis], e = expertAxis < 0 ? 0 : at[expertAxis];
    int64_t lo = ep ? e * local : 0, hi = ep ? lo + local : w.experts;
    ShardWork s;
    for (int64_t t = d * perData; t < (d + 1) * perData; ++t)
      for (int64_t k = 0; k < w.topk; ++k) {
        int32_t id = ids[t * w.topk + k];
        s.rows += id >= lo && id < hi;
      }
    s.sharedTokens = tokensOverExpert ? perData / plan.expert : perData;
    work.push_back(s);
  }
  return work;
}

unsigned moec::threadsPerShard(unsigned threads, int64_t shards, Launcher launcher) {
  unsigned total = threadsOrCores(threads);
  if (launcher == Launcher::mpi)
    return total;
  return std::max<unsigned>(1, total / unsigned(std::max<int64_t>(1, shards)));
}

double moec::measureCopyGBps() {
  size_t bytes = 64u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, double(bytes) / s / 1e9);
    a[i] = b[bytes - 1 - i];  // the copies are used
  }
  return best;
}
