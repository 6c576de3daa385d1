"""Behaviour of ``forms.refs.references``: static reference extraction.

The sample predicates and executors below are deliberately written the way
form definitions write them.  Comments of the form ``# @marker`` let tests
compute the absolute line numbers that ``Ref.where`` must report.
"""

from __future__ import annotations

import functools
import importlib.util
import keyword
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forms.refs import Ref, references

THIS_FILE = __file__
PROJECT_ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------
# Stand-ins used by the samples
# --------------------------------------------------------------------------


class Jump:
    """Tiny stand-in for the runtime ``Jump`` action."""

    def __init__(self, step: object = None) -> None:
        self.step = step


class Patch:
    """Tiny stand-in for the runtime ``Patch`` action."""

    def __init__(self, values: dict[Any, object] | None = None) -> None:
        self.values = values


class Incident:
    """A step class; references through classes are checked elsewhere."""


actions = SimpleNamespace(Jump=Jump, Patch=Patch)
DYNAMIC_NAME = "computed"


def _field(**callables: Callable[..., object]) -> dict[str, Callable[..., object]]:
    """Mimic ``Field(when=...)``: hand the callables back by keyword."""
    return callables


def _register(fn: Callable[..., object]) -> Callable[..., object]:
    """A decorator that returns the function unchanged."""
    return fn


def _logged(fn: Callable[..., object]) -> Callable[..., object]:
    """A decorator that wraps the function with ``functools.wraps``."""

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        return fn(*args, **kwargs)

    return wrapper


# --------------------------------------------------------------------------
# Sample predicates
# --------------------------------------------------------------------------

VEHICLE = _field(when=lambda v: v.incident_type == "vehicle")  # @vehicle
SEVERE = _field(when=lambda v, s: s.step_complete("incident") and v.severity is not None)  # @severe
PAIR = _field(when=lambda v: v.alpha and v.alpha_too, other=lambda v: v.beta)  # @pair
MULTI_LINE = _field(
    when=lambda v: (  # @multi-start
        v.first  # @multi-first
        and v.second  # @multi-second
    )
)
NESTED_LAMBDA = _field(when=lambda v: lambda w: w.inner and v.outer)
COMPREHENSION = _field(
    when=lambda v: any(x > v.limit for x in v.items if x in {k for k in v.allowed})
)
GETATTR = _field(when=lambda v: getattr(v, "dynamic", None) or getattr(v, DYNAMIC_NAME))
CLASS_ARG = _field(when=lambda v, s: s.step_complete(Incident) and s.step_applies("vehicle"))
STATE_CALLS = _field(when=lambda v, s: s.fired("approved") or s.step_open("review"))
DEEP = _field(when=lambda v: v.address.city)
NO_PARAMS = _field(when=lambda: True)


def is_severe(values: Any, state: Any) -> bool:  # @def
    """A predicate written as a ``def``."""
    return bool(state.step_complete("injuries") and values.severity == "major")  # @def-body


@_register  # @registered
def registered(v: Any) -> bool:
    """A predicate whose decorator returns it unchanged."""
    return bool(v.registered_field)


@_logged
def decorated(v: Any, s: Any) -> bool:
    """A predicate wrapped with ``functools.wraps``."""
    return bool(v.wrapped_field and s.step_complete("wrapped_step"))  # @decorated-body


def with_threshold(limit: int, v: Any, s: Any) -> bool:
    """A predicate with a leading parameter meant to be bound by ``partial``."""
    return bool(v.amount > limit and s.step_complete("amounts"))


class Rules:
    """Predicates as a bound method and as a callable instance."""

    def check(self, v: Any, s: Any) -> bool:
        return bool(v.method_field and s.fired("method_checkpoint"))

    def __call__(self, v: Any) -> bool:
        return bool(v.called_field)


# --------------------------------------------------------------------------
# Sample executors
# --------------------------------------------------------------------------


def triage(ctx: Any) -> object:  # @triage
    v = ctx.values
    if v.severity == "minor" and not ctx.state.step_complete("injuries"):  # @triage-if
        return [Patch({"track": "fast"}), Jump("review")]  # @triage-actions
    if ctx.values.prior_claim_id:  # @triage-prior
        return Jump(step="identity")  # @triage-jump
    return None


