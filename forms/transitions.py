"""What a transition gives: the commit ready to store, the instance it makes and its
evaluation (``forms.engine.transition`` builds one on every write), and what the tool results
read of it: the answers the commit left held, and those it brought back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from forms.evaluation import Evaluation
from forms.instance import Commit, FormInstance, HookState, OutboxEntry

__all__ = ["Transition"]


class Transition(NamedTuple):
    """A commit ready to store, the instance it produces, and its evaluation. A named tuple:
    one is built on every write, at a fraction of a frozen dataclass's cost."""

    commit: Commit
    after: FormInstance
    evaluation: Evaluation
    dispatch: tuple[OutboxEntry, ...]
    before: Mapping[str, HookState]
    """The hook state the commit was computed against (the previous commit's)."""
    stopped: tuple[OutboxEntry, ...] = ()
    """Entries the commit recorded as failed instead of dispatching: past ``KNOCK_ON_LIMIT``."""

    def orphaned(self) -> list[str]:
        """Fields whose answer stopped applying on this commit (now held)."""
        fields = self.evaluation.fields
        return [
            f for f in self.evaluation.flipped if fields[f].status == "held" and self._was_live(f)
        ]

    def restored(self) -> list[str]:
        """Fields whose held answer applies again on this commit, without being rewritten."""
        fields = self.evaluation.fields
        return [
            f
            for f in self.evaluation.flipped
            if f not in self.commit.fields
            and fields[f].status == "answered"
            and not self._was_live(f)
            and fields[f].revision is not None
        ]

    def _was_live(self, field_id: str) -> bool:
        before = self.before.get(f"field.{field_id}.filled")
        return before is not None and before.holds
