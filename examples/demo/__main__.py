"""``python -m examples.demo``: the command line of ``examples.demo`` (``--help``: options)."""

import sys

from examples.demo import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
