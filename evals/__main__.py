"""`python -m evals`: run the memory evaluation."""

import sys

from evals.cli import main

sys.exit(main())