def aliased(ctx: Any) -> object:
    state = ctx.state
    vals = ctx.values
    again = vals
    typed: Any = ctx.values
    if (walrus := ctx.values) and again.via_alias and typed.via_annotation:
        return walrus.via_walrus and state.fired("alias_checkpoint")
    return None


def nested_executor(ctx: Any) -> object:
    s = ctx.state

    def helper() -> object:
        return s.fired("inner_checkpoint")

    spread: dict[str, int] = {"spread": 3}
    patches = [actions.Patch(values={"total": 1, 2: "not a name"}), actions.Patch({**spread})]
    return [*patches, actions.Jump(step=Incident), helper()]


def mixed_patches(ctx: Any) -> object:
    return [Patch(values={"a": 1}), Patch({"b": 2, "c": 3}), Patch(ctx.values), Jump()]


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def _line(marker: str) -> int:
    """Absolute line number of the ``# @marker`` comment in this file."""
    lines = Path(THIS_FILE).read_text().splitlines()
    hits = [i for i, text in enumerate(lines, 1) if text.rstrip().endswith(f"# @{marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def _at(marker: str) -> str:
    return f"{THIS_FILE}:{_line(marker)}"


def _names(refs: tuple[Ref, ...] | None) -> list[tuple[str, str]]:
    assert refs is not None
    return [(ref.kind, ref.name) for ref in refs]


def _predicate(fn: Callable[..., object]) -> list[tuple[str, str]]:
    return _names(references(fn, style="predicate"))


def _executor(fn: Callable[..., object]) -> list[tuple[str, str]]:
    return _names(references(fn, style="executor"))


# --------------------------------------------------------------------------
# Lambdas
# --------------------------------------------------------------------------


def test_one_parameter_lambda_reports_its_field_with_location_and_context() -> None:
    # GIVEN a one-parameter lambda predicate
    # WHEN its references are extracted
    refs = references(VEHICLE["when"], style="predicate")
    # THEN the single field is reported where it is written
    assert refs == (Ref("field", "incident_type", _at("vehicle"), "v.incident_type"),)


def test_two_parameter_lambda_reports_steps_and_fields_in_source_order() -> None:
    # GIVEN a predicate using both the values and the state roots
    refs = references(SEVERE["when"], style="predicate")
    # THEN the step comes first, then the field, both on the right line
    assert refs == (
        Ref("step", "incident", _at("severe"), 's.step_complete("incident")'),
        Ref("field", "severity", _at("severe"), "v.severity"),
    )


def test_two_lambdas_on_one_line_are_told_apart() -> None:
    # GIVEN two lambdas written on the same line
    # WHEN each is inspected
    # THEN each reports only its own fields
    assert _predicate(PAIR["when"]) == [("field", "alpha"), ("field", "alpha_too")]
    assert _predicate(PAIR["other"]) == [("field", "beta")]


def test_multi_line_lambda_reports_each_field_on_its_own_line() -> None:
    # GIVEN a lambda whose body spans several lines
    refs = references(MULTI_LINE["when"], style="predicate")
    # THEN every field carries the absolute line it is written on
    assert refs is not None
    assert [(r.name, r.where) for r in refs] == [
        ("first", _at("multi-first")),
        ("second", _at("multi-second")),
    ]


def test_nested_lambdas_resolve_to_the_right_node() -> None:
    # GIVEN a lambda returning another lambda on the same line
    outer = NESTED_LAMBDA["when"]
    inner = outer(SimpleNamespace(outer=1))
    assert callable(inner)
    # THEN the outer walks the inner body but only its own root counts
    assert _predicate(outer) == [("field", "outer")]
    # AND the inner lambda's first parameter is its values root
    assert _predicate(inner) == [("field", "inner")]


def test_comprehensions_inside_the_body_are_walked() -> None:
    # GIVEN a predicate whose root is used inside nested comprehensions
    # THEN all uses are reported in source order
    assert _predicate(COMPREHENSION["when"]) == [
        ("field", "limit"),
        ("field", "items"),
        ("field", "allowed"),
    ]


def test_getattr_with_a_constant_name_is_a_field_reference() -> None:
    # GIVEN getattr with a constant and with a computed attribute name
    refs = references(GETATTR["when"], style="predicate")
    # THEN only the constant one is reported
    assert refs is not None
    assert [(r.kind, r.name, r.context) for r in refs] == [
        ("field", "dynamic", 'getattr(v, "dynamic")'),
    ]


def test_class_argument_to_step_complete_is_ignored() -> None:
    # GIVEN a step referenced through a class and another through a string
    # THEN only the string is reported
    assert _predicate(CLASS_ARG["when"]) == [("step", "vehicle")]


def test_checkpoints_and_other_step_methods_are_reported() -> None:
    assert _predicate(STATE_CALLS["when"]) == [("checkpoint", "approved"), ("step", "review")]


def test_attribute_chains_report_only_the_first_field() -> None:
    assert _predicate(DEEP["when"]) == [("field", "address")]


def test_lambda_without_parameters_has_no_references() -> None:
    assert references(NO_PARAMS["when"], style="predicate") == ()


# --------------------------------------------------------------------------
# Defs, decorators, partials, methods
# --------------------------------------------------------------------------


def test_def_predicate_reports_references_at_their_absolute_lines() -> None:
    refs = references(is_severe, style="predicate")
    assert refs == (
        Ref("step", "injuries", _at("def-body"), 'state.step_complete("injuries")'),
        Ref("field", "severity", _at("def-body"), "values.severity"),
    )


def test_def_with_a_transparent_decorator_is_found() -> None:
    # GIVEN a def whose code starts at its decorator line
    # THEN it is still located
    assert _predicate(registered) == [("field", "registered_field")]


def test_functools_wraps_decorated_function_reports_the_original_body() -> None:
    refs = references(decorated, style="predicate")
    assert refs is not None
    assert [(r.kind, r.name, r.where) for r in refs] == [
        ("field", "wrapped_field", _at("decorated-body")),
        ("step", "wrapped_step", _at("decorated-body")),
    ]


def test_partial_bound_arguments_shift_the_roots() -> None:
    # GIVEN a predicate whose first parameter is bound by partial
    bound = functools.partial(with_threshold, 10)
    # THEN the remaining parameters are the values and state roots
    assert _predicate(bound) == [("field", "amount"), ("step", "amounts")]
    # AND without the partial the first parameter would be the values root
    assert _predicate(with_threshold) == []


def test_partial_keyword_binding_removes_that_root() -> None:
    bound = functools.partial(with_threshold, 10, s=None)
    assert _predicate(bound) == [("field", "amount")]


def test_bound_method_skips_self() -> None:
    assert _predicate(Rules().check) == [
        ("field", "method_field"),
        ("checkpoint", "method_checkpoint"),
    ]


def test_callable_instance_uses_its_call_method() -> None:
    assert _predicate(Rules()) == [("field", "called_field")]


# --------------------------------------------------------------------------
# Executors
# --------------------------------------------------------------------------


def test_executor_reports_fields_steps_patches_and_jumps() -> None:
    # GIVEN the triage executor using ctx.values, ctx.state, an alias, Patch and Jump
    refs = references(triage, style="executor")
    # THEN every reference is reported in source order with its location
    assert refs == (
        Ref("field", "severity", _at("triage-if"), "v.severity"),
        Ref("step", "injuries", _at("triage-if"), 'ctx.state.step_complete("injuries")'),
        Ref("field", "track", _at("triage-actions"), 'Patch key "track"'),
        Ref("step", "review", _at("triage-actions"), 'Jump("review")'),
        Ref("field", "prior_claim_id", _at("triage-prior"), "ctx.values.prior_claim_id"),
        Ref("step", "identity", _at("triage-jump"), 'Jump(step="identity")'),
    )


def test_aliases_of_roots_are_roots_too() -> None:
    assert _executor(aliased) == [
        ("field", "via_alias"),
        ("field", "via_annotation"),
        ("field", "via_walrus"),
        ("checkpoint", "alias_checkpoint"),
    ]


def test_nested_functions_and_qualified_actions_are_walked() -> None:
    # GIVEN a nested helper, a qualified Patch with odd keys and a class Jump target
    # THEN constant keys and the helper's checkpoint are reported; non-string keys,
    # `**` spreads, the separate `spread` dict and class targets are skipped
    assert _executor(nested_executor) == [
        ("checkpoint", "inner_checkpoint"),
        ("field", "total"),
    ]


def test_patch_keyword_and_positional_forms() -> None:
    assert _executor(mixed_patches) == [
        ("field", "a"),
        ("field", "b"),
        ("field", "c"),
    ]


def test_executor_style_does_not_treat_the_context_as_values() -> None:
    # GIVEN a predicate inspected as if it were an executor
    # THEN nothing is reported: `v` is the context and `s` is no root at all
    assert _executor(SEVERE["when"]) == []


def test_results_are_deterministic() -> None:
    first = references(triage, style="executor")
    second = references(triage, style="executor")
    assert first == second
    assert first is not None
    assert [r.where for r in first] == sorted(
        (r.where for r in first), key=lambda w: int(w.rsplit(":", 1)[1])
    )


# --------------------------------------------------------------------------
# Unlocatable sources
# --------------------------------------------------------------------------


def test_eval_lambda_returns_none() -> None:
    fn = eval("lambda v: v.anything")
    assert references(fn, style="predicate") is None


def test_exec_def_returns_none() -> None:
    namespace: dict[str, Any] = {}
    exec("def pred(v):\n    return v.anything\n", namespace)
    assert references(namespace["pred"], style="predicate") is None


def test_code_compiled_under_a_real_filename_but_unrelated_source_returns_none() -> None:
    # GIVEN code claiming to come from this file, at a line holding no such lambda
    fn = eval(compile("lambda v: v.anything", THIS_FILE, "eval"))
    # THEN it is not matched against the wrong node
    assert references(fn, style="predicate") is None


@pytest.mark.parametrize(
    "odd",
    [
        len,
        print,
        str.upper,
        "abc".upper,
        int,
        dict,
        functools.partial(len),
        functools.partial(functools.partial(max, 1)),
        object(),
        SimpleNamespace(),
        None,
    ],
)
def test_builtins_and_odd_inputs_return_none(odd: Any) -> None:
    assert references(odd, style="predicate") is None
    assert references(odd, style="executor") is None


def test_wrapped_cycle_returns_none() -> None:
    # GIVEN an object whose __wrapped__ points at itself
    class Loop:
        def __init__(self) -> None:
            self.__wrapped__ = self

        def __call__(self) -> None:
            return None

    # THEN unwrapping gives up instead of looping
    assert references(Loop(), style="predicate") is None


def test_without_position_information_only_unambiguous_lambdas_resolve() -> None:
    # GIVEN an interpreter started without column information for instructions
    script = (
        "from forms.refs import references\n"
        "import tests.unit.test_refs as t\n"
        "print(references(t.VEHICLE['when'], style='predicate') is not None)\n"
        "print(references(t.PAIR['when'], style='predicate'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-X", "no_debug_ranges", "-c", script],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    # THEN a lone lambda is still found but two on one line are refused
    assert result.stdout.split() == ["True", "None"]


# --------------------------------------------------------------------------
# Property: fields written in a fresh module come back in order
# --------------------------------------------------------------------------

_IDENTIFIERS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
)


@settings(max_examples=25, deadline=None)
@given(
    left=st.lists(_IDENTIFIERS, min_size=1, max_size=4),
    right=st.lists(_IDENTIFIERS, min_size=1, max_size=4),
)
def test_generated_lambdas_report_their_fields_in_order(left: list[str], right: list[str]) -> None:
    # GIVEN a freshly written module with two lambdas on one line
    def body(names: list[str]) -> str:
        return "(" + ", ".join(f"v.{name}" for name in names) + ",)"

    source = f"\n\nPREDS = [lambda v: {body(left)}, lambda v: {body(right)}]\n"
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "generated_form.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("generated_form", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        # WHEN both are inspected
        got = [references(fn, style="predicate") for fn in module.PREDS]
    # THEN each reports exactly its own fields, in order, on line 3
    expected = [left, right]
    for refs, names in zip(got, expected, strict=True):
        assert refs is not None
        assert [r.name for r in refs] == names
        assert {r.where for r in refs} == {f"{path}:3"}
