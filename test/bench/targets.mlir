// bench/targets.py, the table of bench/targets.sh: each target of issue 26
// against its figure from the run's logs (compare.sh's forward and training
// logs, targets.sh's own marked runs): met at or above what it needs, not met
// below, not measured when its runs are missing; the AMX rows only when the
// bf16 forward ran on AMX tiles.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/ok/forward/run.txt "ROUND 1 of 1|peak: 400.0 GFLOP/s FP32 FMA, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.3800 tokens_per_s=1000.0 dtype=f32 peak_pct=95.0 core_pct=98.0 core_rate=392.0|RESULT distribution=random mode=full pass=forward topk=2 tflops=0.3000 tokens_per_s=4000.0 dtype=f32 peak_pct=75.0 steal_pct=5.0|PEER peer=onednn pass=forward dtype=f32 topk=8 tflops=0.3610 tokens_per_s=950.0|PEER peer=onednn pass=forward dtype=f32 topk=2 tflops=0.3000 tokens_per_s=4000.0|peak: 800.0 GFLOP/s AVX512_BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=0.7600 tokens_per_s=2000.0 dtype=bf16 peak_pct=95.0|RESULT distribution=random mode=full pass=forward topk=2 tflops=0.5250 tokens_per_s=7000.0 dtype=bf16 peak_pct=65.6|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=0.6840 tokens_per_s=1800.0|PEER peer=onednn pass=forward dtype=bf16 topk=2 tflops=0.5625 tokens_per_s=7500.0"
// RUN: %python -c "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/ok/training/run.txt "peak: 400.0 GFLOP/s FP32 FMA, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward_backward topk=8 tflops=0.3000 tokens_per_s=600.0 dtype=f32 peak_pct=75.0 remat=none steal_pct=0.0 core_pct=100.5|PEER peer=torch_eager pass=forward_backward dtype=f32 topk=8 tflops=0.0600 tokens_per_s=120.0"
// RUN: %python -c "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/ok/targets.txt "TARGET section=step dtype=f32|RESULT distribution=random mode=full pass=forward_backward topk=8 tokens_per_s=600.0 dtype=f32|TARGET section=step dtype=bf16|RESULT distribution=random mode=full pass=forward_backward topk=8 tokens_per_s=1200.0 dtype=bf16|TARGET section=threads tokens=4096 pass=forward dtype=f32 threads=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=500.0 dtype=f32 core_pct=100.0 core_rate=100.0|TARGET section=threads tokens=4096 pass=forward dtype=f32 threads=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=990.0 dtype=f32 core_pct=98.0 core_rate=196.0|TARGET section=threads tokens=4096 pass=forward dtype=f32 threads=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1010.0 dtype=f32 core_pct=100.0 core_rate=200.0|TARGET section=threads tokens=4096 pass=forward dtype=f32 threads=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=520.0 dtype=f32 core_pct=104.0 core_rate=104.0|TARGET section=threads tokens=4096 pass=forward dtype=bf16 threads=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1000.0 dtype=bf16|TARGET section=threads tokens=4096 pass=forward dtype=bf16 threads=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1899.0 dtype=bf16|TARGET section=threads tokens=512 pass=forward dtype=bf16 threads=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1000.0 dtype=bf16|TARGET section=threads tokens=512 pass=forward dtype=bf16 threads=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1890.0 dtype=bf16 steal_pct=3.5 core_pct=91.5|TARGET section=decode quant=none|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=800.0 dtype=bf16 read_bandwidth_pct=65.0|TARGET section=decode quant=int8|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1400.0 dtype=bf16 quant=int8 read_bandwidth_pct=72.0|TARGET section=decode peer=onednn|PEER peer=onednn dtype=bf16 tokens=16 topk=8 tokens_per_s=700.0|TARGET section=null|RESULT distribution=random mode=full pass=forward topk=8 null_target=0 tokens_per_s=2000.0 dtype=bf16|RESULT distribution=random mode=full pass=forward topk=8 null_target=0.5 tokens_per_s=3800.0 dtype=bf16|TARGET section=int8 quant=none|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=2000.0 dtype=bf16|TARGET section=int8 quant=int8|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=3800.0 dtype=bf16 quant=int8"
// RUN: %python %moe_src_root/bench/targets.py %t/ok | FileCheck %s --check-prefix=OK --implicit-check-not=AMX:

