"""Run the benchmark suite: `python -m tests.perf [--quick] [BENCHMARK ...]`."""

import sys

from tests.perf.run import main

sys.exit(main())
