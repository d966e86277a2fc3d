//===- GmmScheduler.cpp - the fast gmm's tasks over the threads ------------===//
//
//   tasks  = for each group, column block, range of row blocks: a kind
//            whose runsRowBlocksTogether says so runs a range's row blocks
//            one after another on one weight block (packed once by its
//            worker when packed per call; read from DRAM once and then from
//            L2 when packed at load time: the bf16 dot kind), the ranges
//            cut so that each worker has about kMinTasksPerWorker tasks'
//            work or more; for the other kinds a range is one row block. A
//            kind whose wholeRowBlocks says so takes, for each group, a row
//            block and all its column blocks instead: AMX with prepared
//            weights packs a task's rows once for all its column blocks
//            (split into ranges of column blocks when there are fewer than
//            two such tasks a worker).
//            Each group's kind is chosen at run time: a tile kind (AMX) when
//            its takesGroup says so (Linux granted the tile state, the group
//            is large enough), else the gmm's default kind. The kind sets
//            the group's row and column blocks.
//   worker = one per OpenMP thread, taking the next task from an atomic
//            counter: a hot expert's rows are many tasks, not one thread's
//            work, and uneven tasks never leave a core idle
//   task   = the kind's code (GmmKernel::emitTask), one branch per kind
//            compiled in; a tile kind's branch is a function of its own.
//            Helpers of the kinds' tasks live here too: evenRowBlock (a
//            group's row blocks), lhsRow (a gathered row's token) and
//            emitByRowCount (smaller register tiles for a task of a few
//            rows, and for the rows a task's full tiles leave).
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/GmmScheduler.h"
#include "codegen/Emitter.h"
#include "codegen/kernels/AmxTiles.h"
#include "codegen/kernels/GmmKernel.h"
#include "codegen/kernels/PackedOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include <array>

using namespace mlir;
using namespace mlir::moe::codegen;

namespace {
// first row, end row, group, column block, kind, column block end, rows of
// one of its row blocks
constexpr int64_t kTaskFields = 7;
/// A kind that runs a weight block's row blocks together: a task is a range
/// of row blocks of one weight block, so that one worker packs (or reads
/// from DRAM) the block for all of them; a range holds at most the rows x
/// column blocks of all groups over this many tasks a worker (a hot
/// expert's rows still spread over the workers).
constexpr int64_t kMinTasksPerWorker = 8;
} // namespace

Value mlir::moe::codegen::workerCount(Emitter &e, Operation *anchor) {
  auto module = anchor->getParentOfType<ModuleOp>();
  auto i32 = e.b.getI32Type();
  constexpr StringLiteral name = "omp_get_max_threads";
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder mb(module.getBodyRegion());
    fn = func::FuncOp::create(mb, module.getLoc(), name,
                              FunctionType::get(e.b.getContext(), {}, {i32}));
    fn.setPrivate();
  }
  Value n = func::CallOp::create(e.b, fn, ValueRange{}).getResult(0);
  return e.max(e.toIndex(n), e.index(1));
}

void mlir::moe::codegen::emitWorkerTasks(Emitter &e, Value tasks, Operation *anchor, function_ref<void()> perWorker,
                                         function_ref<void(Value task, Value workers)> body, Value threads) {
  auto &b = e.b;
  auto i64 = b.getI64Type();
  Value zero = e.index(0);
  Value counter = e.alloc({1}, i64, {});
  e.store(arith::ConstantOp::create(b, b.getI64IntegerAttr(0)), counter, {zero});
  Value workers = e.min(threads ? threads : workerCount(e, anchor), tasks);
  Value tasks64 = arith::IndexCastOp::create(b, i64, tasks);
  e.parallelFor(zero, workers, [&](Value) {
    perWorker();
    auto loop = scf::WhileOp::create(b, TypeRange{i64}, ValueRange{});
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&loop.getBefore());
    Value taken = memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                              arith::ConstantOp::create(b, b.getI64IntegerAttr(1)), counter,
                                              ValueRange{zero});
    scf::ConditionOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, taken, tasks64),
                             ValueRange{taken});
    Block *after = b.createBlock(&loop.getAfter(), {}, TypeRange{i64}, {b.getLoc()});
    scf::YieldOp::create(b, ValueRange{});
    b.setInsertionPoint(after->getTerminator());
    body(arith::IndexCastOp::create(b, b.getIndexType(), after->getArgument(0)), workers);
  });
}