// Two rounds on an AMX host (logs without steal: no steal line): the bf16
// ratio and share are the medians of the rounds' (2.00x and 1.40x; 50% and
// 35%); besides, only a decode run.
// RUN: %python -c "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/amx/forward/run.txt "ROUND 1 of 2|peak: 6000.0 GFLOP/s AMX BF16, 2 threads (measured now)|RESULT distribution=random mode=full pass=forward topk=8 tflops=3.0000 tokens_per_s=8000.0 dtype=bf16 peak_pct=50.0|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=1.5000 tokens_per_s=4000.0|ROUND 2 of 2|RESULT distribution=random mode=full pass=forward topk=8 tflops=2.1000 tokens_per_s=5600.0 dtype=bf16 peak_pct=35.0|PEER peer=onednn pass=forward dtype=bf16 topk=8 tflops=1.5000 tokens_per_s=4000.0"
// A decode run level with the oneDNN loop is not ahead of it.
// RUN: %python -c "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/amx/targets.txt "TARGET section=decode quant=none|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=700.0 dtype=bf16|TARGET section=decode peer=onednn|PEER peer=onednn dtype=bf16 tokens=16 topk=8 tokens_per_s=700.0"
// RUN: %python %moe_src_root/bench/targets.py %t/amx --markdown | FileCheck %s --check-prefix=AMX --implicit-check-not=steal --implicit-check-not="own speed over" --implicit-check-not="cores a thread"

// Two decode rounds: each figure the median of the rounds' (60% and 80%;
// 800 / 1000 and 700 / 500 tokens/s, each moec run against its own round's
// oneDNN run); int8's first round failed, its second stands alone and is
// set against the second round's oneDNN run (1400 / 500), not the first's.
// int8 against bf16 in four rounds, the order turned each round; the
// second round's int8 run failed (no RESULT) and that round is left out:
// the median of the other rounds' ratios (3800 / 2000, 4620 / 2200 and
// 3000 / 1500), each of its own round's pair. Paired by position, with the
// run before or after, or as a ratio of means, the figure would differ.
// RUN: %python -c "import os, sys; os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True); open(sys.argv[1], 'w').write(sys.argv[2].replace('|', '\n'))" %t/decode/targets.txt "TARGET section=decode quant=none round=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=800.0 dtype=bf16 read_bandwidth_pct=60.0|TARGET section=decode quant=int8 round=1|TARGET section=decode peer=onednn round=1|PEER peer=onednn dtype=bf16 tokens=16 topk=8 tokens_per_s=1000.0|TARGET section=decode quant=none round=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=700.0 dtype=bf16 read_bandwidth_pct=80.0 steal_pct=1.2 core_pct=50.0|TARGET section=decode quant=int8 round=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1400.0 dtype=bf16 quant=int8 read_bandwidth_pct=72.0 core_pct=74.9|TARGET section=decode peer=onednn round=2|PEER peer=onednn dtype=bf16 tokens=16 topk=8 tokens_per_s=500.0|TARGET section=int8 quant=none round=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=2000.0 dtype=bf16|TARGET section=int8 quant=int8 round=1|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=3800.0 dtype=bf16 quant=int8 core_pct=75.0|TARGET section=int8 quant=int8 round=2|TARGET section=int8 quant=none round=2|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=2500.0 dtype=bf16|TARGET section=int8 quant=none round=3|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=2200.0 dtype=bf16|TARGET section=int8 quant=int8 round=3|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=4620.0 dtype=bf16 quant=int8|TARGET section=int8 quant=int8 round=4|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=3000.0 dtype=bf16 quant=int8|TARGET section=int8 quant=none round=4|RESULT distribution=random mode=full pass=forward topk=8 tokens_per_s=1500.0 dtype=bf16"
// RUN: %python %moe_src_root/bench/targets.py %t/decode | FileCheck %s --check-prefix=DECODE

// Not a log directory: exit code 1 and a message.
// RUN: not %python %moe_src_root/bench/targets.py %t/none 2>&1 | FileCheck %s --check-prefix=NODIR

