//===- ShardedCall.h - one call of a compiled per-shard program -*- C++ -*-===//
//
// The host loop moec run and moe-bench share: call a JIT-compiled
// per-shard function on every rank of its mesh (threads of this process, or
// this process's rank under mpirun), time each rank, collect its
// communication counters, and assemble the full results.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_COMPILER_SHARDEDCALL_H
#define MOEC_COMPILER_SHARDEDCALL_H

#include "compiler/Compiler.h"
#include "runtime/ShardedRun.h"

namespace moec {

/// Calls per-shard `sig` once on every rank of `layout`. In-process
/// (`mpi` null): a thread per rank, `args[rank]` each rank's inputs. Under
/// MPI: this process's rank only, `args[0]` its inputs, the results and
/// `ranks` gathered from every rank. `ranks[r]` gets rank r's time and
/// counters. Returns the full results, or nullopt with the first failure.
std::optional<std::vector<Buffer>>
callSharded(JitProgram &program, const FunctionSignature &sig, const MeshLayout &layout,
            std::vector<std::vector<Buffer>> &args, ShardComm *mpi,
            std::chrono::milliseconds timeout, std::vector<RankStats> &ranks, std::string &error);

/// Calls single-device `sig` once on this thread with no mesh bound (a
/// collective in it, a per-shard program without placement, fails instead
/// of running on nothing). Returns the results, or nullopt with the error.
std::optional<std::vector<Buffer>> callOnDevice(JitProgram &program, const FunctionSignature &sig,
                                                std::vector<Buffer> &args, std::string &error);

} // namespace moec

#endif // MOEC_COMPILER_SHARDEDCALL_H
