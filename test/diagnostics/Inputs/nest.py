"""nest.py KIND DEPTH: prints a valid .mlir module nesting DEPTH levels deep
of one kind: regions (scf.execute_region), arrays ([[..]] attribute), dicts
({a = {..}}), affine (parentheses in an affine map), tuples (tuple<..>), or
parens (bare parentheses: not valid MLIR, only deep)."""
import sys

kind, depth = sys.argv[1], int(sys.argv[2])
if kind == "regions":
    n = depth - 1  # the func's body is one level
    print("func.func @f() {\n" + "scf.execute_region {\n" * n + "scf.yield\n}\n" * n +
          "return\n}")
elif kind == "arrays":
    n = depth - 1
    print("func.func @f() attributes {v = " + "[" * n + "1" + "]" * n + "} { return }")
elif kind == "dicts":
    n = depth - 1
    print("func.func @f() attributes {v = " + "{a = " * n + "1" + "}" * n + "} { return }")
elif kind == "affine":
    n = depth - 3
    print("#m = affine_map<(d0) -> (" + "(" * n + "d0" + ")" * n + ")>\n"
          "func.func @f() attributes {m = #m} { return }")
elif kind == "tuples":
    n = depth - 2
    print("func.func private @f(%a: " + "tuple<" * n + "i32" + ">" * n + ")")
elif kind == "parens":
    print("(" * depth + ")" * depth)
else:
    sys.exit("nest.py: unknown kind " + kind)
