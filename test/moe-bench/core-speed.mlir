// The cores' own speed over the timed calls (tooling/CoreSpeed.h): after
// each timed call moe-bench runs the peak loop of the block's unit on the
// generated code's threads for about 20 ms and quotes its rate against the
// peak: the median over the calls with the lowest and highest, in the
// RESULT line (its last field) and, with each call's seconds, in the JSON.
// The figures are the host's, so only their form is checked. The peak is
// measured here: against a given one (--peak-gflops) there is no probe, nor
// in a sharded run (its shards run teams of their own).
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 3 --warmup 1 --threads 2 --json %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// --core-probe=false: no probe, no line, no fields.
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 3 --warmup 1 --threads 2 --core-probe=false --json %t.off.json | FileCheck %s --check-prefix=OFF --implicit-check-not=cores
// RUN: FileCheck %s --check-prefix=OFF-JSON --implicit-check-not=core_pct < %t.off.json
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 3 --warmup 1 --threads 2 --peak-gflops 100 | FileCheck %s --check-prefix=OFF --implicit-check-not=cores
// A peak measured below the cores' speed (the hidden --measured-peak-scale
// takes a tenth of it, far below any probe, even one that shares its core) rises to the fastest
// probe before the shares are taken: the line says so, and the probes
// read at most 100%, the share of the call against the raised peak.
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 3 --warmup 1 --threads 2 --measured-peak-scale 0.1 --json %t.raised.json | FileCheck %s --check-prefix=RAISED
// RUN: FileCheck %s --check-prefix=RAISED-JSON < %t.raised.json
// RUN: moe-bench --tokens 64 --hidden 32 --mlp-dim 24 --experts 6 --topk 2 --iters 3 --warmup 1 --threads 2 --parallel-mode ep --devices 2 | FileCheck %s --check-prefix=SHARDED --implicit-check-not=cores

// CHECK: peak: {{[0-9.]+}} GFLOP/s FP32 FMA, 2 threads (measured now)
// A probe faster than the peak raises it before the shares are taken (the
// quoted peak is at least every probe's rate): then a line says so, and no probe's share
// is above 100%. (Whether one is faster is the host's; a probe above 100.0%
// fails the line below.)
// CHECK: time: median {{[0-9.]+}} ms
// CHECK: cores: the peak's FP32 FMA loop after each timed call ran at [[MEDIAN:[0-9]?[0-9]\.[0-9]|100\.0]]% of the peak (median; {{[0-9]?[0-9]\.[0-9]|100\.0}}-{{[0-9]?[0-9]\.[0-9]|100\.0}}%): the cores' own speed over the calls (well under 100%: slower than the fastest measured in the run so far)
// The median probe's rate too (GFLOP/s here): a share is of each run's
// own peak, the rate compares across runs.
// CHECK: RESULT {{.*}} core_pct=[[MEDIAN]] core_rate={{[0-9]+\.[0-9]}}{{$}}

// JSON: "calls_s": [{{[0-9.e-]+}}, {{[0-9.e-]+}}, {{[0-9.e-]+}}], "core_pct": {{[0-9.e-]+}}, "core_rate": {{[0-9.e-]+}}, "core_pcts": [{{[0-9.e-]+}}, {{[0-9.e-]+}}, {{[0-9.e-]+}}]

// RAISED: peak: {{[0-9.]+}} GFLOP/s FP32 FMA, 2 threads (measured now)
// RAISED: peak: [[RAISED:[0-9.]+]] GFLOP/s FP32 FMA, 2 threads (the cores' probe between the calls, higher)
// RAISED-NEXT: time: median {{[0-9.]+}} ms
// RAISED: cores: the peak's FP32 FMA loop after each timed call ran at {{[0-9]?[0-9]\.[0-9]|100\.0}}% of the peak (median; {{[0-9]?[0-9]\.[0-9]|100\.0}}-{{[0-9]?[0-9]\.[0-9]|100\.0}}%)
// The cost model's prediction is of the raised peak too, not of the tenth
// the plan was chosen at.
// RAISED: model: predicted {{.*}} (a core at {{[0-9.]+}} GFLOP/s, 0.88 of the FP32 FMA peak of [[RAISED]] GFLOP/s over 2 threads)
// The result's own peak in the JSON (the root's is the run's last).
// RAISED-JSON: "peak_gflops": [[ROOT:[0-9.e+-]+]],
// RAISED-JSON: "peak_pct": {{[0-9.e+-]+}}, "peak_gflops": [[ROOT]], "compile_s"

// OFF: time: median {{[0-9.]+}} ms
// OFF: RESULT {{.*}} dtype=f32 peak_pct={{[0-9.]+}} quant=none{{( steal_pct=[0-9]+\.[0-9])?$}}
// OFF-JSON: "calls_s": [{{[0-9.e-]+}}, {{[0-9.e-]+}}, {{[0-9.e-]+}}]

// SHARDED: parallel: ep
// SHARDED: RESULT {{.*}} pass=forward
