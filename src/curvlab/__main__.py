"""``python -m curvlab``: the studies' command line (:mod:`curvlab.cli`)."""

from curvlab.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
