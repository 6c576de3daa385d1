"""Offline agents: a perfect one, a null one, and one per documented way models misuse tools.

Every failure-mode persona is the perfect persona with one bad habit. It reacts to what a tool
result says, the way a model would, and to nothing else:

* an ``unknown`` id with ``did_you_mean``: resend the value under the first suggestion; with
  ``still_to_ask`` instead, resend it under the id it meant when that id is listed (a model
  knows which answer it was writing, and recognises its id among a few); otherwise send the
  same thing again;
* a rejected value it garbled itself: resend exactly the JSON value the hint names, when the hint
  names one; otherwise send the same thing again;
* a rejected blank it sent to clear a field: follow the hint when it names ``form_revise`` and
  ``retract``; otherwise send the same thing again;
* a tool that does not exist: use the intended tool when the error lists it; otherwise send the
  same thing again;
* a value the *user* got wrong (the persona sent it as said): tell the user.

The same failing thing is sent at most three times in a turn, then the persona tells the user it
could not save it; so a hint that does not say what to send shows up as a retry loop.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.forms_bench.harness import catalog
from bench.forms_bench.model import (
    Action,
    AskRemaining,
    Confirm,
    Message,
    Observation,
    Revert,
    TakeBack,
    ToolCall,
    ToolResult,
    UserTurn,
)
from forms import CompiledForm

MAX_SENDS = 3
"""The same failing thing is sent at most this many times in one turn."""

_SEND = re.compile(
    r"^send (?:the JSON boolean |the number |exactly |only the date: |it as a JSON string: )?"
    r"(?P<value>.+?)(?: without quotes| \(no quotes\))?$"
)


def named_value(hint: str | None) -> tuple[bool, Any]:
    """The one JSON value a hint tells the model to send, if it names exactly one."""
    if not hint:
        return False, None
    found: list[Any] = []
    for clause in hint.split(";"):
        match = _SEND.match(clause.strip())
        if not match:
            continue
        try:
            value = json.loads(match.group("value"))
        except ValueError:
            continue
        if value is None or isinstance(value, list | dict):
            continue
        found.append(value)
    return (True, found[0]) if len(found) == 1 else (False, None)


def suggested(hint: str | None) -> str | None:
    """The first id in a ``did you mean 'x'?`` hint."""
    match = re.search(r"did you mean '([^']+)'", hint or "")
    return match.group(1) if match else None


def camel(field_id: str) -> str:
    head, *rest = field_id.split("_")
    return head + "".join(part.capitalize() for part in rest)


def snake_label(label: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", label.casefold()).strip("_")


@dataclass
class Sent:
    """One value in a write call: what the persona meant, and what it actually sent."""

    field: str
    value: Any
    key: str
    sent: Any
    garbled: bool = False
    """The persona changed the value from what the user said (its own habit, not the user's)."""
    clearing: bool = False


@dataclass
class Meta:
    entries: dict[str, Sent] = field(default_factory=dict)
    intended: ToolCall | None = None
    """For a call to a tool that does not exist: the call the persona meant to make."""


@dataclass
class Notes:
    """What happened in this turn, for the message that ends it."""

    relays: list[str] = field(default_factory=list)
    outline: dict[str, Any] | None = None
    closed_now: bool = False


class Perfect:
    """Exact ids and JSON, one write per user turn, form_revise for take-backs and reverts."""

    name = "perfect"
    failure = "none: the reference behaviour every persona departs from in one way"

    def __init__(self, forms: Mapping[str, CompiledForm] | None = None) -> None:
        self.forms = dict(forms) if forms is not None else catalog()
        self.form_id: str | None = None
        self.started = False
        self.closed: tuple[str, str] | None = None
        self.memory: dict[str, Any] = {}
        self.prior: dict[str, list[Any]] = {}
        self._turn = -1
        self._seen = 0
        self._queue: list[list[ToolCall]] = []
        self._meta: dict[str, Meta] = {}
        self._sends: Counter[str] = Counter()
        self._notes = Notes()
        self._user = UserTurn("")
        self._n = 0

    # ------------------------------------------------------------------ the loop

    def act(self, observation: Observation) -> Action:
        if observation.turn != self._turn:
            self._start_turn(observation)
        for done in observation.results[self._seen :]:
            self._absorb(done)
        self._seen = len(observation.results)
        while self._queue:
            batch = [c for c in self._queue.pop(0) if self._allowed(c)]
            if batch:
                return batch
        return Message(self._compose(observation))

    def _start_turn(self, observation: Observation) -> None:
        self._turn, self._seen = observation.turn, 0
        self._queue, self._sends, self._notes = [], Counter(), Notes()
        self._user = observation.user
        form = observation.user.begins()
        if form is not None:
            self.form_id = form
        if self.closed is None and self.form_id is not None:
            self._queue = self.plan(observation.user)

    # ------------------------------------------------------------------ planning (overridable)

    def plan(self, turn: UserTurn) -> list[list[ToolCall]]:
        """The calls for a user turn, as batches (one batch per model round trip)."""
        calls: list[ToolCall] = []
        facts = self.facts_to_write(turn)
        if not self.started:
            calls.append(self.write("form_start", facts))
            facts = {}
        for intent in turn.intents:
            if isinstance(intent, TakeBack):
                calls.extend(self.clear(intent.field))
            elif isinstance(intent, Revert):
                calls.append(self.revise(intent.field, "undo"))
        if facts:
            calls.append(self.write("form_fill", facts))
        if any(isinstance(i, AskRemaining) for i in turn.intents):
            calls.append(self.call("form_read", {"part": "outline"}))
        if any(isinstance(i, Confirm) for i in turn.intents):
            calls.append(self.call("form_fill", {"submit": True}))
        return self.batches(calls)

    def facts_to_write(self, turn: UserTurn) -> dict[str, Any]:
        return turn.facts()

    def batches(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        return [calls] if calls else []

    def key_for(self, field_id: str) -> str:
        return field_id

    def value_for(self, field_id: str, value: Any) -> Any:
        return value

    def clear(self, field_id: str) -> list[ToolCall]:
        return [self.revise(field_id, "retract")]

    def tool_for(self, call: ToolCall) -> ToolCall:
        """The call as this persona actually names it (the bad-verb persona renames it)."""
        return call

    # ------------------------------------------------------------------ building calls

    @property
    def form(self) -> CompiledForm:
        assert self.form_id is not None
        return self.forms[self.form_id]

    def _id(self) -> str:
        self._n += 1
        return f"p{self._n}"

    def call(self, name: str, args: dict[str, Any], meta: Meta | None = None) -> ToolCall:
        real = ToolCall(name, {"form": self.form_id, **args}, self._id())
        actual = self.tool_for(real)
        meta = meta or Meta()
        if actual.name != real.name:
            meta.intended = real
        self._meta[actual.id] = meta
        return actual

    def write(
        self, tool: str, facts: Mapping[str, Any], clearing: bool = False, garble: bool = True
    ) -> ToolCall:
        meta = Meta()
        values: dict[str, Any] = {}
        for field_id, value in facts.items():
            key = self.key_for(field_id) if garble else field_id
            sent = self.value_for(field_id, value) if garble and not clearing else value
            values[key] = sent
            meta.entries[key] = Sent(
                field_id, value, key, sent, garbled=sent != value, clearing=clearing
            )
        args: dict[str, Any] = {"values": values} if values or tool == "form_fill" else {}
        return self.call(tool, args, meta)

    def resend(self, tool: str, entries: Mapping[str, Sent]) -> ToolCall:
        """A write of exactly these sent keys and values (a retry or a fix)."""
        meta = Meta(entries=dict(entries))
        values = {key: entry.sent for key, entry in entries.items()}
        return self.call(tool, {"values": values}, meta)

    def revise(self, field_id: str, action: str) -> ToolCall:
        meta = Meta(entries={field_id: Sent(field_id, None, self.key_for(field_id), None)})
        args = {"field": self.key_for(field_id), "action": action}
        return self.call("form_revise", args, meta)

    def _allowed(self, call: ToolCall) -> bool:
        """Count sends of the same thing; past the cap, give up on it and tell the user."""
        signature = f"{call.name} {json.dumps(call.args, sort_keys=True)}"
        self._sends[signature] += 1
        if self._sends[signature] <= MAX_SENDS:
            return True
        meta = self._meta.get(call.id)
        labels = [self._label(e.field) for e in meta.entries.values()] if meta else []
        self._notes.relays.append(
            f"I could not save {', '.join(labels) or 'that'}; could you say it another way?"
        )
        return False

    # ------------------------------------------------------------------ reacting to results

    def _absorb(self, done: ToolResult) -> None:
        result, call = done.result, done.call
        meta = self._meta.get(call.id, Meta())
        if result.get("closed"):
            self.closed = (str(result["closed"]), str(result.get("reason", "")))
            self._notes.closed_now = True
        follow: list[ToolCall] = []
        if "error" in result:
            follow = self._on_error(call, meta, result)
        elif call.name in ("form_start", "form_fill"):
            follow = self._on_write(call, meta, result)
        elif call.name == "form_revise":
            self._on_revise(call, meta)
        elif call.name == "form_read" and call.args.get("part") == "outline":
            self._notes.outline = result
        if follow:
            self._queue.insert(0, follow)

    def _on_error(self, call: ToolCall, meta: Meta, result: Mapping[str, Any]) -> list[ToolCall]:
        code, message = result.get("error"), str(result.get("message", ""))
        hint = str(result.get("hint", ""))
        if code == "bad_request" and message.startswith("there is no tool"):
            listed = hint.partition("the tools are:")[2]
            tools = {t.strip() for t in listed.split(",") if t.strip()}
            if meta.intended is not None and meta.intended.name in tools:
                self.learned(call.name)
                self._meta[meta.intended.id] = Meta(entries=meta.entries)
                return [meta.intended]
            return [call]
        if code == "form_closed":
            self.closed = self.closed or ("closed", message)
            self._notes.relays.append(f"I couldn't save that: {message}.")
            return []
        if code == "unknown_field" and call.name == "form_revise":
            target = suggested(hint)
            if target is None:
                return [call]
            return [self.call("form_revise", {**call.args, "field": target}, meta)]
        self._notes.relays.append(f"Something went wrong: {message}.")
        return []

    def _on_write(self, call: ToolCall, meta: Meta, result: Mapping[str, Any]) -> list[ToolCall]:
        if call.name == "form_start" and "instance" in result:
            self.started = True
        by_field = {e.field: e for e in meta.entries.values()}
        failed: set[str] = set()
        fixes: dict[str, Sent] = {}
        retries: dict[str, Sent] = {}
        after: list[ToolCall] = []
        resolved = result.get("resolved", {})
        for rejection in result.get("rejected", []):
            sent_as = str(rejection.get("field"))
            entry = meta.entries.get(sent_as) or by_field.get(resolved.get(sent_as, sent_as))
            if entry is None:
                continue
            failed.add(entry.key)
            hint = rejection.get("hint")
            if entry.clearing:
                if "form_revise" in str(hint) and "retract" in str(hint):
                    after.append(self.revise(entry.field, "retract"))
                else:
                    retries[entry.key] = entry
            elif entry.garbled:
                found, value = named_value(hint)
                if found:
                    fixes[entry.key] = Sent(entry.field, entry.value, entry.key, value)
                else:
                    retries[entry.key] = entry
            else:
                self._notes.relays.append(
                    f"I couldn't save {self._label(entry.field)}: {rejection.get('error')}. "
                    "Could you check it?"
                )
        for unknown in result.get("unknown", []):
            entry = meta.entries.get(str(unknown.get("sent")))
            if entry is None:
                continue
            failed.add(entry.key)
            options = [str(o) for o in unknown.get("did_you_mean") or [] if str(o) not in fixes]
            listed = [str(o) for o in unknown.get("still_to_ask") or []]
            if not options and entry.field in listed and entry.field not in fixes:
                options = [entry.field]
            if options:
                key = options[0]
                fixes[key] = Sent(entry.field, entry.value, key, entry.sent, entry.garbled)
            else:
                retries[entry.key] = entry
        for key, entry in meta.entries.items():
            if key not in failed and not entry.clearing:
                self._remember(entry.field, entry.value)
            elif key not in failed:
                self.memory.pop(entry.field, None)
        follow = [self.resend("form_fill" if self.started else "form_start", {**retries, **fixes})]
        follow = follow if retries or fixes else []
        return follow + after

    def _on_revise(self, call: ToolCall, meta: Meta) -> None:
        entry = next(iter(meta.entries.values()), None)
        if entry is None:
            return
        action = call.args.get("action")
        if action in ("retract", "decline"):
            self.memory.pop(entry.field, None)
        elif action == "undo" and self.prior.get(entry.field):
            self.memory[entry.field] = self.prior[entry.field].pop()

    def _remember(self, field_id: str, value: Any) -> None:
        old = self.memory.get(field_id)
        if old is not None and old != value:
            self.prior.setdefault(field_id, []).append(old)
        self.memory[field_id] = value

    def learned(self, invented: str) -> None:
        """A tool-name mistake was corrected (only the bad-verb persona keeps track)."""

    # ------------------------------------------------------------------ talking to the user

    def _label(self, field_id: str) -> str:
        if self.form_id is None or field_id not in self.form.fields:
            return field_id
        return self.form.fields[field_id].label

    def _compose(self, observation: Observation) -> str:
        notes, parts = self._notes, []
        wrote = bool(observation.user.facts()) or any(
            isinstance(i, TakeBack | Revert) for i in observation.user.intents
        )
        if self.closed is not None and (notes.closed_now or wrote):
            status, reason = self.closed
            if status == "completed":
                parts.append("That's everything: your form is complete and submitted.")
            else:
                title = self.form.title if self.form_id else "form"
                parts.append(f"This {title} is closed ({status}): {reason}.")
                if not notes.closed_now:
                    parts.append("I can't add anything more to it.")
        parts.extend(notes.relays)
        own = [line for line in observation.status if self._mine(line)]
        for line in own:
            parts.extend(
                f"Please note: {row[2:]}." for row in line.splitlines() if row.startswith("! ")
            )
        if notes.outline is not None:
            parts.append("Still needed: " + ", ".join(self._remaining(notes.outline)) + ".")
        elif own:
            head = own[0].splitlines()[0]
            back = re.search(r'back at step \S+ "([^"]+)".*?check: (.*)$', head)
            pending = re.search(r"pending: (.*)$", head)
            if back:
                parts.append(
                    f"We need to go back over {back.group(1)}: please confirm {back.group(2)}."
                )
            elif pending:
                parts.append(f"Next I need: {pending.group(1)}.")
        return " ".join(parts) or "Thanks, noted."

    def _mine(self, line: str) -> bool:
        return self.form_id is not None and line.startswith(f"[form: {self.form_id}")

    @staticmethod
    def _remaining(outline: Mapping[str, Any]) -> list[str]:
        labels: list[str] = []
        for step in outline.get("steps", []):
            for row in step.get("fields", []):
                if row.get("status") in ("pending", "ask_again"):
                    labels.append(str(row.get("label")))
        return labels


class Null:
    """Says something polite and never calls a tool: every scenario must fail."""

    name = "null"
    failure = "does nothing useful (grader validation: must fail every scenario)"

    def __init__(self, forms: Mapping[str, CompiledForm] | None = None) -> None:
        del forms

    def act(self, observation: Observation) -> Action:
        return Message("OK.")


class Labels(Perfect):
    name = "labels"
    failure = 'sends field labels as ids ("Full name" for full_name)'

    def key_for(self, field_id: str) -> str:
        return self.form.fields[field_id].label


class CamelCase(Perfect):
    name = "camel_case"
    failure = "sends camelCase ids (staffId for staff_id)"

    def key_for(self, field_id: str) -> str:
        return camel(field_id)


class SnakeLabels(Perfect):
    name = "snake_labels"
    failure = "sends snake_case spellings of labels (date_of_incident for incident_date)"

    def key_for(self, field_id: str) -> str:
        return snake_label(self.form.fields[field_id].label)


GUESSES = {
    "full_name": "name",
    "staff_id": "employee_id",
    "destination": "destination_city",
    "departure_date": "depart_date",
    "return_date": "return",
    "purpose": "trip_purpose",
    "mode": "travel_mode",
    "flight_number": "flight_no",
    "distance_km": "distance",
    "total": "total_amount",
    "cost_centre": "cost_center",
    "manager_email": "manager_email_address",
    "receipts_attached": "receipts",
    "date_of_birth": "dob",
    "phone": "phone_number",
    "prior_claim_id": "previous_claim_reference",
    "incident_type": "incident_kind",
    "incident_date": "accident_date",
    "description": "incident_description",
    "vehicle_count": "vehicles",
    "police_report_number": "police_ref",
    "severity": "injury_severity",
    "injuries": "injury_description",
    "treatment_received": "received_treatment",
    "treating_provider": "provider",
    "has_lawyer": "lawyer",
    "lawyer_name": "solicitor_name",
    "confirmed": "summary_confirmed_by_user",
    "country": "business_country",
    "annual_revenue": "revenue",
    "employee_count": "employees",
    "years_trading": "trading_years",
    "company_name": "business_name",
    "registration_number": "company_reg_number",
    "project_title": "title",
    "project_summary": "summary",
    "amount_requested": "grant_amount",
    "start_date": "project_start",
    "contact_email": "email",
    "declaration_accepted": "declaration",
}
"""Paraphrased ids a model might guess, fixed before the first run (not tuned to results)."""


class GuessedIds(Perfect):
    name = "guessed_ids"
    failure = "guesses paraphrased ids (employee_id for staff_id) and follows did_you_mean"

    def key_for(self, field_id: str) -> str:
        return GUESSES.get(field_id, field_id)


class YesBool(Perfect):
    name = "yes_bool"
    failure = 'sends booleans as "yes"/"no"'

    def value_for(self, field_id: str, value: Any) -> Any:
        if isinstance(value, bool):
            return "yes" if value else "no"
        return value


class QuotedScalars(Perfect):
    name = "quoted_scalars"
    failure = 'sends numbers and booleans as strings ("12", "true")'

    def value_for(self, field_id: str, value: Any) -> Any:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return json.dumps(value)
        return value


class BlankClear(Perfect):
    name = "blank_clear"
    failure = 'writes "" (text) or 0 (numbers) to clear an answer instead of retracting'

    def clear(self, field_id: str) -> list[ToolCall]:
        old = self.memory.get(field_id)
        blank = 0 if isinstance(old, int | float) and not isinstance(old, bool) else ""
        return [self.write("form_fill", {field_id: blank}, clearing=True)]


class EarlyValues(Perfect):
    """Reads the outline, then writes the answers that do not apply yet before their gates."""

    name = "early_values"
    failure = "writes answers for fields that do not apply yet, before the answers that gate them"

    def __init__(self, forms: Mapping[str, CompiledForm] | None = None) -> None:
        super().__init__(forms)
        self._waiting: dict[str, Any] = {}

    def plan(self, turn: UserTurn) -> list[list[ToolCall]]:
        facts = turn.facts()
        if not facts:
            return super().plan(turn)
        self._waiting = facts
        batches: list[list[ToolCall]] = []
        if not self.started:
            batches.append([self.write("form_start", {})])
        rest = UserTurn(turn.text, tuple(i for i in turn.intents if not _gives(i)))
        batches.append([self.call("form_read", {"part": "outline"})])
        batches.extend(super().plan(rest) if self.started else self._moves(rest))
        return batches

    def _moves(self, turn: UserTurn) -> list[list[ToolCall]]:
        calls = [self.revise(i.field, "undo") for i in turn.intents if isinstance(i, Revert)]
        calls += [c for i in turn.intents if isinstance(i, TakeBack) for c in self.clear(i.field)]
        if any(isinstance(i, AskRemaining) for i in turn.intents):
            calls.append(self.call("form_read", {"part": "outline"}))
        return [calls] if calls else []

    def _absorb(self, done: ToolResult) -> None:
        super()._absorb(done)
        if (
            self._waiting
            and done.call.name == "form_read"
            and done.call.args.get("part") == "outline"
            and "steps" in done.result
        ):
            gated = {
                row["id"]
                for step in done.result["steps"]
                for row in step.get("fields", [])
                if row.get("status") == "not_applicable"
            }
            early = {k: v for k, v in self._waiting.items() if k in gated}
            later = {k: v for k, v in self._waiting.items() if k not in gated}
            self._waiting = {}
            writes = [[self.write("form_fill", part)] for part in (early, later) if part]
            self._queue[0:0] = writes
            if not self._user_asked():
                self._notes.outline = None

    def _user_asked(self) -> bool:
        return any(isinstance(i, AskRemaining) for i in self._user.intents)


def _gives(intent: object) -> bool:
    from bench.forms_bench.model import Correct, Give

    return isinstance(intent, Give | Correct)


class Resend(Perfect):
    name = "resend"
    failure = "re-sends every answer it already saved with each new one"

    def facts_to_write(self, turn: UserTurn) -> dict[str, Any]:
        memory = dict(self.memory)
        for intent in turn.intents:
            if isinstance(intent, TakeBack):
                memory.pop(intent.field, None)
            elif isinstance(intent, Revert) and self.prior.get(intent.field):
                memory[intent.field] = self.prior[intent.field][-1]
        return {**memory, **turn.facts()}


INVENTED = {
    "form_start": "form_create",
    "form_fill": "form_update",
    "form_read": "form_get",
    "form_revise:retract": "form_clear_field",
    "form_revise:undo": "form_undo",
}


class BadVerb(Perfect):
    name = "bad_verb"
    failure = "first calls a verb that does not exist (form_update, form_undo, ...) for each move"

    def __init__(self, forms: Mapping[str, CompiledForm] | None = None) -> None:
        super().__init__(forms)
        self._known: set[str] = set()

    def tool_for(self, call: ToolCall) -> ToolCall:
        key = call.name
        if call.name == "form_revise":
            key = f"form_revise:{call.args.get('action')}"
        invented = INVENTED.get(key)
        if invented is None or invented in self._known:
            return call
        return ToolCall(invented, call.args, self._id())

    def learned(self, invented: str) -> None:
        self._known.add(invented)


class Trickle(Perfect):
    name = "trickle"
    failure = "writes one field per call, one call per round trip"

    def batches(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        out: list[list[ToolCall]] = []
        for call in calls:
            meta = self._meta.get(call.id)
            if call.name not in ("form_start", "form_fill") or meta is None:
                out.append([call])
                continue
            entries = list(meta.entries.values())
            if not entries:
                out.append([call])
                continue
            del self._meta[call.id]
            for n, entry in enumerate(entries):
                tool = call.name if n == 0 else "form_fill"
                out.append([self.write(tool, {entry.field: entry.value})])
        return out


PersonaFactory = Callable[[Mapping[str, CompiledForm] | None], Any]

PERSONAS: dict[str, type[Perfect] | type[Null]] = {
    cls.name: cls
    for cls in (
        Perfect,
        Null,
        Labels,
        CamelCase,
        SnakeLabels,
        GuessedIds,
        YesBool,
        QuotedScalars,
        BlankClear,
        EarlyValues,
        Resend,
        BadVerb,
        Trickle,
    )
}
FAILURE_MODES = tuple(name for name in PERSONAS if name not in ("perfect", "null"))
