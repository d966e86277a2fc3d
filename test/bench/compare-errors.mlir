// bench/compare.sh checks its environment before it installs, builds or runs
// anything: exit code 2 and a message naming the variable. (Each call is
// bounded: past the checks it would install the peers and run for minutes.)
// RUN: timeout 10 env ROUNDS=0 bash %moe_src_root/bench/compare.sh > %t.zero 2>&1; test $? -eq 2
// RUN: FileCheck %s --check-prefix=ZERO < %t.zero
// RUN: timeout 10 env ROUNDS=two bash %moe_src_root/bench/compare.sh > %t.word 2>&1; test $? -eq 2
// RUN: FileCheck %s --check-prefix=WORD < %t.word
// RUN: timeout 10 env PEERS=numpy bash %moe_src_root/bench/compare.sh > %t.peer 2>&1; test $? -eq 2
// RUN: FileCheck %s --check-prefix=PEER < %t.peer

// ZERO: compare.sh: ROUNDS must be a whole number of 1 or more (got '0')
// WORD: compare.sh: ROUNDS must be a whole number of 1 or more (got 'two')
// PEER: compare.sh: PEERS names 'numpy'; the peers are torch and onednn
