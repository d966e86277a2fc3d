// Nesting deep enough to overflow MLIR's recursive parser (5000 regions,
// 20000 parentheses in 40 KB crashed moec and moe-opt, as it does
// mlir-opt) is refused before parsing with one error at the first level
// past 512 (dialect/ParserGuard.h), and the source line is not echoed when
// it is long. 510 levels of every kind still compile and run.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump"

// RUN: %python %S/Inputs/nest.py regions 5000 > %t/regions.mlir
// RUN: not moec %t/regions.mlir -o %t/x.o 2>&1 | FileCheck %s --check-prefix=REGIONS %{nocrash}
// RUN: not moe-opt %t/regions.mlir 2>&1 | FileCheck %s --check-prefix=REGIONS %{nocrash}
// RUN: not moe-opt < %t/regions.mlir 2>&1 | FileCheck %s --check-prefix=REGIONS-STDIN %{nocrash}
// REGIONS: regions.mlir:513:20: error: nesting deeper than 512 levels of (), [], {} and <> (refused before parsing: MLIR's recursive parser would overflow the stack)
// REGIONS-NEXT: {{^}}scf.execute_region {
// REGIONS-STDIN: <stdin>:513:20: error: nesting deeper than 512 levels

// A 40 KB line: one error line, no echo of it.
// RUN: %python %S/Inputs/nest.py parens 20000 > %t/parens.mlir
// RUN: not moec %t/parens.mlir -o %t/x.o 2>&1 | FileCheck %s --check-prefix=PARENS %{nocrash} --implicit-check-not="(("
// RUN: not moec run %t/parens.mlir --random-inputs 2>&1 | FileCheck %s --check-prefix=PARENS %{nocrash} --implicit-check-not="(("
// RUN: not moe-opt %t/parens.mlir 2>&1 | FileCheck %s --check-prefix=PARENS %{nocrash} --implicit-check-not="(("
// PARENS: parens.mlir:1:513: error: nesting deeper than 512 levels

// RUN: %python %S/Inputs/nest.py tuples 5000 > %t/tuples.mlir
// RUN: not moec %t/tuples.mlir -o %t/x.o 2>&1 | FileCheck %s --check-prefix=TUPLES %{nocrash} --implicit-check-not="tuple<"
// TUPLES: tuples.mlir:1:{{[0-9]+}}: error: nesting deeper than 512 levels

// Brackets in strings and comments do not count.
// RUN: %python -c "print('// ' + '(' * 600); print('func.func @f() attributes {s = \"' + '[' * 600 + '\"} { return }')" > %t/quoted.mlir
// RUN: moe-opt %t/quoted.mlir | FileCheck %s --check-prefix=QUOTED
// QUOTED: func.func @f() attributes {s = "{{\[\[\[}}

// 510 levels: every kind goes through the whole pipeline (and moe-opt's)
// without a crash.
// RUN: for kind in regions arrays dicts affine; do \
// RUN:   %python %S/Inputs/nest.py $kind 510 > %t/$kind-510.mlir && \
// RUN:   moec %t/$kind-510.mlir -o %t/$kind.o && \
// RUN:   moe-opt %t/$kind-510.mlir --pass-pipeline='builtin.module(moe-default)' > /dev/null || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/nest.py tuples 510 > %t/tuples-510.mlir
// RUN: moe-opt %t/tuples-510.mlir --pass-pipeline='builtin.module(moe-default)' | FileCheck %s --check-prefix=TUPLES-510
// TUPLES-510: func.func private @f(tuple<tuple<
