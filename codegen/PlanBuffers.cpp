//===- PlanBuffers.cpp - the moe-plan-buffers pass ------------------------===//
//
// One arena per function call, buffers placed in it by live range (see
// Passes.td). Why by hand: upstream's deallocation pipeline frees a buffer
// at the end of its block (ownership-based, correct for any control flow)
// and has no static placement; a forward_backward function is one block of
// large, statically shaped buffers, where placement by live range turns the
// sum of all its buffers into the peak of its live set.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "dialect/MoeDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::moe {
#define GEN_PASS_DEF_MOEPLANBUFFERS
#include "codegen/Passes.h.inc"
} // namespace mlir::moe

using namespace mlir;

namespace {

// Every buffer's offset in the arena, and the arena, on a cache line: the
// kernels' aligned vector stores rely on it (the tgmm's streaming stores
// check the address, but would fall back to plain ones below 64).
constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// A buffer to place: its bytes, the top-level ops it lives over, where it
/// goes.
struct Planned {
  memref::AllocOp alloc;
  int64_t bytes, alignment;
  unsigned start, end;
  SmallVector<memref::DeallocOp> deallocs;
  int64_t offset = -1;
};

std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return std::nullopt;
  int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

struct PlanBuffers : moe::impl::MoePlanBuffersBase<PlanBuffers> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal() || !fn.getBody().hasOneBlock())
      return;
    Block &body = fn.getBody().front();
    DenseMap<Operation *, unsigned> position;
    unsigned next = 0;
    for (Operation &op : body)
      position[&op] = next++;

    SmallVector<Planned> buffers;
    int64_t unplanned = 0;
    for (auto alloc : body.getOps<memref::AllocOp>()) {
      MemRefType type = alloc.getType();
      std::optional<int64_t> bytes = staticBytes(type);
      if (!bytes)
        continue; // dynamic: malloc at run time, not in the plan
      if (!type.getLayout().isIdentity() || type.getMemorySpace()) {
        unplanned += *bytes;
        continue;
      }
      Planned p{alloc, *bytes, std::max<int64_t>(kAlignment, alloc.getAlignment().value_or(0)),
                position[alloc], position[alloc], {}};
      if (!liveRange(alloc, body, position, p)) {
        unplanned += *bytes;
        continue;
      }
      buffers.push_back(std::move(p));
    }
    if (buffers.empty())
      return;

    int64_t arena = place(buffers);
    int64_t lowerBound = 0;
    for (unsigned at = 0; at < next; ++at) {
      int64_t live = 0;
      for (const Planned &p : buffers)
        if (p.start <= at && at <= p.end)
          live += p.bytes;
      lowerBound = std::max(lowerBound, live);
    }
    int64_t total = 0;
    for (const Planned &p : buffers)
      total += p.bytes;
    int64_t arenaAlignment = kAlignment;
    for (const Planned &p : buffers)
      arenaAlignment = std::max(arenaAlignment, p.alignment);

    OpBuilder b(&body, body.begin());
    Location loc = fn.getLoc();
    auto arenaType = MemRefType::get({arena}, b.getI8Type());
    Value arenaBuffer =
        memref::AllocOp::create(b, loc, arenaType, b.getI64IntegerAttr(arenaAlignment));
    for (Planned &p : buffers) {
      b.setInsertionPoint(p.alloc);
      Value offset = arith::ConstantIndexOp::create(b, p.alloc.getLoc(), p.offset);
      Value view = memref::ViewOp::create(b, p.alloc.getLoc(), p.alloc.getType(), arenaBuffer,
                                          offset, ValueRange{});
      p.alloc.replaceAllUsesWith(view);
      for (memref::DeallocOp d : p.deallocs)
        d.erase();
      p.alloc.erase();
    }
    for (auto ret : llvm::to_vector(body.getOps<func::ReturnOp>())) {
      b.setInsertionPoint(ret);
      memref::DeallocOp::create(b, ret.getLoc(), arenaBuffer);
    }
    auto entry = [&](StringRef name, int64_t value) {
      return b.getNamedAttr(name, b.getI64IntegerAttr(value));
    };
    fn->setAttr(moe::kMemoryPlanAttrName,
                b.getDictionaryAttr({entry("arena_bytes", arena), entry("buffer_bytes", total),
                                     entry("buffers", buffers.size()),
                                     entry("lower_bound_bytes", lowerBound),
                                     entry("unplanned_bytes", unplanned)}));
  }

  /// The top-level ops over which `alloc` is live: from the alloc to the
  /// last op using it or anything derived from it (views, casts, results
  /// of ops it flows through). False when the plan cannot own it: it is
  /// returned, freed inside a region, or never freed.
  static bool liveRange(memref::AllocOp alloc, Block &body,
                        const DenseMap<Operation *, unsigned> &position, Planned &p) {
    SmallVector<Value> work = {alloc.getResult()};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc->getBlock() != &body)
            return false;
          p.deallocs.push_back(dealloc);
          continue;
        }
        if (isa<func::ReturnOp>(user))
          return false;
        Operation *top = body.findAncestorOpInBlock(*user);
        if (!top)
          return false;
        p.end = std::max(p.end, position.lookup(top));
        for (Value r : user->getResults())
          if (isa<BaseMemRefType>(r.getType()))
            work.push_back(r);
        // Yielded out of a region: the enclosing op's results carry it.
        if (user->hasTrait<OpTrait::IsTerminator>() && user->getParentOp() != body.getParentOp())
          for (Value r : user->getParentOp()->getResults())
            if (isa<BaseMemRefType>(r.getType()))
              work.push_back(r);
      }
    }
    return !p.deallocs.empty();
  }

  /// Offsets, largest buffer first, each at the lowest aligned offset free
  /// of every placed buffer live at the same time. Returns the arena size.
  static int64_t place(SmallVector<Planned> &buffers) {
    SmallVector<Planned *> order;
    for (Planned &p : buffers)
      order.push_back(&p);
    llvm::stable_sort(order, [](Planned *a, Planned *b) { return a->bytes > b->bytes; });
    int64_t arena = 0;
    SmallVector<Planned *> placed;
    for (Planned *p : order) {
      SmallVector<std::pair<int64_t, int64_t>> taken;
      for (Planned *q : placed)
        if (q->start <= p->end && p->start <= q->end)
          taken.push_back({q->offset, q->offset + q->bytes});
      llvm::sort(taken);
      int64_t offset = 0;
      for (auto [from, to] : taken) {
        if (alignUp(offset, p->alignment) + p->bytes <= from)
          break;
        offset = std::max(offset, to);
      }
      p->offset = alignUp(offset, p->alignment);
      arena = std::max(arena, p->offset + p->bytes);
      placed.push_back(p);
    }
    return alignUp(arena, kAlignment);
  }
};

} // namespace
