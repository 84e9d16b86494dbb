"""The suite, its fakes and its benchmarks."""

import sys

# PYTHONDONTWRITEBYTECODE is set on the machine the suite is measured on: without bytecode
# each xdist worker compiled and rewrote every test module again, and every `python -m bot` a
# test starts compiled some 200 of our files. The suite keeps bytecode in the ignored
# __pycache__ folders, as pip does for an installed package (tests/conftest.py compiles ours
# before the workers start).
sys.dont_write_bytecode = False
