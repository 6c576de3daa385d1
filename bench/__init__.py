"""Benchmarks: programs that print numbers. Nothing here asserts a time.

With ``FORMWORK_COMPILED`` set (``make bench-peer``), a bench runs the engine's compiled build
(``infra/compiled.py``), put first on the path here, before the bench imports ``forms``."""

from formwork.infra.compiled import use_from_environment

use_from_environment()
