"""Formwork beside the peer engine, in one run: the whole tool call, as a ratio per block.

The peer is glove-memory's forms engine (TypeScript, the engine seed 000 describes). Its
sources are not part of this repository and CI has no copy: point ``--peer`` (or
``FORMWORK_PEER_SRC``) at a checkout of its repository's root (``bench/peer/README.md``).
``bench/peer/driver.ts`` drives it through its public API; it is bundled here with esbuild
(``bench/peer/package.json``, installed on first use with ``npm ci``) into
``.local/peer/driver.mjs`` and run under Node in a process of its own, which times a block of
calls when this process asks and answers with the block's median. The two engines take turns,
block by block (Formwork's block, then the peer's), so both see the machine in the same
state; each block gives one ratio, Formwork's median over the peer's, and the report gives the
median ratio with the lowest and highest block.

Cases: the whole one-field fill, as an agent makes it, on
- the travel claim at step 2 of 4 (Formwork's ``forms.examples.travel_claim``, the peer's own
  ``examples/forms-bench`` claim; each is its engine's fixture for the same form), and
- fifty fields in five steps of ten, each applying once the one before is complete, steps 1-2
  answered and the write in step 3 (Formwork's ``bench.synthetic`` form, whose fields are of
  several types and carry branches and a held answer; the peer's are plain text fields).
Formwork's tool call is ``FormService.call("form_fill")`` on the in-memory store and its
result's text as the model reads it (``result_text``, what its MCP server and agent loop
send); the peer's is its fill tool's input parsed with the tool's schema (as its agent loop
does before running a tool), its ``do`` and ``JSON.stringify`` of the result. The peer moves to
a fresh instance every 100 calls, outside the timing: its cost grows with an instance's
history (Formwork's does not), so every block, whatever its length, sees the same histories,
from none to a conversation's worth; Formwork's one instance takes every call of the run.

Formwork runs the build the interpreter imports, and the report names it (``build_note``):
``make bench-peer`` sets ``FORMWORK_COMPILED`` for the engine's compiled core
(``infra/compiled.py``); ``python -m bench.peer_perf`` alone runs the sources.

Run: ``python -m bench.peer_perf --peer DIR [--publish]`` (``make bench-peer PEER=DIR``):
the report goes to the run's own folder, or to ``bench/results/peer.md`` with ``--publish``.
Without the peer's sources it says what is missing and exits 2, writing nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from bench.engine_perf import (
    goal_verdict,
    median_us,
    prepare_synthetic,
    prepare_travel,
    ratio_range,
    tool_round,
)
from bench.reports import ROOT, git, stamped
from bench.runs import output_dir
from forms.surface.plain import result_text
from formwork.infra.compiled import build_note

HERE = Path(__file__).resolve().parent / "peer"
BUNDLE = ROOT / ".local" / "peer" / "driver.mjs"
PEER_ENV = "FORMWORK_PEER_SRC"
GOAL = 1.0
"""Issue 26: the tool call at or under the peer's cost at 14 fields."""


@dataclass(frozen=True, slots=True)
class Case:
    label: str
    fields: int
    """The form's size, as the driver names its shape (the peer's form)."""
    ours: int
    """Formwork's form's size."""
    judged: bool
    """Whether the goal is stated for this case (the rest are for reference)."""


CASES = (
    # the same claim: Formwork's asks for no e-mail in step 1, the peer's does
    Case("travel claim, step 2 of 4", 14, 13, True),
    Case("fifty fields in five steps, step 3 open", 50, 50, False),
)


def peer_root(given: str | None) -> Path | None:
    """The peer's checkout (``given``, else ``FORMWORK_PEER_SRC``) when it holds what the
    driver imports, else None."""
    text = given or os.environ.get(PEER_ENV)
    if not text:
        return None
    root = Path(text).resolve()
    needed = ("packages/glove-memory/src/forms", "examples/forms-bench/src/form.ts")
    return root if all((root / part).exists() for part in needed) else None


def bundle(root: Path) -> Path:
    """The driver bundled against the peer at ``root`` (its own dependencies installed from
    ``bench/peer/package-lock.json`` first, when missing)."""
    modules = HERE / "node_modules"
    if not (modules / ".bin" / "esbuild").exists():
        npm = shutil.which("npm") or "npm"
        # esbuild's binary comes in its platform package: no install script needs to run
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=HERE, check=True
        )
    BUNDLE.parent.mkdir(parents=True, exist_ok=True)
    aliases = {
        "glove-peer": root,
        "glove-memory": root / "packages" / "glove-memory" / "src",
        "glove-facts": root / "packages" / "glove-facts" / "src",
    }
    subprocess.run(
        [
            str(modules / ".bin" / "esbuild"),
            str(HERE / "driver.ts"),
            "--bundle",
            "--platform=node",
            "--format=esm",
            "--target=node20",
            "--log-level=warning",
            f"--outfile={BUNDLE}",
            *(f"--alias:{name}={path}" for name, path in aliases.items()),
        ],
        # the peer's sources import zod; they sit outside bench/peer, so say where it is
        env={**os.environ, "NODE_PATH": str(modules)},
        check=True,
    )
    return BUNDLE


