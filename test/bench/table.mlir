// bench/table.py, the side-by-side table of bench/compare.sh: ratios against
// the peers, and a warning for any rate above the peak of its unit measured
// in the run (a peak measured on a busy moment is no bound): exit code 3
// when moec's own rate beats it; a peer above it (it may run on another
// unit) is a warning only.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/ok.txt "peak: 400.0 GFLOP/s AVX512_BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3000 tokens_per_s=1000.0 dtype=bf16 peak_pct=75.0|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=0.3500 tokens_per_s=1200.0|PEER peer=torch_eager pass=forward dtype=bf16 topk=8 tflops=0.2000 tokens_per_s=500.0"
// RUN: %python %moe_src_root/bench/table.py %t/ok.txt | FileCheck %s --check-prefix=OK --implicit-check-not=warning
// RUN: %python -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/above.txt "peak: 300.0 GFLOP/s AVX512_BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.2500 tokens_per_s=1000.0 dtype=bf16 peak_pct=83.3|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=0.4400 tokens_per_s=1760.0"
// RUN: %python %moe_src_root/bench/table.py %t/above.txt | FileCheck %s --check-prefix=ABOVE
// RUN: %python -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/moec.txt "peak: 300.0 GFLOP/s AVX512_BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3500 tokens_per_s=1000.0 dtype=bf16 peak_pct=116.7"
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run([sys.executable] + sys.argv[1:]).returncode != 3)" %moe_src_root/bench/table.py %t/moec.txt | FileCheck %s --check-prefix=MOEC

// Four rounds (compare.sh's ROUNDS): the medians of the rates, and of each
// round's ratio (0.83, 1.10, 0.90) with their range; the fourth round has
// no peer run (its failure), so no ratio: 3 of 4 have one.
// RUN: %python -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/rounds.txt "ROUND 1 of 4|peak: 400.0 GFLOP/s AVX512_BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3000 tokens_per_s=1000.0 dtype=bf16 peak_pct=75.0|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=0.3600 tokens_per_s=1200.0|ROUND 2 of 4|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3300 tokens_per_s=1100.0 dtype=bf16 peak_pct=82.5|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=0.3000 tokens_per_s=1000.0|ROUND 3 of 4|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.2700 tokens_per_s=900.0 dtype=bf16 peak_pct=67.5|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=0.3000 tokens_per_s=1000.0|ROUND 4 of 4|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3900 tokens_per_s=1300.0 dtype=bf16 peak_pct=97.5"
// RUN: %python %moe_src_root/bench/table.py %t/rounds.txt | FileCheck %s --check-prefix=ROUNDS --implicit-check-not=warning
// One round of three above the peak (its median is not): exit code 3.
// RUN: %python -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/round-above.txt "ROUND 1 of 3|peak: 400.0 GFLOP/s AVX512_BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3000 tokens_per_s=1000.0 dtype=bf16 peak_pct=75.0|ROUND 2 of 3|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.4200 tokens_per_s=1400.0 dtype=bf16 peak_pct=105.0|ROUND 3 of 3|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3100 tokens_per_s=1030.0 dtype=bf16 peak_pct=77.5"
// RUN: %python -c "import subprocess, sys; sys.exit(subprocess.run([sys.executable] + sys.argv[1:]).returncode != 3)" %moe_src_root/bench/table.py %t/round-above.txt | FileCheck %s --check-prefix=ROUNDABOVE

// ROUNDABOVE: forward  bf16   8      0.310      77.5
// ROUNDABOVE: warning: moec forward bf16 top-8 ran at 420.0 GFLOP/s, above the AVX512_BF16 peak measured in the run (400.0)

// ROUNDS: forward  bf16   8      0.315      78.8    AVX512_BF16  -           0.300        -           0.90x (0.83-1.10, 3 of 4)
// ROUNDS: medians of 4 rounds; each ratio the median of the rounds' ratios (their range)

// OK: forward  bf16   8      0.300      75.0    AVX512_BF16  0.200       0.350        2.00x       0.83x
// OK: AVX512_BF16 peak measured in the run: 400.0 GFLOP/s
// ABOVE: warning: onednn forward bf16 top-8 ran at 440.0 GFLOP/s, above the AVX512_BF16 peak measured in the run (300.0): a peer may run on another unit, or the peak was measured on a busy moment
// MOEC: warning: moec forward bf16 top-8 ran at 350.0 GFLOP/s, above the AVX512_BF16 peak measured in the run (300.0): that peak is no upper bound (measured on a busy moment?); rerun on a quiet host
