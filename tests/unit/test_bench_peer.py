"""``bench.peer_perf`` without the peer's sources, and how it words a verdict (issue 26).

The side-by-side run itself needs the peer engine's sources, which CI does not have
(``bench/peer/README.md``); what runs here is everything around it.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bench import peer_perf
from bench.peer_perf import CASES, Side, peer_root, verdict


def test_without_the_peer_it_says_what_is_missing_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN no peer sources (none named, or a folder without the engine) WHEN the bench runs
    THEN it exits 2 naming what it needs, and writes no report."""
    monkeypatch.delenv(peer_perf.PEER_ENV, raising=False)
    monkeypatch.setattr(peer_perf, "output_dir", lambda publish: pytest.fail("wrote a report"))
    out = io.StringIO()
    assert peer_perf.main([], out=out) == 2
    assert peer_perf.main(["--peer", str(tmp_path)], out=out) == 2
    assert out.getvalue().count("no peer sources") == 2
    assert "bench/peer/README.md" in out.getvalue()


def test_a_checkout_is_found_by_what_the_driver_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIVEN a folder holding the forms engine and the peer's travel claim THEN it is the
    peer's root, given or from the environment; without the claim it is not."""
    (tmp_path / "packages/glove-memory/src/forms").mkdir(parents=True)
    assert peer_root(str(tmp_path)) is None
    (tmp_path / "examples/forms-bench/src").mkdir(parents=True)
    (tmp_path / "examples/forms-bench/src/form.ts").write_text("export {}\n")
    assert peer_root(str(tmp_path)) == tmp_path.resolve()
    monkeypatch.setenv(peer_perf.PEER_ENV, str(tmp_path))
    assert peer_root(None) == tmp_path.resolve()


@pytest.mark.parametrize(
    ("ratio", "low", "high", "said"),
    [
        (0.90, 0.85, 0.97, "met"),
        (0.98, 0.90, 1.05, "within the noise of the goal"),
        (1.04, 0.97, 1.10, "missed within the noise"),
        (1.20, 1.10, 1.30, "missed: 1.2× the goal"),
    ],
)
def test_the_goal_is_judged_on_the_judged_case_only(
    ratio: float, low: float, high: float, said: str
) -> None:
    """GIVEN a block ratio's median and range THEN the 14-field case is judged against 1.00x
    as the engine bench judges its goals (met only when every block is at or under it) and
    the 50-field one is for reference."""
    judged, reference = CASES
    assert verdict(Side(judged, 90, 100, (ratio, low, high))) == said
    assert verdict(Side(reference, 90, 100, (ratio, low, high))) == "for reference"