Value mlir::moe::codegen::evenRowBlock(Emitter &e, Value groupRows, int64_t maxRows, int64_t rowGranule) {
  Value cap = e.index(maxRows), granule = e.index(rowGranule), one = e.index(1);
  auto ceilDiv = [&](Value a, Value d) { return e.divs(e.add(a, e.sub(d, one)), d); };
  Value blocks = e.max(ceilDiv(groupRows, cap), one);
  // At least one granule: an empty group's loop must still have a step.
  return e.max(e.mul(ceilDiv(ceilDiv(groupRows, blocks), granule), granule), granule);
}

Value mlir::moe::codegen::lhsRow(Emitter &e, const GmmKernelPlan &p, Value r) {
  if (!p.perm)
    return r;
  Value slot = e.toIndex(e.load(p.perm, {r}));
  return e.divs(e.max(slot, e.index(0)), e.index(p.topK));
}

void mlir::moe::codegen::emitByRowCount(Emitter &e, Value rows, ArrayRef<int64_t> tileRows,
                                        int64_t fullRows, function_ref<void(int64_t m, Value ir)> tile) {
  assert(llvm::is_sorted(tileRows) && (tileRows.empty() || tileRows.back() < fullRows) &&
         "small tiles ascending, below the full one");
  auto &b = e.b;
  // The rows past the full tiles: the variant of the smallest small tile
  // that holds them (1 + i for tileRows[i]), 0 for none (no rows left, or
  // more than the small tiles hold: then one more full tile takes them).
  Value rest = e.rems(rows, e.index(fullRows));
  Value variant = e.index(0);
  for (int64_t i = int64_t(tileRows.size()) - 1; i >= 0; --i)
    variant = e.select(e.lt(rest, e.index(tileRows[i] + 1)), e.index(i + 1), variant);
  variant = e.select(e.lt(rest, e.index(1)), e.index(0), variant);
  Value hasSmall = e.lt(e.index(0), variant);
  Value fullEnd = e.select(hasSmall, e.sub(rows, rest), rows);
  e.forLoop(e.index(0), fullEnd, e.index(fullRows), ValueRange{},
            [&](Value ir, ValueRange) -> SmallVector<Value> {
              tile(fullRows, ir);
              return {};
            });
  if (tileRows.empty())
    return;
  SmallVector<int64_t> cases = llvm::to_vector(llvm::seq<int64_t>(1, int64_t(tileRows.size()) + 1));
  auto byRows = scf::IndexSwitchOp::create(b, TypeRange{}, variant, cases, cases.size());
  for (int64_t v = 0; v <= int64_t(cases.size()); ++v) {
    Region &region = v < int64_t(cases.size()) ? byRows.getCaseRegions()[v] : byRows.getDefaultRegion();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&region.emplaceBlock());
    scf::YieldOp::create(b);
    b.setInsertionPointToStart(&region.front());
    if (v < int64_t(cases.size()))
      tile(tileRows[v], fullEnd);
  }
}

