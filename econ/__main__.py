"""`python -m econ` runs the command line."""

import sys

from econ.cli import main

sys.exit(main())
