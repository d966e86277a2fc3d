// bench/compare.sh checks its environment before it installs, builds or runs
// anything: exit code 2 and a message naming the variable.
// RUN: env ROUNDS=0 bash %moe_src_root/bench/compare.sh > /dev/null 2>&1; test $? -eq 2
// RUN: not env ROUNDS=0 bash %moe_src_root/bench/compare.sh 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not env ROUNDS=two bash %moe_src_root/bench/compare.sh 2>&1 | FileCheck %s --check-prefix=WORD
// RUN: not env PEERS=numpy bash %moe_src_root/bench/compare.sh 2>&1 | FileCheck %s --check-prefix=PEER

// ZERO: compare.sh: ROUNDS must be a whole number of 1 or more (got '0')
// WORD: compare.sh: ROUNDS must be a whole number of 1 or more (got 'two')
// PEER: compare.sh: PEERS names 'numpy'; the peers are torch and onednn
