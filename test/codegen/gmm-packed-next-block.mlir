// The kinds reading a packed weight block (AVX512_BF16's dot, AVX512-VNNI)
// with weights packed at load time: a task's
// first tile of rows would read its weight block from DRAM (the others
// find it in L2), so each task fetches the block its worker likely takes
// next while it runs. That is the task `workers` on in the table (tasks of
// about equal size alternate between the workers), if it is of the same
// kind; else the task's own block again (and the dot kind's row blocks of
// a range but its last fetch their own block). The fetch walks that block as one
// run of values, `stride` values a depth step of the task's tiles (so it
// spreads over the whole task, up to a line a step), clamped to its end.
// Tasks of a group of fewer rows than a full tile (decode sizes, bound by
// the stream of their own block) fetch no next block; a larger group's
// tasks do, whatever their own rows. Decode tasks fetch their own tiles a
// few steps ahead instead: VNNI's 16 depth quads, the dot kind's (of 2 to 4
// rows) 32 depth pairs.
// RUN: moe-opt %s -moe-lower-to-loops -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @dot_prepared
// CHECK:         scf.parallel ({{.*}}) = ({{.*}}) to (%[[WORKERS:.*]]) step
// CHECK:         scf.while
// CHECK:           %[[TASK:.*]] = arith.index_cast
// CHECK:           %[[GROUP:.*]] = memref.load %[[TABLE:.*]][%[[TASK]], %c2{{(_[0-9]+)?}}]
// CHECK:           %[[BLOCK:.*]] = memref.load %[[TABLE]][%[[TASK]], %c3{{(_[0-9]+)?}}]
// CHECK:           %[[KIND:.*]] = memref.load %[[TABLE]][%[[TASK]], %c4{{(_[0-9]+)?}}]
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[TASK]], %[[WORKERS]] : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.minsi %[[AHEAD]], %{{.*}} : index
// CHECK:           %[[NEXTKIND:.*]] = memref.load %[[TABLE]][%[[NEXT]], %c4{{(_[0-9]+)?}}]
// CHECK-NEXT:      %[[SAME:.*]] = arith.cmpi eq, %[[NEXTKIND]], %[[KIND]] : index
// CHECK:           %[[G:.*]] = memref.load %[[TABLE]][%[[NEXT]], %c2{{(_[0-9]+)?}}]
// CHECK-NEXT:      %[[NG:.*]] = arith.select %[[SAME]], %[[G]], %[[GROUP]] : index
// CHECK:           %[[CB:.*]] = memref.load %[[TABLE]][%[[NEXT]], %c3{{(_[0-9]+)?}}]
// CHECK-NEXT:      %[[NCB:.*]] = arith.select %[[SAME]], %[[CB]], %[[BLOCK]] : index
// A task is a range of row blocks of one weight block (runsRowBlocksTogether:
// one worker reads the block from DRAM, its other row blocks find it in L2),
// run one after another; until the last, the next block is the task's own.
// The short row block (rows mod the row block, 1 to a whole one) first: the
// loop starts a row block before the range's first row plus it, the first
// row block clamped to the range's first row; the last, the one that
// fetches, is whole.
// CHECK:           %[[ROWS:.*]] = arith.subi %[[END:.*]], %[[FIRST:.*]] : index
// CHECK-NEXT:      %[[RBLESS1:.*]] = arith.subi %[[ROWBLOCK:.*]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %[[ROUNDUP:.*]] = arith.addi %[[ROWS]], %[[RBLESS1]] : index
// CHECK-NEXT:      %[[REM:.*]] = arith.remsi %[[ROUNDUP]], %[[ROWBLOCK]] : index
// CHECK-NEXT:      %[[HEAD:.*]] = arith.addi %[[REM]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %[[HEADEND:.*]] = arith.addi %[[FIRST]], %[[HEAD]] : index
// CHECK-NEXT:      %[[START:.*]] = arith.subi %[[HEADEND]], %[[ROWBLOCK]] : index
// CHECK-NEXT:      scf.for %[[R:.*]] = %[[START]] to %[[END]] step %[[ROWBLOCK]] {
// CHECK-NEXT:        %[[RBFIRST:.*]] = arith.maxsi %[[R]], %[[FIRST]] : index
// CHECK-NEXT:        %[[RBEND:.*]] = arith.addi %[[R]], %[[ROWBLOCK]] : index
// CHECK-NEXT:        %[[LAST:.*]] = arith.cmpi sge, %[[RBEND]], %[[END]] : index
// CHECK-NEXT:        %[[RNG:.*]] = arith.select %[[LAST]], %[[NG]], %[[GROUP]] : index
// CHECK-NEXT:        %[[RNCB:.*]] = arith.select %[[LAST]], %[[NCB]], %[[BLOCK]] : index
// The task's own block, then the next one: 2 tiles of 16 columns x 32
// depth pairs, 2048 values.
// CHECK:           %[[OWN:.*]] = memref.subview %{{.*}}[%[[GROUP]], %{{.*}}, %{{.*}}, %{{.*}}] [1, 2, 32, 32]
// CHECK:           %[[GROUPSIZE:.*]] = memref.load %{{.*}}[%[[GROUP]]] : memref<2xi32
// CHECK-NEXT:      %[[GROUPROWS:.*]] = arith.index_cast %[[GROUPSIZE]] : i32 to index
// CHECK:           %[[FULL:.*]] = arith.cmpi sge, %[[GROUPROWS]], %c6{{(_[0-9]+)?}} : index
// CHECK:           %[[FIRSTTILE:.*]] = arith.muli %[[RNCB]], %c2{{(_[0-9]+)?}} : index
// CHECK:           %[[NEXTBLOCK:.*]] = memref.subview %{{.*}}[%[[RNG]], %[[FIRSTTILE]], %{{.*}}, %{{.*}}] [1, 2, 32, 32]
// CHECK-NEXT:      %[[FLAT:.*]] = memref.collapse_shape %[[NEXTBLOCK]] {{\[\[}}0, 1, 2]] : {{.*}} into memref<2048xbf16, {{.*}}>
// The stride: the block's values over the task's depth steps (its tiles
// of 6 rows x column quads x 32 depth pairs), 1 to 32 (a line).
// CHECK:           %[[STEPS:.*]] = arith.maxsi %{{.*}}, %c1{{(_[0-9]+)?}} : index
// CHECK:           %[[SHARE:.*]] = arith.divsi %{{.*}}, %[[STEPS]] : index
// CHECK:           %[[ATLEAST1:.*]] = arith.maxsi %[[SHARE]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %[[STRIDE:.*]] = arith.minsi %[[ATLEAST1]], %c32{{(_[0-9]+)?}} : index
// CHECK:           scf.for %[[KP:[^ ]*]] = {{.*}} iter_args
// CHECK-NEXT:        %[[STEP:.*]] = arith.addi %{{.*}}, %[[KP]] : index
// CHECK-NEXT:        scf.if %[[FULL]] {
// CHECK-NEXT:          %[[AT:.*]] = arith.muli %[[STEP]], %[[STRIDE]] : index
// CHECK-NEXT:          %[[CLAMPED:.*]] = arith.minsi %[[AT]], %c2047 : index
// CHECK-NEXT:          memref.prefetch %[[FLAT]][%[[CLAMPED]]]
// CHECK-NEXT:        }
// CHECK-NEXT:        vector.load %[[OWN]]{{.*}} vector<32xbf16>
// CHECK-COUNT-24:    x86vector.avx512.dot
// A decode tile of one row fetches no tiles of its own (a task of one row
// streamed faster without: Bf16DotKernel.cpp); one of 2 to 4 rows that is
// its task's first fetches its 4 tiles' lines 32 depth pairs ahead,
// clamped to the last.
// The tiles of 2 and of 4 rows (cases 2 and 3) alike, the clamp the last
// of the 32 depth pairs.
// CHECK:         scf.index_switch
// CHECK-NEXT:    case 1 {
// CHECK:             scf.for {{.*}} iter_args({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}) ->
// CHECK-NOT:           memref.prefetch %[[OWN]]
// CHECK:               memref.prefetch %[[FLAT]]
// CHECK-NEXT:          }
// CHECK-NOT:           memref.prefetch
// CHECK:               x86vector.avx512.dot
// CHECK:         case 2 {
// CHECK:             %[[TASKSFIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0{{(_[0-9]+)?}} : index
// CHECK:             scf.for %[[KP2:[^ ]*]] = {{.*}} iter_args
// CHECK:               memref.prefetch %[[FLAT]]
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.if %[[TASKSFIRST]] {
// CHECK:                 %[[PLUS32:.*]] = arith.addi %[[KP2]], %c32{{(_[0-9]+)?}} : index
// CHECK-NEXT:            %[[AHEADP:.*]] = arith.minsi %[[PLUS32]], %c31{{(_[0-9]+)?}} : index
// CHECK-COUNT-4:         memref.prefetch %[[OWN]][%{{.*}}, %[[AHEADP]], %{{.*}}], read, locality<3>, data : memref<2x32x32xbf16
// CHECK-NOT:           memref.prefetch
// CHECK:               x86vector.avx512.dot
// CHECK:         case 3 {
// CHECK:             %[[TASKSFIRST4:.*]] = arith.cmpi eq, %{{.*}}, %c0{{(_[0-9]+)?}} : index
// CHECK:             scf.for %[[KP4:[^ ]*]] = {{.*}} iter_args
// CHECK:               memref.prefetch %[[FLAT]]
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.if %[[TASKSFIRST4]] {
// CHECK:                 %[[PLUS32B:.*]] = arith.addi %[[KP4]], %c32{{(_[0-9]+)?}} : index
// CHECK-NEXT:            %[[AHEADP4:.*]] = arith.minsi %[[PLUS32B]], %c31{{(_[0-9]+)?}} : index
// CHECK-COUNT-4:         memref.prefetch %[[OWN]][%{{.*}}, %[[AHEADP4]], %{{.*}}], read, locality<3>, data : memref<2x32x32xbf16
// CHECK-NOT:           memref.prefetch
// CHECK:               x86vector.avx512.dot
func.func @dot_prepared(%x: tensor<?x64xbf16>, %p: tensor<2x2x32x32xbf16>, %s: tensor<2xi32>) -> tensor<?x32xbf16> {
  %w = tensor.empty() : tensor<2x64x32xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x2x32x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 32, dot_rows = 12>} : tensor<?x64xbf16>, tensor<2x64x32xbf16>, tensor<2xi32>
  return %y : tensor<?x32xbf16>
}

// -----

// VNNI: the same fetch, of int8 quads (2 tiles x 16 depth quads x 64
// bytes), up to a line (64 values) a depth step, before the rows'
// broadcasts and the vpdpbusd; as in the dot kind, not by a task of a group
// of fewer rows than a full tile.
// CHECK-LABEL: func.func @vnni_prepared
// CHECK:           %[[OWNQ:.*]] = memref.subview %{{.*}} [1, 2, 16, 64]
// CHECK:           %[[GROUPSIZEQ:.*]] = memref.load %{{.*}} : memref<2xi32
// CHECK-NEXT:      %[[GROUPROWSQ:.*]] = arith.index_cast %[[GROUPSIZEQ]] : i32 to index
// CHECK:           %[[FULLQ:.*]] = arith.cmpi sge, %[[GROUPROWSQ]], %c6{{(_[0-9]+)?}} : index
// CHECK:           %[[NEXTBLOCK:.*]] = memref.subview %{{.*}} [1, 2, 16, 64]
// CHECK-NEXT:      %[[FLAT:.*]] = memref.collapse_shape %[[NEXTBLOCK]] {{\[\[}}0, 1, 2]] : {{.*}} into memref<2048xi8, {{.*}}>
// CHECK:           %[[SHARE:.*]] = arith.divsi
// CHECK:           %[[ATLEAST1:.*]] = arith.maxsi %[[SHARE]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %[[STRIDE:.*]] = arith.minsi %[[ATLEAST1]], %c64{{(_[0-9]+)?}} : index
// CHECK:           scf.for %[[KQ:[^ ]*]] = {{.*}} iter_args
// CHECK-NEXT:        %[[STEP:.*]] = arith.addi %{{.*}}, %[[KQ]] : index
// CHECK-NEXT:        scf.if %[[FULLQ]] {
// CHECK-NEXT:          %[[AT:.*]] = arith.muli %[[STEP]], %[[STRIDE]] : index
// CHECK-NEXT:          %[[CLAMPED:.*]] = arith.minsi %[[AT]], %c2047 : index
// CHECK-NEXT:          memref.prefetch %[[FLAT]][%[[CLAMPED]]]
// CHECK-NEXT:        }
// CHECK-NOT:         memref.prefetch
// CHECK:             func.call @llvm.x86.avx512.vpdpbusd.512
// A decode tile (here the 1-row one) that is the task's first (a task of
// 1 row, not a row past the full tiles of a larger one) also fetches its
// own 4 tiles' lines 16 quads ahead, clamped to the last (15: 64 depth
// values); the full 6-row tile above does not.
// CHECK:         scf.index_switch
// CHECK-NEXT:    case 1 {
// CHECK:             %[[TASKSFIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0{{(_[0-9]+)?}} : index
// CHECK:             scf.for %[[KQ1:[^ ]*]] = {{.*}} iter_args({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}) ->
// CHECK:               memref.prefetch %[[FLAT]]
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.if %[[TASKSFIRST]] {
// CHECK:                 %[[PLUS16:.*]] = arith.addi %[[KQ1]], %c16{{(_[0-9]+)?}} : index
// CHECK-NEXT:            %[[AHEADQ:.*]] = arith.minsi %[[PLUS16]], %c15{{(_[0-9]+)?}} : index
// CHECK-COUNT-4:         memref.prefetch %[[OWNQ]][%{{.*}}, %[[AHEADQ]], %{{.*}}], read, locality<3>, data : memref<2x16x64xi8
// CHECK-NOT:           memref.prefetch
// CHECK:               func.call @llvm.x86.avx512.vpdpbusd.512
func.func @vnni_prepared(%x: tensor<?x64xf32>, %p: tensor<2x2x16x64xi8>, %sc: tensor<2x32xf32>, %s: tensor<2xi32>) -> tensor<?x32xf32> {
  %w = tensor.empty() : tensor<2x64x32xi8>
  %y = moe.gmm %x, %w, %s scales(%sc : tensor<2x32xf32>) packed(%p : tensor<2x2x16x64xi8>) {moe.lowering = #moe.gmm_lowering<kernels = ["int8_vnni"], mr = 4, nv = 2, kc = 16, nc = 64, mc = 8, packed_columns = 32>} : tensor<?x64xf32>, tensor<2x64x32xi8>, tensor<2xi32>
  return %y : tensor<?x32xf32>
}

// -----

// AMX with weights packed at load time: a task is a whole row block, its
// rows packed once for all its column blocks. Each depth step of a block
// fetches its share of the next column pair's weight lines into L2
// (locality 2), spread over the column block's row pairs x depth steps;
// after a column block's last pair, the next column block's first (after
// the last column block, the block the worker likely takes next). Tasks of
// fewer than 4 row pairs stream their weights and fetch none of the next
// pair's; those of at most 2 fetch their own tiles' 32 lines of 4 depth
// steps ahead instead (clamped to the pair's last lane).
// CHECK-LABEL: func.func private @moe_amx_task_0
// CHECK:         %[[ROWPAIRS:.*]] = arith.divsi %{{.*}}, %c32{{(_[0-9]+)?}} : index
// CHECK:         vector.store {{.*}} : memref<{{.*}}x2x16x32xbf16>
// CHECK:         } else {
// CHECK:           vector.store {{.*}} : memref<{{.*}}x2x16x32xbf16>
// The task's range of column blocks, [first, end).
// CHECK:         %[[LAST:.*]] = arith.subi %[[CBEND:[^,]*]], %c1{{(_[0-9]+)?}} : index
// CHECK:         scf.for %[[CB:[^ ]*]] = %{{[^ ]*}} to %[[CBEND]] step
// CHECK:           %[[OWN:.*]] = memref.subview %{{[^[]*}}[%[[G:[^,]*]], %{{.*}}] [1, 4, 32, 32]
// CHECK:           %[[ISLAST:.*]] = arith.cmpi eq, %[[CB]], %[[LAST]] : index
// CHECK-NEXT:      %[[NG:.*]] = arith.select %[[ISLAST]], %{{.*}}, %[[G]] : index
// CHECK-NEXT:      %[[PLUS:.*]] = arith.addi %[[CB]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %[[CLAMPED:.*]] = arith.minsi %[[PLUS]], %[[LAST]] : index
// CHECK-NEXT:      %[[NCB:.*]] = arith.select %[[ISLAST]], %{{.*}}, %[[CLAMPED]] : index
// CHECK-NEXT:      %c4{{(_[0-9]+)?}} = arith.constant 4 : index
// CHECK-NEXT:      %[[FIRSTTILE:.*]] = arith.muli %[[NCB]], %c4{{(_[0-9]+)?}} : index
// CHECK:           %[[NEXTBLOCK:.*]] = memref.subview %{{[^[]*}}[%[[NG]], %[[FIRSTTILE]], {{.*}}] [1, 4, 32, 32]
// The next pair's 2 tiles x 32 lines over row pairs x 2 depth steps.
// CHECK:           %[[SPAN:.*]] = arith.muli %[[ROWPAIRS]], %c2{{(_[0-9]+)?}} : index
// CHECK:           %[[SHARE:.*]] = arith.divsi %{{.*}}, %[[SPAN]] : index
// CHECK:           %[[FETCHING:.*]] = arith.cmpi sge, %[[ROWPAIRS]], %c4{{(_[0-9]+)?}} : index
// CHECK-NEXT:      %c3{{(_[0-9]+)?}} = arith.constant 3 : index
// CHECK-NEXT:      %[[STREAMING:.*]] = arith.cmpi slt, %[[ROWPAIRS]], %c3{{(_[0-9]+)?}} : index
// CHECK:           scf.for
// CHECK:             scf.for %[[KS:[^ ]*]] =
// CHECK-COUNT-4:       amx.tile_load
// CHECK-NEXT:          scf.if %[[FETCHING]] {
// The step's place among the pair's steps (row pair x steps + step), the
// next pair (its first tile 2 (pair + 1), or tile 0 of the next block).
// CHECK:               %[[AT:.*]] = arith.addi %{{.*}}, %[[KS]] : index
// CHECK-NEXT:          %[[PAIRPLUS:.*]] = arith.addi %[[PAIR:.*]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:          %[[INBLOCK:.*]] = arith.cmpi slt, %[[PAIRPLUS]], %{{.*}} : index
// CHECK-NEXT:          %[[WEIGHTS:.*]] = arith.select %[[INBLOCK]], %[[OWN]], %[[NEXTBLOCK]]
// CHECK-NEXT:          %[[PAIRPLUS2:.*]] = arith.addi %[[PAIR]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:          %[[NEXTFIRST:.*]] = arith.muli %[[PAIRPLUS2]], %c2{{(_[0-9]+)?}} : index
// CHECK-NEXT:          %[[NEXTTILE:.*]] = arith.select %[[INBLOCK]], %[[NEXTFIRST]], %c0{{(_[0-9]+)?}} : index
// CHECK:               scf.for %[[J:[^ ]*]] = %{{.*}} to %[[SHARE]]
// CHECK-NEXT:            %[[BASE:.*]] = arith.muli %[[AT]], %[[SHARE]] : index
// CHECK-NEXT:            %[[LINE:.*]] = arith.addi %[[BASE]], %[[J]] : index
// 2 tiles of 32 lanes (lines).
// CHECK:                 arith.cmpi slt, %[[LINE]], %{{.*}} : index
// CHECK:                 %[[SECOND:.*]] = arith.cmpi sge, %[[LINE]], %c32{{(_[0-9]+)?}} : index
// CHECK-NEXT:            %[[TILEPLUS:.*]] = arith.addi %[[NEXTTILE]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT:            %[[TILE:.*]] = arith.select %[[SECOND]], %[[TILEPLUS]], %[[NEXTTILE]] : index
// CHECK-NEXT:            %[[LANEOFF:.*]] = arith.subi %[[LINE]], %c32{{(_[0-9]+)?}} : index
// CHECK-NEXT:            %[[LANE0:.*]] = arith.select %[[SECOND]], %[[LANEOFF]], %[[LINE]] : index
// CHECK-NEXT:            memref.prefetch %[[WEIGHTS]][%[[TILE]], %[[LANE0]], %{{.*}}], read, locality<2>, data
// The task's own tiles (2 row pairs at most), 4 steps ahead.
// CHECK:               %[[AHEAD:.*]] = arith.addi %[[KS]], %c4{{(_[0-9]+)?}} : index
// CHECK-NEXT:          %[[AHEADLANE:.*]] = arith.muli %[[AHEAD]], %c16{{(_[0-9]+)?}} : index
// CHECK-NEXT:          scf.if %[[STREAMING]] {
// CHECK:                 %[[LANE:.*]] = arith.minsi %{{.*}}, %c31{{(_[0-9]+)?}} : index
// CHECK-NEXT:            memref.prefetch %[[OWN]][%{{.*}}, %[[LANE]], %{{.*}}], read, locality<2>, data
// CHECK-NEXT:            memref.prefetch %[[OWN]][%{{.*}}, %[[LANE]], %{{.*}}], read, locality<2>, data
// CHECK-COUNT-30:        memref.prefetch %[[OWN]]
// CHECK:               amx.tile_mulf
func.func @amx_prepared(%x: tensor<?x64xbf16>, %p: tensor<2x8x32x32xbf16>, %s: tensor<2xi32>) -> tensor<?x128xbf16> {
  %w = tensor.empty() : tensor<2x64x128xbf16>
  %y = moe.gmm %x, %w, %s packed(%p : tensor<2x8x32x32xbf16>) {moe.lowering = #moe.gmm_lowering<kernels = ["avx512bf16_dot", "amx_bf16"], mr = 2, nv = 2, kc = 16, nc = 64, mc = 4, packed_columns = 64, dot_rows = 12, amx_min_rows = 1>} : tensor<?x64xbf16>, tensor<2x64x128xbf16>, tensor<2xi32>
  return %y : tensor<?x128xbf16>
}
