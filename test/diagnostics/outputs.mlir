// Outputs never clobber what they should not (runtime/AtomicFile.h): a
// device node, a symlink or a FIFO at an output path is written through,
// never replaced by a regular file; a FIFO nobody reads is refused at once;
// a killed moec or linker leaves nothing; two writers of one output leave
// one whole output; a set of outputs goes in whole or not at all; a full
// disk is one error line and no temporary file.
// RUN: rm -rf %t && mkdir -p %t/out %t/tmp %t/bin %t/race
// DEFINE: %{nocrash} = --implicit-check-not=error: --implicit-check-not="Stack dump" --implicit-check-not="LLVM ERROR"
// DEFINE: %{small} = --tokens 16 --hidden 32 --mlp-dim 32 --experts 4 --topk 2 --iters 1 --warmup 0 --peak-gflops 100

// A symlink: the library lands where it points, the link stays a link (a
// dangling one creates its target).
// RUN: echo old > %t/out/real.so && ln -s real.so %t/out/link.so && ln -s made.json %t/out/dangling.json
// RUN: moec %s -o %t/out/link.so
// RUN: test -L %t/out/link.so && file -L %t/out/link.so | FileCheck %s --check-prefix=ELF
// ELF: ELF 64-bit LSB shared object
// RUN: moe-bench %{small} --json %t/out/dangling.json > /dev/null
// RUN: test -L %t/out/dangling.json && FileCheck %s --check-prefix=JSON < %t/out/made.json
// JSON: "results"

// A FIFO: refused when nobody reads it (no wait), written through when a
// process does.
// RUN: mkfifo %t/out/fifo
// RUN: not moec %s -o %t/out/fifo --emit so 2>&1 | FileCheck %s --check-prefix=NO-READER %{nocrash}
// NO-READER: moec: error: {{.*}}out/fifo: a FIFO that no process is reading
// RUN: test -p %t/out/fifo
// RUN: %python %S/Inputs/fifo-reader.py %t/out/fifo %t/from-fifo %t/reading & \
// RUN:   reader=$!; for i in $(seq 100); do [ -e %t/reading ] && break; sleep 0.1; done; \
// RUN:   moec %s -o %t/out/fifo --emit mlir; status=$?; wait $reader; exit $status
// RUN: rm %t/reading && FileCheck %s --check-prefix=FROM-FIFO < %t/from-fifo
// FROM-FIFO: llvm.func @block

// /dev/stdout is the descriptor: through a pipe, and appended to after >>.
// RUN: moec %s -o /dev/stdout --emit mlir | FileCheck %s --check-prefix=FROM-FIFO
// RUN: echo "before" > %t/log && moec %s -o /dev/stdout --emit mlir >> %t/log
// RUN: FileCheck %s --check-prefix=APPENDED < %t/log
// APPENDED: {{^}}before
// APPENDED: llvm.func @block

// /dev/null and /dev/full are written through: the device stays, a full
// device is one error.
// RUN: moec %s -o /dev/null --emit so && test -c /dev/null
// RUN: not moec %s -o /dev/full --emit mlir 2>&1 | FileCheck %s --check-prefix=DEV-FULL %{nocrash}
// DEV-FULL: moec: error: /dev/full: No space left on device
// RUN: test -c /dev/full

// Nothing but what was asked for is left beside the outputs.
// RUN: ls -A %t/out | FileCheck %s --check-prefix=LEFT
// LEFT: {{^}}dangling.json
// LEFT-NEXT: {{^}}fifo
// LEFT-NEXT: {{^}}link.so
// LEFT-NEXT: {{^}}made.json
// LEFT-NEXT: {{^}}real.so
// LEFT-NOT: {{.}}

// A moec killed (SIGKILL) while its linker writes the library leaves no
// object in $TMPDIR and no library, whole or half, beside the output.
// RUN: cp %S/Inputs/cc-killed-while-linking.sh %t/bin/cc
// RUN: not --crash env PATH=%t/bin:%PATH% TMPDIR=%t/tmp moec %s -o %t/race/killed.so
// RUN: ls -A %t/tmp %t/race | FileCheck %s --check-prefix=KILLED
// KILLED: race:
// KILLED-EMPTY:
// KILLED-NEXT: tmp:
// KILLED-NOT: {{.}}