// 950 tokens/s of oneDNN against moec's 1000: 1.05x, met; 4000 against 4000: not met.
// OK:      f32 forward top-8: moec / oneDNN loop 1.05x >= 1.03x met
// OK-NEXT: f32 forward top-8: share of the FP32 FMA peak 95.0% >= 94% met
// Against the probes' median rate: 380 GFLOP/s of 392, 96.9%; a figure,
// no target, and none from rounds without the probes' rate.
// OK-NEXT: f32 forward top-8: share of the cores' own speed after the calls (info) 96.9%{{$}}
// OK-NEXT: bf16 forward top-8: moec / oneDNN loop 1.11x >= 1.05x met
// OK-NEXT: bf16 forward top-8: moec bf16 / moec f32 2.00x >= 1.90x met
// OK-NEXT: f32 forward top-2: moec / oneDNN loop 1.00x >= 1.03x not met
// OK-NEXT: f32 forward top-2: share of the FP32 FMA peak 75.0% >= 94% not met
// OK-NEXT: f32 forward top-2: share of the cores' own speed after the calls (info) -{{$}}
// OK-NEXT: bf16 forward top-2: moec / oneDNN loop 0.93x >= 1.05x not met
// OK-NEXT: bf16 forward top-2: moec bf16 / moec f32 1.75x >= 1.90x not met
// OK-NEXT: f32 forward_backward top-8: moec / PyTorch autograd 5.00x >= 2.00x met
// OK-NEXT: f32 forward_backward top-8: share of the FP32 FMA peak (info; the issue: about 80%) 75.0%{{$}}
// OK-NEXT: bf16 forward_backward / f32 forward_backward, top-8 2.00x >= 1.70x met
// Each thread count's runs averaged (1, 2, 2, 1: 510 and 1000 tokens/s);
// judged on the figure as printed (1899 / 1000 is 1.90x, met; 1.89x not).
// OK-NEXT: 1 -> 2 threads: T 4096 forward f32 1.96x >= 1.90x met
// OK-NEXT: 1 -> 2 threads: T 4096 forward bf16 1.90x >= 1.90x met
// OK-NEXT: 1 -> 2 threads: T 4096 forward_backward f32 - >= 1.90x not measured
// OK:      1 -> 2 threads: T 512 forward bf16 1.89x >= 1.90x not met
// OK:      T 16 top-8 bf16: weights' rate, share of the DRAM read bandwidth 65.0% >= 70% not met
// OK-NEXT: T 16 top-8 int8: weights' rate, share of the DRAM read bandwidth 72.0% >= 70% met
// OK-NEXT: T 16 top-8 bf16: moec / oneDNN bf16 loop 1.14x > 1.00x met
// OK-NEXT: T 16 top-8 int8: moec / oneDNN bf16 loop 2.00x > 1.00x met
// OK-NEXT: null routing f 0.5 / f 0 (bf16, take_until_null) 1.90x >= 1.80x met
// OK-NEXT: int8 / bf16 1.90x >= 2.00x not met
// OK-NEXT: compact EP / dense EP (2 in-process shards) - >= 1.50x not measured
// OK-NEXT: AVX512_BF16 peak measured in the run: 800.0 GFLOP/s
// OK-NEXT: FP32 FMA peak measured in the run: 400.0 GFLOP/s
// The largest steal of the results that report one (three here: 0.0%,
// 3.5% and 5.0%), and the run it is of: compare.sh's pass, dtype, top-k
// and round (targets.sh's runs: their marker).
// OK-NEXT: hypervisor steal over the timed calls: at most 5.0% of the machine's CPU time (compare.sh forward f32 top-2, round 1 of 1); 2 of 3 results had any
// The cores a thread in the runs of a thread ratio whose runs all report
// their probes' rate (T 4096 forward f32 here): the two-thread runs' mean
// rate a thread (196 and 200 over 2: 99) against the one-thread runs' (100
// and 104: 102), 0.97.
// OK-NEXT: the cores a thread in the thread ratios' runs, 2 threads against 1 (the probes' rates): T 4096 forward f32 0.97
// The slowest the cores ran over a run's calls (seven results report it:
// 99.0%, 100.5%, 91.5% and the four above), the run it is of, and the
// median of the seven.
// OK-NEXT: the cores' own speed over the timed calls (the peak's loop after each): at least 91.5% of the run's peak (section=threads tokens=512 pass=forward dtype=bf16 threads=2); median over the 7 results 100.0%
// OK-NEXT: 12 of 25 targets met, 7 not met, 6 not measured (bf16 ran without AMX tiles: the AMX targets need an AMX host)

// AMX: | AMX: bf16 forward top-8: moec / oneDNN loop | 1.70x (1.40-2.00x) | >= 1.50x | met |
// AMX: | AMX: bf16 forward top-8: share of the AMX BF16 peak | 42.5% (35.0-50.0%) | >= 40% | met |
// AMX: | T 16 top-8 bf16: moec / oneDNN bf16 loop | 1.00x | > 1.00x | not met |
// AMX: 3 of 27 targets met, 1 not met, 23 not measured{{$}}

// DECODE:      T 16 top-8 bf16: weights' rate, share of the DRAM read bandwidth 70.0% (60.0-80.0%) >= 70% met
// DECODE-NEXT: T 16 top-8 int8: weights' rate, share of the DRAM read bandwidth 72.0% >= 70% met
// DECODE-NEXT: T 16 top-8 bf16: moec / oneDNN bf16 loop 1.10x (0.80-1.40x) > 1.00x met
// DECODE-NEXT: T 16 top-8 int8: moec / oneDNN bf16 loop 2.80x > 1.00x met
// DECODE:      int8 / bf16 2.00x (1.90-2.10x) >= 2.00x met
// A run of targets.sh's own is named by its marker.
// DECODE:      hypervisor steal over the timed calls: at most 1.2% of the machine's CPU time (section=decode quant=none round=2); 1 of 1 results had any
// The slowest cores (50.0%), then every run whose cores ran under 75% of
// the peak, in the log's order (50.0% and 74.9%; 75.0% is not under it).
// DECODE-NEXT: the cores' own speed over the timed calls (the peak's loop after each): at least 50.0% of the run's peak (section=decode quant=none round=2); median over the 3 results 74.9%
// DECODE-NEXT: runs whose cores ran under 75% of the run's peak over their calls (the host held a core back; their figures are the host's): section=decode quant=none round=2 (50.0%), section=decode quant=int8 round=2 (74.9%){{$}}

// NODIR: targets.py: {{.*}}none is not a directory (targets.sh's LOG_DIR)
