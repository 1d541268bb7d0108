"""`python -m autograd_viz` runs the same entry point as the `autograd-viz` command."""

import sys

from autograd_viz.cli import main

sys.exit(main())