// Two moecs writing one library at once: it is whole, one or the other.
// RUN: moec %examples/small-e60-top8.mlir -o %t/race/top8.so && moec %examples/small-e60-top2.mlir -o %t/race/top2.so
// RUN: for round in 1 2 3; do \
// RUN:   moec %examples/small-e60-top8.mlir -o %t/race/x.so & \
// RUN:   moec %examples/small-e60-top2.mlir -o %t/race/x.so; wait; \
// RUN:   cmp -s %t/race/x.so %t/race/top8.so || cmp %t/race/x.so %t/race/top2.so || exit 1; \
// RUN: done
// Two runs publishing into one --output-dir at once: one run's set.
// DEFINE: %{fb} = moec run %s --random-inputs --backward mean-square --entry block_forward_backward
// RUN: %{fb} --seed 1 --output-dir %t/run-a > /dev/null && %{fb} --seed 2 --output-dir %t/run-b > /dev/null
// RUN: for round in 1 2 3; do \
// RUN:   %{fb} --seed 1 --output-dir %t/both > /dev/null & \
// RUN:   %{fb} --seed 2 --output-dir %t/both > /dev/null; wait; \
// RUN:   %python %S/Inputs/one-run-set.py %t/both %t/run-a %t/run-b || exit 1; \
// RUN: done

// All outputs or none: out3.npy is a directory, so out0..2 are not written
// (refused before the run; the set's own check and roll-back are
// moe-runtime-tests' AtomicFile.ASetIsPublishedWholeOrNotAtAll).
// RUN: mkdir -p %t/set/out3.npy
// RUN: not %{fb} --output-dir %t/set 2>&1 | FileCheck %s --check-prefix=SET %{nocrash} --implicit-check-not=time:
// SET: moec: error: --output-dir: {{.*}}set/out3.npy: Is a directory
// RUN: ls -A %t/set | FileCheck %s --check-prefix=SET-LEFT
// SET-LEFT: {{^}}out3.npy
// SET-LEFT-NOT: {{.}}

// A device node the test made (root): written through, still a device.
// RUN: %if root %{ mknod %t/null c 1 3 && moec %s -o %t/null && test -c %t/null %}
// RUN: %if root %{ moe-bench %{small} --json %t/null > /dev/null && test -c %t/null %}
// RUN: %if root %{ not moe-bench %{small} --tune --tuning-table %t/null 2>&1 | FileCheck %s --check-prefix=TUNE-DEV %{nocrash} %}
// RUN: %if root %{ test -c %t/null %}
// TUNE-DEV: moe-bench: error: --tune --tuning-table {{.*}}null: not a regular file (the runs after the search read the table back)
// RUN: %if root %{ moe-bench %{small} --sweep "null=0,0.5" --json %t/sweep.json --csv %t/null > /dev/null && test -c %t/null %}

// A full disk (a small tmpfs, filled): one error line, the old tuning table
// kept, no temporary file.
// RUN: %if tmpfs-mount %{ mkdir -p %t/full && unshare -m sh -c '\
// RUN:   mount -t tmpfs -o size=64k tmpfs %t/full && echo "# old table" > %t/full/t.txt && \
// RUN:   (dd if=/dev/zero of=%t/full/filler bs=4k 2>/dev/null; true) && \
// RUN:   (moe-bench %{small} --tune --tuning-table %t/full/t.txt; echo "exit $?"); \
// RUN:   (moec %s -o %t/full/lib.so; echo "exit $?"); cat %t/full/t.txt; ls -A %t/full' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL --implicit-check-not="Stack dump" --implicit-check-not="LLVM ERROR" %}
// FULL: moe-bench: error: cannot write the tuning table: {{.*}}full/t.txt: No space left on device
// FULL-NEXT: exit 2
// FULL-NEXT: moec: error: linking {{.*}}full/lib.so failed: {{.*}}ld: final link failed: No space left on device
// FULL-NEXT: exit 1
// FULL: # old table
// FULL-NEXT: filler
// FULL-NEXT: t.txt
// FULL-NOT: {{.}}
func.func @block(%x: tensor<16x32xf32>, %logits: tensor<16x4xf32>, %w13: tensor<4x32x64xf32>,
                 %w2: tensor<4x32x32xf32>) -> tensor<16x32xf32> {
  %y = moe.block %x logits(%logits : tensor<16x4xf32>) gate_up(%w13 : tensor<4x32x64xf32>)
         down(%w2 : tensor<4x32x32xf32>) top 2 : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
