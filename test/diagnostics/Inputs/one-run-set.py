"""one-run-set.py DIR RUN_A RUN_B: exits 0 when DIR holds exactly the files
of RUN_A or exactly those of RUN_B (names and bytes), else says what mixes."""
import os
import sys


def files(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


got, a, b = (files(d) for d in sys.argv[1:4])
if got == a or got == b:
    sys.exit(0)
for name in sorted(set(got) | set(a) | set(b)):
    print(name, "run A" if got.get(name) == a.get(name) else "",
          "run B" if got.get(name) == b.get(name) else "", "neither"
          if got.get(name) not in (a.get(name), b.get(name)) else "")
sys.exit("%s mixes the two runs' outputs" % sys.argv[1])
