"""``python -m formwork.examples.demo``: the command line of ``formwork.examples.demo``
(``--help``: options)."""

import sys

from formwork.examples.demo import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
