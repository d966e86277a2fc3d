"""The moec Python tests: the package from the build tree (MOEC_PYTHON, set by ctest, else
build/python) and the families' checkpoint helpers from test/hf."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.environ.get("MOEC_PYTHON", os.path.join(ROOT, "build", "python")))
sys.path.insert(0, os.path.join(ROOT, "test", "hf"))
