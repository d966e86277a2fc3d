// bf16 rows on the int8 kernels at a real depth, against the reference
// loops: the rows' largest magnitude (found on the elements' bits, 32 a
// register) over 44 registers, the last one partial (D 1400), with the
// largest value in that last register for some rows; on an AMX host the
// amx_int8 kind's 22 depth steps a block (1408 / 64) store two epilogue
// rows a step (elsewhere the VNNI or AVX2 kind runs the same rows). Both
// lowerings quantize the same rows the same way (integer sums, one
// epilogue arithmetic): equal but for the last bf16 rounding of a product
// of scales.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import sys; sys.path.insert(0, '%S'); import npy; \
// RUN:   v = [((r * 37 + d * 11) %% 255 - 127) / 8.0 for r in range(70) for d in range(1400)]; \
// RUN:   v[4 * 1400 + 1399] = -500.0; v[9 * 1400 + 1390] = 300.0; \
// RUN:   npy.write('%t/x.npy', 'f4', '70x1400', v); \
// RUN:   npy.write('%t/w.npy', 'f4', '2x1400x64', [((e * 13 + d * 7 + n * 5) %% 101 - 50) / 16.0 for e in range(2) for d in range(1400) for n in range(64)]); \
// RUN:   n = list(v); n[2 * 1400 + 1399] = float('nan'); npy.write('%t/xnan.npy', 'f4', '70x1400', n)"
// RUN: %python %S/npy.py write %t/s.npy i4 2 40 30
// RUN: for s in reference microkernel microkernel-fma; do moec run %s --gmm-strategy $s --input %t/x.npy --input %t/w.npy --input %t/s.npy --output-dir %t/$s > /dev/null || exit 1; done
// RUN: %python %S/npy.py compare-all %t/reference %t/microkernel 0.01
// RUN: %python %S/npy.py compare-all %t/reference %t/microkernel-fma 0.01
// A NaN in row 2's last element: that row's outputs all NaN, every other
// row's as without it.
// RUN: for s in reference microkernel microkernel-fma; do moec run %s --gmm-strategy $s --input %t/xnan.npy --input %t/w.npy --input %t/s.npy --output-dir %t/nan-$s > /dev/null || exit 1; done
// RUN: for s in reference microkernel microkernel-fma; do %python -c "import sys, math; sys.path.insert(0, '%S'); import npy; \
// RUN:   _, a = npy.read('%t/nan-$s/out0.npy'); _, b = npy.read('%t/reference/out0.npy'); \
// RUN:   bad = [i for i in range(70 * 64) if (i // 64 == 2) != math.isnan(a[i]) or (i // 64 != 2 and abs(a[i] - b[i]) > 0.01 * (1 + abs(b[i])))]; \
// RUN:   sys.exit('$s: %%d outputs wrong, first %%s' %% (len(bad), bad[:4]) if bad else 0)" || exit 1; done
func.func @main(%x: tensor<?x1400xf32>, %w: tensor<2x1400x64xf32>, %sizes: tensor<2xi32>) -> tensor<?x64xbf16> {
  %xb = arith.truncf %x : tensor<?x1400xf32> to tensor<?x1400xbf16>
  %q, %s = moe.quantize %w per_channel : tensor<2x1400x64xf32>
  %y = moe.gmm %xb, %q, %sizes scales(%s : tensor<2x64xf32>) : tensor<?x1400xbf16>, tensor<2x1400x64xi8>, tensor<2xi32>
  return %y : tensor<?x64xbf16>
}
