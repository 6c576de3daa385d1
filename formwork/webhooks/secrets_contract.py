"""The behaviour every ``SecretSource`` adapter must show, as a reusable pytest suite.

Subclass ``SecretSourceContract`` in a test module (its name must start with ``Test``) and
override the ``holding`` fixture: a function that returns a source holding the secrets given
(name -> keys, newest first), stored the way the adapter reads them::

    class TestStaticSecrets(SecretSourceContract):
        @pytest.fixture
        def holding(self) -> Holding:
            return StaticSecrets
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from formwork.webhooks.secrets import SecretSource

Holding = Callable[[Mapping[str, tuple[str, ...]]], SecretSource]

CURRENT = "k" * 40
PREVIOUS = "p" * 40
OTHER = "o" * 40


class SecretSourceContract:
    @pytest.fixture
    def holding(self) -> Holding:
        raise NotImplementedError("override the holding fixture in the adapter's test module")

    def test_a_named_secret_gives_its_key(self, holding: Holding) -> None:
        source = holding({"crm": (CURRENT,)})
        assert source.keys_for("crm") == (CURRENT,)

    def test_while_rotating_both_keys_come_back_newest_first(self, holding: Holding) -> None:
        source = holding({"crm": (CURRENT, PREVIOUS)})
        assert source.keys_for("crm") == (CURRENT, PREVIOUS)

    def test_an_unknown_name_has_no_keys(self, holding: Holding) -> None:
        source = holding({"crm": (CURRENT,)})
        assert source.keys_for("billing") == ()

    def test_names_are_kept_apart(self, holding: Holding) -> None:
        source = holding({"crm": (CURRENT,), "billing": (OTHER,)})
        assert source.keys_for("crm") == (CURRENT,)
        assert source.keys_for("billing") == (OTHER,)

    def test_reading_twice_gives_the_same_keys(self, holding: Holding) -> None:
        source = holding({"crm": (CURRENT, PREVIOUS)})
        assert source.keys_for("crm") == source.keys_for("crm") == (CURRENT, PREVIOUS)
