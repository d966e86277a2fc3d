// Every family's example, at its small size and at its real model's layer
// size (DeepSeek-V3's 256 experts of 7168 x 2048 included), compiles to
// native code: the forward for this host and for an AMX target (the AMX and
// AVX512_BF16 kernels of bf16 layers), and a training step through the
// router, on one device and sharded over experts. The small ones run.
// RUN: rm -rf %t && mkdir -p %t
// RUN: for f in %examples/family-*.mlir; do moec $f -o %t/fwd.o && echo "forward $(basename $f .mlir)"; done | FileCheck %s --check-prefix=FWD
// RUN: for f in %examples/family-*.mlir; do moec --target-cpu=sapphirerapids $f -o %t/amx.o && echo "amx $(basename $f .mlir)"; done | FileCheck %s --check-prefix=AMX
// RUN: for f in %examples/family-*.mlir; do moec --backward=mean-square --routing-grad $f -o %t/bwd.o && echo "backward $(basename $f .mlir)"; done | FileCheck %s --check-prefix=BWD
// RUN: for f in %examples/family-*.mlir; do moec --mesh=expert=2 --backward=mean-square $f -o %t/ep.o && echo "sharded $(basename $f .mlir)"; done | FileCheck %s --check-prefix=EP
// RUN: for f in %examples/family-*-small.mlir; do moec run $f --random-inputs --dim 16 > /dev/null && echo "ran $(basename $f .mlir)"; done | FileCheck %s --check-prefix=RAN

// FWD-COUNT-16: forward family-
// FWD-NOT: forward
// AMX-COUNT-16: amx family-
// BWD-COUNT-16: backward family-
// EP-COUNT-16: sharded family-
// RAN-COUNT-8: ran family-{{.*}}-small
