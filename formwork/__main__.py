"""``python -m formwork``: the ``formwork`` command (``formwork.cli``)."""

from formwork.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
