"""Settings for the whole suite.

Hypothesis: the property tests run derandomized by default (profile ``repeatable``): every
run of ``make test`` and of CI tries the same examples, so a run's result depends on the
code alone and a landing is never refused for an example a previous run did not draw. New
examples are searched for on purpose, with ``make explore`` (profile ``explore``: random
seeds, a counterexample printed with the blob that reproduces it); a counterexample found
there becomes a test of its own.

``FORMWORK_COMPILED`` (``make test-compiled``) runs the tests on the engine's compiled build
(``infra/compiled.py``), put first on the path here, before any test imports ``forms``.
"""

from __future__ import annotations

from hypothesis import settings

from formwork.infra.compiled import use_from_environment

use_from_environment()

settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True, database=None)
settings.load_profile("repeatable")
