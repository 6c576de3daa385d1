"""Who is calling, and which of their conversation's instances a call is about."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forms.errors import AmbiguousInstance, UnknownForm, UnknownInstance
from forms.surface.tools import check_id

if TYPE_CHECKING:  # annotations only: the Lambda handlers import ``Caller`` without the engine
    from forms.app.loop import CommitLoop
    from forms.instance import FormInstance


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling and from where. ``principal`` comes only from verified identity.

    ``context`` holds the context defaults: ``(fact key, value)`` pairs read from the same
    verified claims (``formwork.aws.auth.context_from_event``: a locale, a time zone, a
    currency), each key once. ``form_start`` writes them into empty fields that declare the
    key, below every other source of a value. A tuple, not a dict: the caller stays immutable
    and hashable, and every construction that names no context keeps working."""

    principal: str
    conversation_id: str
    source: str = "agent"
    context: tuple[tuple[str, str], ...] = ()

    def context_for(self, keys: Collection[str]) -> dict[str, str]:
        """The context defaults for ``keys`` (fact keys), for an agent's conversation only: a
        webhook names its principal in a body, so it has no verified claims to read."""
        if self.source != "agent":
            return {}
        return {key: value for key, value in self.context if key in keys}


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