class Peer:
    """The driver's process: one block of timed calls per ``median`` call."""

    def __init__(self, driver: Path) -> None:
        self._process = subprocess.Popen(
            ["node", str(driver)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        ready = self._answer()
        if ready.get("ready") is not True:
            raise SystemExit("the peer's driver did not start")
        # the calls each peer instance takes before the driver makes a fresh one
        self.per_instance = int(ready["per_instance"])

    def median(self, fields: int, rounds: int) -> float:
        self._stdin.write(f"{fields} {rounds}\n")
        self._stdin.flush()
        return float(self._answer()["median_us"])

    def close(self) -> None:
        self._stdin.write("quit\n")
        self._stdin.close()
        self._process.wait(timeout=60)

    @property
    def _stdin(self) -> IO[str]:
        assert self._process.stdin is not None
        return self._process.stdin

    def _answer(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise SystemExit(f"the peer's driver stopped (exit {self._process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer


def formwork_call(fields: int) -> Callable[[], object]:
    """Formwork's one-field fill on the case's form, in the case's state, and the JSON text
    of its result (as the peer's call ends with its result's)."""
    if fields == 14:
        service, _ = prepare_travel()
        form, values = "travel-claim", [{"destination": "Lisbon"}, {"destination": "Porto"}]
    else:
        service, instance = prepare_synthetic(fields, 0)
        form, values = (
            instance.form_id,
            [{"email_3": "g@example.com"}, {"email_3": "h@example.com"}],
        )
    call = tool_round(service, form, values)
    return lambda: result_text(call())


@dataclass(frozen=True, slots=True)
class Side:
    case: Case
    ours: float
    theirs: float
    ratio: tuple[float, float, float]
    """Formwork / peer: the blocks' median, lowest and highest."""


def side_by_side(peer: Peer, case: Case, blocks: int, rounds: int) -> Side:
    call = formwork_call(case.fields)
    median_us(call, 1)  # half a second of warming (the peer's driver warmed at its start)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(blocks):
        ours.append(median_us(call, rounds, warm=0.05))
        theirs.append(peer.median(case.fields, rounds))
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    spread = (statistics.median(ratios), min(ratios), max(ratios))
    return Side(case, statistics.median(ours), statistics.median(theirs), spread)


def describe(root: Path, driver: Path) -> str:
    """Which peer ran: its checkout's commit when it is a git checkout, and the bundle's
    digest (the peer's code, zod and the driver as Node ran them)."""
    top = git("rev-parse", "--show-toplevel", root=root)
    commit = git("rev-parse", "HEAD", root=root) if top and Path(top) == root else None
    digest = hashlib.sha256(driver.read_bytes()).hexdigest()[:16]
    at = f"commit {commit}" if commit else "a source tree that is no git checkout"
    return f"{at}; bundle sha256 {digest}"


def verdict(side: Side) -> str:
    """The goal's verdict on a judged case (the engine bench's wording), else none."""
    return goal_verdict(side.ratio, GOAL) if side.case.judged else "for reference"


def report(sides: list[Side], peer: str, blocks: int, rounds: int, per_instance: int) -> list[str]:
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=False)
    return [
        "# Formwork beside the peer engine",
        "",
        f"Written by `python -m bench.peer_perf` on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()} and Node {node.stdout.strip()}, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Formwork: {build_note()} "
        "(`infra/compiled.py`; `make bench-peer` runs the compiled build). The peer: "
        f"glove-memory's forms engine at {peer}. {blocks} blocks of {rounds} calls per engine "
        "and case, the engines taking turns block by block; the ratio is Formwork's median "
        "over the peer's, the median of the blocks (lowest-highest). Compare ratios, not "
        "microseconds. Nothing asserted.",
        "",
        "The call timed is the whole one-field fill an agent makes, its result's JSON text "
        'included: Formwork\'s `FormService.call("form_fill")` on the in-memory store and '
        "`result_text` (the text its MCP server and agent loop send); the peer's fill tool "
        "(the input parsed with its schema, as its agent loop does, then `do`, then "
        f"`JSON.stringify`) on its in-memory adapter, a fresh instance every {per_instance} "
        "calls (its cost grows with history; Formwork's does not, and one instance takes all "
        "its calls). The fifty-field forms differ in kind: Formwork's carries typed fields, "
        "branches and a held answer, the peer's plain text fields (`bench/peer/driver.ts`).",
        "",
        "| case | fields (Formwork, peer) | Formwork µs | peer µs | Formwork / peer | goal "
        "| verdict |",
        "|---|--:|--:|--:|--:|---|---|",
        *(
            f"| {s.case.label} | {s.case.ours}, {s.case.fields} | {s.ours:.0f} | {s.theirs:.0f} "
            f"| {ratio_range(s.ratio)} "
            f"| {'≤ 1.00×' if s.case.judged else '-'} | {verdict(s)} |"
            for s in sides
        ),
    ]


def main(argv: Sequence[str] | None = None, out: IO[str] = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peer_perf")
    parser.add_argument("--peer", help=f"the peer's checkout (default: ${PEER_ENV})")
    parser.add_argument("--blocks", type=int, default=9, help="blocks per engine and case")
    parser.add_argument("--rounds", type=int, default=1000, help="timed calls per block")
    parser.add_argument("--publish", action="store_true", help="write bench/results/peer.md")
    args = parser.parse_args(argv)
    root = peer_root(args.peer)
    if root is None:
        print(
            f"no peer sources: give --peer DIR or {PEER_ENV}, a checkout of the peer's "
            "repository holding packages/glove-memory and examples/forms-bench "
            "(bench/peer/README.md); nothing written",
            file=out,
        )
        return 2
    driver = bundle(root)
    peer = Peer(driver)
    try:
        sides = [side_by_side(peer, case, args.blocks, args.rounds) for case in CASES]
    finally:
        peer.close()
    lines = report(sides, describe(root, driver), args.blocks, args.rounds, peer.per_instance)
    print("\n".join(lines), file=out)
    path = output_dir(args.publish) / "peer.md"
    path.write_text(stamped("peer.md", "\n".join(lines) + "\n"), encoding="utf-8")
    print(f"\nwrote {path}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
