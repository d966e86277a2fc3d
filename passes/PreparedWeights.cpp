//===- PreparedWeights.cpp - weights prepared once, at load time ----------===//

#include "passes/PreparedWeights.h"
#include "dialect/MoeDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::moe;

std::string mlir::moe::prepareWeightsName(StringRef function) {
  return (function + "_prepare_weights").str();
}
std::string mlir::moe::preparedName(StringRef function) { return (function + "_prepared").str(); }

bool mlir::moe::isWeightReshapeOrCast(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ConcatOp, arith::TruncFOp,
             arith::ExtFOp>(op);
}

SmallVector<Operation *> mlir::moe::weightChains(func::FuncOp fn,
                                                 function_ref<bool(Operation *)> isPreparation,
                                                 function_ref<bool(Operation *)> isRoot) {
  DenseSet<Operation *> candidates;
  SmallVector<Operation *> order;
  for (Operation &op : fn.getBody().front().without_terminator()) {
    if (!isPreparation(&op))
      continue;
    bool fromWeights = llvm::all_of(op.getOperands(), [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v))
        return arg.getOwner()->getParentOp() == fn;
      return candidates.contains(v.getDefiningOp());
    });
    if (fromWeights) {
      candidates.insert(&op);
      order.push_back(&op);
    }
  }
  // Keep the candidates connected to a root: its producers and users.
  DenseSet<Operation *> keep;
  SmallVector<Operation *> work;
  for (Operation *op : order)
    if (isRoot(op))
      work.push_back(op);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!keep.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && candidates.contains(def))
        work.push_back(def);
    for (Operation *user : op->getUsers())
      if (candidates.contains(user))
        work.push_back(user);
  }
  SmallVector<Operation *> chains;
  for (Operation *op : order)
    if (keep.contains(op))
      chains.push_back(op);
  return chains;
}

FailureOr<PreparedSplit> mlir::moe::splitPreparedWeights(func::FuncOp fn, ArrayRef<Operation *> chains,
                                                         StringRef name, SymbolTable &symbols,
                                                         StringRef pass) {
  DenseSet<Operation *> inChain(chains.begin(), chains.end());
  std::string prepareName = prepareWeightsName(name), preparedFnName = preparedName(name);
  for (StringRef n : {StringRef(prepareName), StringRef(preparedFnName)})
    if (symbols.lookup(n))
      return fn.emitError() << pass << ": cannot prepare the weights of @" << name << " once: @" << n
                            << " exists already";

  // What the chains read (arguments) and what the rest reads of them.
  PreparedSplit split;
  Block &body = fn.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (llvm::any_of(arg.getUsers(), [&](Operation *u) { return inChain.contains(u); }))
      split.weightArgs.push_back(arg);
  SmallVector<Value> roots;
  for (Operation *op : chains)
    for (Value v : op->getResults())
      if (llvm::any_of(v.getUsers(), [&](Operation *u) { return !inChain.contains(u); }))
        roots.push_back(v);
  // Arguments nothing but the chains read leave the prepared function.
  for (BlockArgument arg : body.getArguments())
    if (!llvm::is_contained(split.weightArgs, arg) ||
        llvm::any_of(arg.getUsers(), [&](Operation *u) { return !inChain.contains(u); }))
      split.keptArgs.push_back(arg);

  OpBuilder mb(fn);
  Location loc = fn.getLoc();
  auto typesOf = [](auto values) {
    SmallVector<Type> types;
    for (Value v : values)
      types.push_back(v.getType());
    return types;
  };

  // <name>_prepare_weights(weights) -> (roots).
  split.prepare = func::FuncOp::create(mb, loc, prepareName,
                                       mb.getFunctionType(typesOf(split.weightArgs), typesOf(roots)));
  {
    OpBuilder pb(split.prepare.getContext());
    Block *entry = split.prepare.addEntryBlock();
    pb.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [arg, newArg] : llvm::zip(split.weightArgs, entry->getArguments()))
      map.map(arg, newArg);
    for (Operation *op : chains)
      pb.clone(*op, map);
    SmallVector<Value> results;
    for (Value root : roots)
      results.push_back(map.lookup(root));
    func::ReturnOp::create(pb, loc, results);
  }

  // <name>_prepared(kept arguments, roots): the body, the chains' results
  // read from the new arguments.
  SmallVector<Type> preparedInputs = typesOf(split.keptArgs);
  llvm::append_range(preparedInputs, typesOf(roots));
  split.prepared = func::FuncOp::create(mb, loc, preparedFnName,
                                        mb.getFunctionType(preparedInputs, fn.getResultTypes()));
  {
    Block *entry = split.prepared.addEntryBlock();
    IRMapping map;
    for (auto [arg, newArg] :
         llvm::zip(split.keptArgs, entry->getArguments().take_front(split.keptArgs.size())))
      map.map(arg, newArg);
    for (auto [root, newArg] : llvm::zip(roots, entry->getArguments().drop_front(split.keptArgs.size())))
      map.map(root, newArg);
    OpBuilder pb(split.prepared.getContext());
    pb.setInsertionPointToStart(entry);
    for (Operation &op : body)
      if (!inChain.contains(&op))
        pb.clone(op, map);
  }
  auto positions = [&](ArrayRef<BlockArgument> args) {
    SmallVector<int64_t> at;
    for (BlockArgument a : args)
      at.push_back(a.getArgNumber());
    return mb.getDenseI64ArrayAttr(at);
  };
  split.prepare->setAttr(kWeightArgumentsAttrName, positions(split.weightArgs));
  split.prepared->setAttr(kKeptArgumentsAttrName, positions(split.keptArgs));
  for (unsigned i = 0; i < split.keptArgs.size(); ++i)
    if (DictionaryAttr attrs = fn.getArgAttrDict(split.keptArgs[i].getArgNumber()))
      split.prepared.setArgAttrs(i, attrs);
  symbols.insert(split.prepare);
  symbols.insert(split.prepared);
  return split;
}

