"""The demo's driver: ``Demo`` plays one conversation turn at a time over a ``Transport``.

A turn prints what the user said (or what the agent is doing unprompted), the tool call, the
tool result (the parts of it a reader should notice: what was resolved, coerced, held, fired)
and the status line the agent would see in its system prompt next turn. An approver's decision
is printed as it arrives from outside the chat, and ``show_run`` prints where a hook's Temporal
run stands when hooks run there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forms import Caller
from forms.app.approvals import Decision
from formwork.examples.demo.in_process import InProcess
from formwork.examples.demo.printing import WIDTH, compact, expect, say
from formwork.examples.demo.transports import OverHttp, Transport, token_for

_SHOWN: tuple[str, ...] = ("resolved", "coerced", "held", "now_held", "restored", "rejected")
_SHOWN += ("unknown", "confirmed", "memory")
_SHOWN += ("fired", "hooks", "closed", "reason")
_SHOWN += ("handed_over_from", "handed_over_to", "not_carried")


class Demo:
    def __init__(self, transport: Transport | None = None) -> None:
        self.transport: Transport = transport or InProcess()
        self.calls = 0
        self.caller = Caller(self.transport.principal, "conv-1")
        self.forms: dict[str, str] = {}

    def section(self, title: str, conversation: str, principal: str | None = None) -> None:
        """A new heading, and the conversation (of ``principal``, by default the transport's)
        the next turns belong to."""
        self.caller = Caller(principal or self.transport.principal, conversation)
        print(f"\n{'=' * WIDTH}\n{title}  [conversation {conversation}]\n{'=' * WIDTH}")

    def turn(
        self,
        user: str | None,
        tool: str,
        payload: dict[str, Any],
        note: str = "",
        *,
        call_id: str | None = None,
    ) -> dict[str, Any]:
        """One tool call with what led to it; ``call_id`` sends an earlier call's id again
        (a replay)."""
        print()
        if user is None:
            say("", f"(agent: {note})", indent=2)
        else:
            say("user:  ", f"“{user}”", indent=2)
        self.calls += 1
        again = f" (the id of an earlier call: {call_id})" if call_id else ""
        call_id = call_id or f"call_{self.calls:03d}"
        say("call:  ", f"{tool} {compact(payload)}{again}")
        result = self.transport.call(self.caller, tool, call_id, payload)
        if tool == "form_start" and result.get("ok"):
            self.forms[result["instance"]] = payload["form"]
        if not result["ok"]:
            say("error: ", f"{result['error']}: {result['message']}")
            if "hint" in result:
                say("hint:  ", result["hint"])
        else:
            say(
                "result: ",
                result.get("summary", "") + (" (replayed)" if "replayed" in result else ""),
            )
            for key in _SHOWN:
                if key in result:
                    say(f"{key}: ", compact(result[key]), indent=12)
            if "revisions" in result:
                say("", f"{result['label']} = {compact(result.get('value'))}", indent=12)
            for rev in result.get("revisions", []):
                say("", f"revision {rev['n']}: {compact(rev.get('value'))} by {rev['by']}", 14)
            for row in result.get("fields", []):
                value = f"  = {compact(row['value'])}" if "value" in row else ""
                marked = f"  ({row['memory']})" if "memory" in row else ""
                say("", f"{row['label']}: {row['status']}{value}{marked}", indent=12)
        lines = "\n".join(self.transport.status(self.caller)).splitlines()
        for n, line in enumerate(lines or ["(no open forms)"]):
            say("status: " if n == 0 else "        ", line)
        shown: dict[str, Any] = result
        return shown

    def build(
        self,
        principal: str,
        form_id: str,
        tool: str,
        payload: dict[str, Any],
        selection: dict[str, str] | None = None,
        *,
        chat_id: str,
        call_id: str | None = None,
        cancelled: bool = False,
        said: str | None = None,
    ) -> dict[str, Any]:
        """One builder tool call of the builder chat ``chat_id``, printed as that chat would
        log it; ``call_id`` sends an earlier call's id again (in the same chat, a replay)."""
        if said is not None:
            print()
            say("person: ", f"“{said}”", indent=2)
        self.calls += 1
        call_id = call_id or f"build_{self.calls:03d}"
        shown = f"{tool} {compact(payload)}"
        if selection:
            shown += f" selection={compact(selection)}"
        say("build: ", shown + (" [Stop pressed]" if cancelled else ""))
        result = self.transport.build(
            principal,
            form_id,
            tool,
            call_id,
            payload,
            selection,
            chat_id=chat_id,
            cancelled=cancelled,
        )
        replayed = " (replayed: nothing applied again)" if result.get("replayed") else ""
        if result.get("ok") and tool == "inspect_form":
            seen = {k: v for k, v in result.items() if k not in ("ok", "replayed")}
            say("   ok: ", compact(seen) + replayed, indent=4)
        elif result.get("ok"):
            say("   ok: ", str(result.get("summary", "")) + replayed, indent=4)
            for key, note in result.get("notes", {}).items():
                if key != "layout":  # where the packer put it: the canvas shows that
                    say(f"{key}: ", compact(note), indent=10)
        else:
            say("  err: ", f"{result['error']}: {result['message']}{replayed}", indent=4)
        return result

    def value(self, instance: str, field_id: str) -> Any:
        return self.transport.value(self.caller, self.forms[instance], instance, field_id)

    def status(self) -> str:
        return "\n".join(self.transport.status(self.caller))

    def decide(
        self,
        who: str,
        approver: str,
        roles: Sequence[str],
        approval_id: str,
        decision: Decision,
        note: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """An approver acts outside the conversation (an approvals page calling the API)."""
        print()
        verb = {"approved": "approves", "rejected": "rejects"}[decision]
        say("", f"({who} {verb} the request, outside the chat)", indent=2)
        body = {"decision": decision, **({"note": note} if note else {})}
        if isinstance(self.transport, OverHttp):
            say("api:   ", f"POST /approvals/{approval_id} {compact(body)}")
            say("", f"Authorization: {token_for(approver, roles)}", indent=11)
        else:
            held = ", ".join(repr(r) for r in roles)
            say("call:  ", f"FormService.decide(Approver({approver!r}, {{{held}}}),")
            say("", f"{approval_id!r}, {compact(body)})", indent=11)
        status, result = self.transport.decide(approver, roles, approval_id, decision, note)
        if status == 200 and result.get("ok"):
            say("result: ", f"{status} {result['summary']} form_status: {result['form_status']}")
        else:
            say("result: ", f"{status} {result.get('error')}: {result.get('message')}")
        return status, result

    def show_run(self, key: str, *, wait: float = 0.0, status: str | None = None) -> None:
        """Where the run named ``key`` stands on Temporal (nothing when hooks run in-process)."""
        found = self.transport.workflow(key, wait)
        if found is None:
            return
        say(
            "temporal: ",
            f"{found['type']} {found['status']}, workflow id {found['id']} (the idempotency key)",
        )
        if status is not None:
            expect(found["status"] == status, f"workflow {key} to be {status}")
