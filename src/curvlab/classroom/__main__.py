"""``python -m curvlab.classroom``: see :mod:`curvlab.classroom.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