void mlir::moe::callPreparedHalves(func::FuncOp fn, const PreparedSplit &split) {
  Block &body = fn.getBody().front();
  // By position: the split may have been made from a copy of `fn`.
  auto argsOf = [&](ArrayRef<BlockArgument> args) {
    SmallVector<Value> values;
    for (BlockArgument a : args)
      values.push_back(body.getArgument(a.getArgNumber()));
    return values;
  };
  SmallVector<Value> keptArgs = argsOf(split.keptArgs), weightArgs = argsOf(split.weightArgs);
  // The arguments are the block's, which stays; its ops go.
  while (!body.empty())
    body.back().erase();
  Location loc = fn.getLoc();
  OpBuilder fb = OpBuilder::atBlockEnd(&body);
  auto weights = func::CallOp::create(fb, loc, split.prepare, weightArgs);
  llvm::append_range(keptArgs, weights.getResults());
  auto call = func::CallOp::create(fb, loc, split.prepared, keptArgs);
  func::ReturnOp::create(fb, loc, call.getResults());
}

std::optional<PreparedSplit> mlir::moe::preparedCaller(func::FuncOp fn, SymbolTable &symbols) {
  if (fn.isDeclaration())
    return std::nullopt;
  auto prepare = symbols.lookup<func::FuncOp>(prepareWeightsName(fn.getName()));
  auto prepared = symbols.lookup<func::FuncOp>(preparedName(fn.getName()));
  if (!prepare || !prepared)
    return std::nullopt;
  auto weightAt = prepare->getAttrOfType<DenseI64ArrayAttr>(kWeightArgumentsAttrName);
  auto keptAt = prepared->getAttrOfType<DenseI64ArrayAttr>(kKeptArgumentsAttrName);
  Block &body = fn.getBody().front();
  if (!weightAt || !keptAt || body.getOperations().size() != 3)
    return std::nullopt;
  auto first = dyn_cast<func::CallOp>(&body.front());
  auto second = first ? dyn_cast<func::CallOp>(first->getNextNode()) : func::CallOp();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!second || !ret || first.getCallee() != prepare.getName() || second.getCallee() != prepared.getName() ||
      ret.getOperands() != second.getResults())
    return std::nullopt;
  // The calls pass the arguments the attributes name, and prepared gets
  // prepare's results after the kept ones.
  PreparedSplit split{prepare, prepared, {}, {}};
  auto argsAt = [&](ArrayRef<int64_t> at, OperandRange operands, SmallVector<BlockArgument> &out) {
    if (operands.size() < at.size())
      return false;
    for (auto [i, position] : llvm::enumerate(at)) {
      auto arg = dyn_cast<BlockArgument>(operands[i]);
      if (!arg || arg.getOwner() != &body || static_cast<int64_t>(arg.getArgNumber()) != position)
        return false;
      out.push_back(arg);
    }
    return true;
  };
  if (first.getNumOperands() != weightAt.size() || !argsAt(weightAt.asArrayRef(), first.getOperands(), split.weightArgs) ||
      !argsAt(keptAt.asArrayRef(), second.getOperands(), split.keptArgs) ||
      second.getOperands().drop_front(keptAt.size()) != first.getResults())
    return std::nullopt;
  return split;
}

func::FuncOp mlir::moe::mergedHalves(func::FuncOp fn, const PreparedSplit &split, StringRef name) {
  auto merged = fn.cloneWithoutRegions();
  merged.setName(name);
  merged.setPrivate();
  fn->getBlock()->getOperations().insertAfter(fn->getIterator(), merged);
  Block *entry = merged.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  // Each half's body, its arguments mapped to what the call passed it.
  auto inlineHalf = [&](func::FuncOp half, ArrayRef<Value> operands) {
    IRMapping map;
    Block &body = half.getBody().front();
    for (auto [arg, operand] : llvm::zip(body.getArguments(), operands))
      map.map(arg, operand);
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    SmallVector<Value> results;
    for (Value v : body.getTerminator()->getOperands())
      results.push_back(map.lookupOrDefault(v));
    return results;
  };
  auto argsOf = [&](ArrayRef<BlockArgument> args) {
    SmallVector<Value> values;
    for (BlockArgument a : args)
      values.push_back(entry->getArgument(a.getArgNumber()));
    return values;
  };
  SmallVector<Value> preparedOperands = argsOf(split.keptArgs);
  llvm::append_range(preparedOperands, inlineHalf(split.prepare, argsOf(split.weightArgs)));
  SmallVector<Value> results = inlineHalf(split.prepared, preparedOperands);
  func::ReturnOp::create(b, fn.getLoc(), results);
  return merged;
}
