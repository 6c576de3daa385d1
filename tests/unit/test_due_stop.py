"""A sweep told to stop reads no further page of the due index (``DueIndex.due``).

``keep_going()`` is asked before each page after the first is read, so a Lambda running out of
time pays for no Query and batch read whose instances it will not sweep.
"""

from __future__ import annotations

from collections.abc import Iterator

from forms.instance import FormInstance
from forms.storage.contract_builders import at
from forms.storage.due import DUE_SHARDS, DueIndex
from forms.storage.due_contract import entry, with_outbox


class CountingIndex(DueIndex):
    """Two pages of one due instance in every shard; counts the pages read."""

    def __init__(self) -> None:
        self.reads = 0
        self.instance = with_outbox("fi_1", entry("fi_1"))

    def _due_read(self, partition: str, upto: str) -> Iterator[list[FormInstance | None]]:
        for _ in range(2):
            self.reads += 1
            yield [self.instance]


def test_a_stop_reads_no_further_page() -> None:
    # GIVEN an index whose every shard has two pages
    index = CountingIndex()
    asked: list[int] = []

    def keep_going() -> bool:
        asked.append(index.reads)
        return len(asked) < 4

    # WHEN the sweep is told to stop the fourth time it asks
    found = list(index.due(at(1), keep_going))
    # THEN it asked before each read after the first (and before each shard's first read),
    # read nothing after the stop, and yielded every page it read
    assert asked == [1, 2, 2, 3]
    assert index.reads == asked[-1] == 3
    assert len(found) == 3


def test_without_a_stop_every_page_of_every_shard_is_read() -> None:
    index = CountingIndex()
    assert len(list(index.due(at(1), lambda: True))) == 2 * DUE_SHARDS
    assert index.reads == 2 * DUE_SHARDS
