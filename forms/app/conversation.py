"""Who is calling, and which of their conversation's instances a call is about."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import FrozenInstanceError
from typing import TYPE_CHECKING

from forms.errors import AmbiguousInstance, UnknownForm, UnknownInstance
from forms.surface.tools import check_id

if TYPE_CHECKING:  # annotations only: the Lambda handlers import ``Caller`` without the engine
    from forms.app.loop import CommitLoop
    from forms.instance import FormInstance


class Caller:
    """Who is calling and from where. ``principal`` comes only from verified identity.

    ``context`` holds the context defaults: ``(fact key, value)`` pairs read from the same
    verified claims (``formwork.aws.auth.context_from_event``: a locale, a time zone, a
    currency), each key once. ``form_start`` writes them into empty fields that declare the
    key, below every other source of a value. A tuple, not a dict: the caller stays immutable
    and hashable, and every construction that names no context keeps working.

    What a frozen slotted dataclass of the four would be (made, compared, hashed, printed,
    refusing changes and copied as one), written out: the dataclass was generated when the
    handlers imported it, on every cold start."""

    __slots__ = ("context", "conversation_id", "principal", "source")
    __match_args__ = ("principal", "conversation_id", "source", "context")

    principal: str
    conversation_id: str
    source: str
    context: tuple[tuple[str, str], ...]

    def __init__(
        self,
        principal: str,
        conversation_id: str,
        source: str = "agent",
        context: tuple[tuple[str, str], ...] = (),
    ) -> None:
        _set(self, "principal", principal)
        _set(self, "conversation_id", conversation_id)
        _set(self, "source", source)
        _set(self, "context", context)

    def _parts(self) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
        return (self.principal, self.conversation_id, self.source, self.context)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._parts() == other._parts()

    def __hash__(self) -> int:
        return hash(self._parts())

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(principal={self.principal!r}, "
            f"conversation_id={self.conversation_id!r}, source={self.source!r}, "
            f"context={self.context!r})"
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[Caller], tuple[str, str, str, tuple[tuple[str, str], ...]]]:
        return (type(self), self._parts())  # a copy, a deep copy and a pickle made through __init__

    def context_for(self, keys: Collection[str]) -> dict[str, str]:
        """The context defaults for ``keys`` (fact keys), for an agent's conversation only: a
        webhook names its principal in a body, so it has no verified claims to read."""
        if self.source != "agent":
            return {}
        return {key: value for key, value in self.context if key in keys}


_set = object.__setattr__


def locate(
    loop: CommitLoop, caller: Caller, form_name: str, instance_id: str | None
) -> tuple[FormInstance, bool]:
    """The caller's instance of a form: by id, or the only open one (else the latest).

    Also says whether the conversation has several open instances of that form, in which case
    the status line names the instance. One store read, of this principal's conversation only:
    another principal's instance is as unknown as a missing one.
    """
    mine = loop.store.list_conversation(caller.principal, caller.conversation_id)
    if instance_id is not None:
        check_id(instance_id, "instance id")
        for instance in mine:
            if instance.id == instance_id:
                open_ = [i for i in mine if i.state.status == "open"]
                return instance, sum(i.form_id == instance.form_id for i in open_) > 1
        raise UnknownInstance(
            f"no instance {instance_id!r} in this conversation",
            "call form_list to see this conversation's forms",
        )
    form = loop.registry.latest(form_name, caller.principal)
    if len(mine) == 1 and mine[0].form_id == form.id:  # most conversations: its one instance
        return mine[0], False
    ofthis = [i for i in mine if i.form_id == form.id]
    if not ofthis:
        raise UnknownForm(f"this conversation has no {form.id} yet", "call form_start to begin it")
    open_ = [i for i in ofthis if i.state.status == "open"]
    if len(open_) > 1:
        raise AmbiguousInstance(
            f"this conversation has {len(open_)} open {form.id}",
            "pass instance, one of: " + ", ".join(i.id for i in open_),
        )
    return (open_[0] if open_ else ofthis[-1]), False