void mlir::moe::codegen::emitGmmTasks(Emitter &e, const GmmKernelPlan &p, ArrayRef<StringRef> kinds,
                                      Operation *anchor) {
  auto &b = e.b;
  PackedOperands shared(e, p);
  // The default kind first, then the tile kinds.
  SmallVector<std::unique_ptr<GmmKernel>> kernels, tileKernels;
  for (StringRef name : kinds) {
    const GmmKernelKind *kind = findGmmKernel(name);
    std::unique_ptr<GmmKernel> kernel = kind ? kind->make(e, p, shared) : nullptr;
    // moe.gmm's verifier holds #moe.gmm_lowering to known kinds that
    // compute its operands.
    if (!kernel)
      llvm::report_fatal_error(llvm::Twine("moe-lower-to-loops: no gmm kernel kind '") + name +
                               "' for this gmm's operands");
    (kind->usesTiles ? tileKernels : kernels).push_back(std::move(kernel));
  }
  if (kernels.size() != 1)
    llvm::report_fatal_error("moe-lower-to-loops: a gmm lowering needs exactly one kind without tiles");
  size_t firstTileKernel = kernels.size();
  for (auto &kernel : tileKernels)
    kernels.push_back(std::move(kernel));

  Value zero = e.index(0), one = e.index(1);
  auto indexType = b.getIndexType();
  Value rowCount = p.rowCount;
  Value groups = e.dim(p.sizes, 0);
  int64_t minRowBlock = kernels.front()->rowGranule();
  int64_t maxColumnBlocks = 1;
  // int8 rows quantized in the order a tile kind loads them, before any
  // kind quantizes them.
  for (auto &kernel : kernels)
    if (kernel->loadsQuantizedRowTiles())
      shared.keepRowOrder();
  for (auto &kernel : kernels) {
    kernel->prepare();
    minRowBlock = std::min(minRowBlock, kernel->rowGranule());
    maxColumnBlocks = std::max<int64_t>(maxColumnBlocks, llvm::divideCeil(p.width, kernel->columnBlock()));
  }

  // The task table, group by group, the row ranges of one weight block
  // consecutive.
  Value maxTasks = e.mul(e.add(e.add(e.divs(rowCount, e.index(minRowBlock)), groups), one),
                         e.index(maxColumnBlocks));
  Value tasks = e.alloc({ShapedType::kDynamic, kTaskFields}, indexType, {maxTasks});
  // A group's kind, its rows per task, its column blocks, whether its tasks
  // are whole row blocks and whether its kind runs a weight block's row
  // blocks together; `splits`: into how many ranges of column blocks a whole row
  // block goes.
  struct GroupPlan {
    Value kind, rowBlock, rowBlocks, columnBlocks, whole, together;
  };
  auto planGroup = [&](Value rows) {
    auto flag = [&](bool v) -> Value { return arith::ConstantOp::create(b, b.getBoolAttr(v)); };
    auto columnBlocks = [&](GmmKernel &kernel) { return e.index(llvm::divideCeil(p.width, kernel.columnBlock())); };
    GmmKernel &first = *kernels.front();
    GroupPlan plan{e.index(0),          first.rowBlock(rows),         Value(),
                   columnBlocks(first), flag(first.wholeRowBlocks()), flag(first.runsRowBlocksTogether())};
    for (size_t k = 1; k < kernels.size(); ++k) {
      Value takes = kernels[k]->takesGroup(rows);
      plan.kind = e.select(takes, e.index(k), plan.kind);
      plan.rowBlock = e.select(takes, kernels[k]->rowBlock(rows), plan.rowBlock);
      plan.columnBlocks = e.select(takes, columnBlocks(*kernels[k]), plan.columnBlocks);
      plan.whole = e.select(takes, flag(kernels[k]->wholeRowBlocks()), plan.whole);
      plan.together = e.select(takes, flag(kernels[k]->runsRowBlocksTogether()), plan.together);
    }
    plan.rowBlocks = e.divs(e.add(rows, e.sub(plan.rowBlock, one)), plan.rowBlock);
    return plan;
  };
  auto groupRows = [&](Value g, Value offset) {
    Value size = e.max(e.toIndex(e.load(p.sizes, {g})), zero);
    Value first = e.min(offset, rowCount);
    return std::array<Value, 3>{size, first, e.min(e.add(offset, size), rowCount)};
  };
  // Whole row blocks are few tasks where few rows meet many workers (a
  // shared expert's one group at decode sizes: one task, one busy core):
  // then each goes into ranges of column blocks, so that there are about
  // two tasks a worker.
  //
  // A kind that runs a weight block's row blocks together
  // (GmmKernel::runsRowBlocksTogether): with one row block a task, the row
  // blocks of one weight block consecutive, the workers alternated on them
  // and each packed every weight block the other packed too (bf16 on AMX,
  // the training step, T 4096 top-8: the forward's up gmm 372-417 ms, 324-339
  // as ranges, against ~200 with weights packed at load time), or read it
  // from DRAM (the dot kind with prepared weights). A task is a
  // range of row blocks of one weight block of at most `taskRowsCap` rows
  // (at least one row block): the work (rows x column blocks) over
  // kMinTasksPerWorker tasks a worker, so that a hot expert still spreads.
  Value threads = workerCount(e, anchor), splits = one, taskRowsCap = one;
  bool anyWhole = llvm::any_of(kernels, [](auto &kernel) { return kernel->wholeRowBlocks(); });
  bool anyTogether = llvm::any_of(kernels, [](auto &kernel) { return kernel->runsRowBlocksTogether(); });
  if (anyWhole || anyTogether) {
    // Over the groups: the whole row blocks and the work.
    SmallVector<Value> sums = e.forLoop(
        zero, groups, ValueRange{zero, zero, zero}, [&](Value g, ValueRange acc) -> SmallVector<Value> {
          auto [size, first, end] = groupRows(g, acc[0]);
          Value rows = e.sub(end, first);
          GroupPlan plan = planGroup(rows);
          return {e.add(acc[0], size), e.add(acc[1], e.select(plan.whole, plan.rowBlocks, zero)),
                  e.add(acc[2], e.mul(rows, plan.columnBlocks))};
        });
    if (anyWhole) {
      Value wholeTasks = e.max(sums[1], one);
      splits = e.divs(e.add(e.mul(threads, e.index(2)), e.sub(wholeTasks, one)), wholeTasks);
    }
    if (anyTogether)
      taskRowsCap = e.max(e.divs(sums[2], e.mul(threads, e.index(kMinTasksPerWorker))), one);
  }

  SmallVector<Value> counts = e.forLoop(
      zero, groups, ValueRange{zero, zero}, [&](Value g, ValueRange acc) -> SmallVector<Value> {
        auto [size, first, end] = groupRows(g, acc[0]);
        GroupPlan plan = planGroup(e.sub(end, first));
        // The kind's column blocks, and how many of them a task takes (1,
        // or a range of a whole row block's).
        Value blocks = plan.columnBlocks;
        Value span = e.select(plan.whole, e.divs(e.add(blocks, e.sub(splits, one)), splits), one);
        Value ranges = e.divs(e.add(blocks, e.sub(span, one)), span);
        // Row blocks a task: for a kind that runs them together, as
        // many as taskRowsCap rows hold, at least 1 (also for an empty
        // group, whose row blocks are 0); else 1.
        Value fitting = e.min(e.divs(taskRowsCap, plan.rowBlock), plan.rowBlocks);
        Value rowSpan = e.select(plan.together, e.max(fitting, one), one);
        Value rowRanges = e.divs(e.add(plan.rowBlocks, e.sub(rowSpan, one)), rowSpan);
        Value taskRows = e.mul(rowSpan, plan.rowBlock);
        // The group's tasks, t = 0 .. rowRanges x ranges: the row ranges of
        // one weight block (range) consecutive.
        Value n = e.forLoop(zero, e.mul(rowRanges, ranges), ValueRange{acc[1]},
                            [&](Value t, ValueRange count) -> SmallVector<Value> {
                              Value rr = e.rems(t, rowRanges), cb = e.mul(e.divs(t, rowRanges), span);
                              Value r = e.add(first, e.mul(rr, taskRows));
                              Value values[kTaskFields] = {r, e.min(e.add(r, taskRows), end), g, cb,
                                                           plan.kind, e.min(e.add(cb, span), blocks),
                                                           plan.rowBlock};
                              for (int64_t f = 0; f < kTaskFields; ++f)
                                e.store(values[f], tasks, {count[0], e.index(f)});
                              return {e.add(count[0], one)};
                            })[0];
        return {e.add(acc[0], size), n};
      });
  Value totalRows = e.min(counts[0], rowCount), taskCount = counts[1];

  // Rows past the last group belong to no group: zero.
  e.forLoop(totalRows, rowCount, [&](Value r) {
    Type outElement = cast<MemRefType>(p.out.getType()).getElementType();
    Value z = e.zero(outElement);
    e.forLoop(zero, e.index(p.width), [&](Value n) { e.store(z, p.out, {r, n}); });
  });

  emitWorkerTasks(e, taskCount, anchor, [&] {
    for (auto &kernel : kernels)
      kernel->allocScratch();
  }, [&](Value ti, Value workers) {
    Value fields[kTaskFields];
    for (int64_t f = 0; f < kTaskFields; ++f)
      fields[f] = e.load(tasks, {ti, e.index(f)});
    // The task this worker likely takes next (GmmTask): one of its own
    // kind's, else its own block again.
    Value next = e.min(e.add(ti, workers), e.sub(taskCount, one));
    Value sameKind = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, e.load(tasks, {next, e.index(4)}),
                                           fields[4]);
    Value nextGroup = e.select(sameKind, e.load(tasks, {next, e.index(2)}), fields[2]);
    Value nextBlock = e.select(sameKind, e.load(tasks, {next, e.index(3)}), fields[3]);
    GmmTask task{fields[0], fields[1], fields[2], fields[3], fields[5], nextGroup, nextBlock};
    // A kind's task code; for a kind that runs a weight block's row blocks
    // together, a range of row blocks runs it once per row block (the
    // weight block packed by the first, or read from DRAM by it). Until the
    // range's last row block the worker's next block is this one: the next
    // task's block, fetched by each row block, would take half of L2 from
    // the block the range reads (12 row blocks at T 4096 top-8).
    auto emitTask = [&](GmmKernel &kernel) {
      if (!kernel.runsRowBlocksTogether())
        return kernel.emitTask(task);
      // The range's short row block (1 to a whole row block: what the
      // whole ones leave) runs first, so the last, which fetches the next
      // task's block at up to a line a depth step, is a whole row block: a
      // last block of 1-18 rows (1-3 tiles of 6) had too few steps to fetch
      // more than 25-75% of it. AMD EPYC znver5, 2 threads, bf16 prepared,
      // alternating, medians of 14 runs' medians: T 4096 top-8 781 -> 754
      // ms, T 512 top-8 (68 rows an expert on average, many 49-66)
      // 110.8 -> 105.2 ms.
      Value rowBlockRows = fields[6];
      Value rows = e.sub(task.endRow, task.firstRow);
      Value headRows = e.add(e.rems(e.add(rows, e.sub(rowBlockRows, one)), rowBlockRows), one);
      Value start = e.sub(e.add(task.firstRow, headRows), rowBlockRows);
      e.forLoop(start, task.endRow, rowBlockRows, ValueRange{}, [&](Value r, ValueRange) {
        GmmTask rowBlock = task;
        rowBlock.firstRow = e.max(r, task.firstRow);
        rowBlock.endRow = e.add(r, rowBlockRows);
        Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, rowBlock.endRow, task.endRow);
        rowBlock.nextGroup = e.select(last, task.nextGroup, task.group);
        rowBlock.nextColumnBlock = e.select(last, task.nextColumnBlock, task.columnBlock);
        kernel.emitTask(rowBlock);
        return SmallVector<Value>{};
      });
    };
    // One branch per kind; the default ends the chain of ifs, so it is
    // never a tile kind, whose code must sit in a function of its own.
    for (size_t k = kernels.size() - 1; k > 0; --k) {
      auto kindIf = scf::IfOp::create(b, TypeRange{},
                                      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, fields[4], e.index(k)),
                                      /*withElseRegion=*/true);
      b.setInsertionPoint(kindIf.thenBlock()->getTerminator());
      emitTask(*kernels[k]);
      if (k >= firstTileKernel)
        outlineTileCode(kindIf.getThenRegion(), anchor);
      b.setInsertionPoint(kindIf.elseBlock()->getTerminator());
    }
    emitTask(*kernels.front());
  }, threads);
}
