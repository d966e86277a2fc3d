// bench/targets.sh checks its environment before it installs, builds or runs
// anything: exit code 2 and a message naming the variable. (Each call is
// bounded: past the checks it would run for about 20 minutes.)
// RUN: timeout 10 env ROUNDS=0 bash %moe_src_root/bench/targets.sh > %t.rounds 2>&1; test $? -eq 2
// RUN: FileCheck %s --check-prefix=ROUNDS < %t.rounds
// RUN: timeout 10 env THREADS=1 bash %moe_src_root/bench/targets.sh > %t.threads 2>&1; test $? -eq 2
// RUN: FileCheck %s --check-prefix=THREADS < %t.threads
// RUN: timeout 10 env LLC_MIB=big bash %moe_src_root/bench/targets.sh > %t.llc 2>&1; test $? -eq 2
// RUN: FileCheck %s --check-prefix=LLC < %t.llc

// ROUNDS: targets.sh: ROUNDS must be a whole number of 1 or more (got '0')
// THREADS: targets.sh: THREADS must be a whole number of 2 or more (got '1'): the scaling targets compare 1 thread with THREADS
// LLC: targets.sh: LLC_MIB must be a whole number of MiB (got 'big')
