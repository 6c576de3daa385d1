"""A checkpoint's predicate answered again from what it read, where nothing else can move it.

Field and step predicates are asked again only when something they read changed
(``forms.incremental``). A checkpoint's predicate reads anything (every value, every step,
``fired``, the open step), and the definitions' guide promises that a rule depending on the
time belongs in a checkpoint, asked on every commit. So its answer is reused only when both:

- **its code can read nothing the engine does not see.** ``watched`` reads the predicate's
  bytecode (and that of the functions and comprehensions it calls): every opcode is one of a
  fixed set (no import, no store to an attribute, a global or a closure, no ``with``), no
  attribute it loads is private (``_x``) or a clock's (``now``, ``today``, ``utcnow``), and every
  global, built-in and closure variable it loads is a constant of a plain immutable type, one
  of a few pure built-ins and value types, or a Python function that passes the same test.
  Those names are re-read (by identity) before an answer is reused, so one rebound later (a
  patched constant) asks again. A predicate compiled from a form document's rule
  (``forms.documents.rules``) passes as it is. Any other (a bound method, an object, a
  predicate that reads the clock or a module) is asked on every commit, as before.
- **nothing it read changed.** ``ask`` runs it with the values noting each field it reads
  and the state each step it asks about, each ``fired`` it calls and whether it looks at the
  open step or ``done``, and keeps its answer with those readings; ``unchanged`` tells
  whether they all still read the same (a value or a global: the very object). A predicate
  that read every value at once (``repr(v)``) is kept no answer.

What each checkpoint was last asked is carried by the hook states (``Marked.asked``), in memory
only: a cold read has none, and asks. A predicate that raises leaves nothing kept (the
commit fails as before), so it is asked again next time.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import sys
import types
import weakref
from collections.abc import Callable, Mapping
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from fractions import Fraction
from operator import attrgetter
from typing import Any

from forms.compiled import CompiledCheckpoint, CompiledForm
from forms.evaluation import call_predicate
from forms.incremental import Core
from forms.state import READS_ALL, FormState, Values

Place = tuple[Any, Any, Any]
"""A name the code loads: where (a namespace, or a closure's cell), its key, its value."""

Asked = tuple[Any, ...]
"""What a checkpoint's predicate read and answered when last asked: its answer; each field
it read with the value it read; what its code loads by name (``_Code``: the globals and
closure variables, each with its value); the rest (None, or ``Rest``: steps, ``fired``, the
open step)."""

Rest = tuple[
    tuple[tuple[str, bool, bool], ...],  # each step asked about: applies, complete
    tuple[tuple[str, str, bool], ...],  # each ``fired`` called: checkpoint, hook, answer
    tuple[str | None, bool] | None,  # the open step and ``done``, if either was read
]

ALWAYS: Any = ()
"""Kept for a predicate whose code may read what the engine does not see: ask every time."""

_ABSENT: Any = object()
_NOTED_STATE = "open_step"


class Watching(FormState):
    """The form state a checkpoint's predicate sees, noting each ``fired`` it calls and
    whether it reads the open step or ``done`` (in ``noted``, when that is a list)."""

    __slots__ = ("noted",)
    noted: list[str] | None

    def fired(self, checkpoint: str) -> bool:
        answer = FormState.fired(self, checkpoint)  # raises as ever on a name it does not know
        if self.noted is not None:
            self.noted.append(checkpoint)
        return answer

    @property
    def done(self) -> bool:
        if self.noted is not None:
            self.noted.append(_NOTED_STATE)
        return self._done

    @property
    def open_step(self) -> str | None:
        if self.noted is not None:
            self.noted.append(_NOTED_STATE)
        return self._open_step


def watching(
    form: CompiledForm,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    fired: Mapping[str, int],
    open_step: str | None,
) -> Watching:
    state = Watching(form.step_index, applies, complete, fired, False, open_step)
    state.noted = None
    return state


def unchanged(
    asked: Asked,
    live: Mapping[str, Any],
    core: Core,
    fired: Mapping[str, int],
    counts: Mapping[str, Any],
    open_step: str | None,
) -> bool:
    """Whether everything ``asked`` read reads the same now (a value, a global: the very
    object): ``fired`` holds this commit's checkpoint counts so far where it has them,
    ``counts`` the hook states before."""
    for name, value in asked[1]:
        if live.get(name) is not value:
            return False
    if not asked[2].holds():  # its globals and closure variables
        return False
    rest = asked[3]
    if rest is None:  # the usual case: values and names only
        return True
    steps, fires, state = rest
    applies, complete = core.step_applies, core.step_complete
    for step_id, did_apply, was_complete in steps:
        if applies[step_id] != did_apply or complete[step_id] != was_complete:
            return False
    for name, hook_id, was in fires:
        count = fired[name] if name in fired else _count(counts.get(hook_id))
        if (count > 0) is not was:
            return False
    return state is None or state == (open_step, False)


def _count(state: Any) -> int:
    return 0 if state is None else int(state.count)


def ask(
    checkpoint: CompiledCheckpoint,
    values: Values,
    state: Watching | None,
    reader: str,
    live: Mapping[str, Any],
    form: CompiledForm,
) -> tuple[bool, Asked | None]:
    """The predicate's answer, and what to keep of it: ``ALWAYS`` for one ``watched`` refuses,
    None for one that read every value, else its readings (``Asked``)."""
    predicate, arity = checkpoint.when, checkpoint.when_arity
    code = watched(predicate)
    if code is None:
        return call_predicate(predicate, arity, values, state, reader), ALWAYS
    reads: set[str] = set()
    step_reads: set[str] = set()
    noted: list[str] = []
    values._limit(sys.maxsize, reader, reads)
    if state is not None:
        state._limit(None, step_reads)
        state.noted = noted
    try:
        holds = call_predicate(predicate, arity, values, state, reader)
    finally:
        values._unlimit()
        if state is not None:
            state._limit(None, None)
            state.noted = None
    if READS_ALL in reads:
        return holds, None
    rest: Rest | None = None
    if step_reads or noted:  # only a predicate given the state reads either
        rest = _rest(step_reads, noted, state, form)
    return holds, (holds, tuple((name, live.get(name)) for name in reads), code, rest)


def _rest(
    step_reads: set[str], noted: list[str], state: Watching | None, form: CompiledForm
) -> Rest:
    seen: tuple[str | None, bool] | None = None
    fires: list[tuple[str, str, bool]] = []
    if state is None:
        return (), (), None
    hook_of = {hook.target: hook.id for hook, _, _ in form.checkpoint_runs}
    for name in dict.fromkeys(noted):
        if name == _NOTED_STATE:
            seen = (state._open_step, state._done)
        else:
            assert state._fired is not None
            fires.append((name, hook_of[name], state._fired[name] > 0))
    applies, complete = state._applies, state._complete
    steps = tuple((s, applies[s], complete[s]) for s in step_reads)
    return steps, tuple(fires), seen


# ---------------------------------------------------------------- what the code can read


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WATCHED: weakref.WeakKeyDictionary[Callable[..., Any], _Code | None] = weakref.WeakKeyDictionary()
_RULE = "__form_rule__"  # forms.documents.rules.RULE_ATTRIBUTE: a rule's predicate
_CLOCK = frozenset({"now", "today", "utcnow"})
_VALUE_TYPES = frozenset(
    {type(None), bool, int, float, complex, str, bytes, Decimal, Fraction, range}
    | {date, datetime, time, timedelta, timezone}
)
_CLASSES = frozenset({Decimal, Fraction, date, datetime, time, timedelta})
_BUILTINS = _words(
    "abs all any bool bytes dict divmod enumerate filter float format frozenset int "
    "isinstance iter len list map max min next range reversed round set slice sorted str "
    "sum tuple zip"
)
_OPS = _words(
    """NOP RESUME CACHE EXTENDED_ARG POP_TOP PUSH_NULL COPY SWAP END_FOR END_SEND
    LOAD_FAST LOAD_FAST_CHECK LOAD_FAST_AND_CLEAR LOAD_FAST_LOAD_FAST STORE_FAST
    STORE_FAST_LOAD_FAST STORE_FAST_STORE_FAST DELETE_FAST LOAD_CONST RETURN_CONST RETURN_VALUE
    COMPARE_OP IS_OP CONTAINS_OP BINARY_OP BINARY_SUBSCR BINARY_SLICE UNARY_NEGATIVE UNARY_NOT
    UNARY_INVERT UNARY_POSITIVE TO_BOOL JUMP JUMP_NO_INTERRUPT JUMP_FORWARD JUMP_BACKWARD
    JUMP_BACKWARD_NO_INTERRUPT JUMP_IF_FALSE_OR_POP JUMP_IF_TRUE_OR_POP POP_JUMP_IF_FALSE
    POP_JUMP_IF_TRUE POP_JUMP_IF_NONE POP_JUMP_IF_NOT_NONE POP_JUMP_FORWARD_IF_FALSE
    POP_JUMP_FORWARD_IF_TRUE POP_JUMP_FORWARD_IF_NONE POP_JUMP_FORWARD_IF_NOT_NONE
    POP_JUMP_BACKWARD_IF_FALSE POP_JUMP_BACKWARD_IF_TRUE POP_JUMP_BACKWARD_IF_NONE
    POP_JUMP_BACKWARD_IF_NOT_NONE PRECALL CALL KW_NAMES CALL_KW CALL_FUNCTION_EX BUILD_TUPLE
    BUILD_LIST BUILD_SET BUILD_MAP BUILD_CONST_KEY_MAP BUILD_STRING BUILD_SLICE LIST_APPEND
    SET_ADD MAP_ADD LIST_EXTEND SET_UPDATE DICT_UPDATE DICT_MERGE LIST_TO_TUPLE FORMAT_VALUE
    FORMAT_SIMPLE FORMAT_WITH_SPEC CONVERT_VALUE GET_ITER FOR_ITER UNPACK_SEQUENCE UNPACK_EX
    RETURN_GENERATOR YIELD_VALUE SEND MAKE_FUNCTION SET_FUNCTION_ATTRIBUTE MAKE_CELL
    COPY_FREE_VARS LOAD_CLOSURE LOAD_ASSERTION_ERROR RAISE_VARARGS RERAISE PUSH_EXC_INFO
    POP_EXCEPT CHECK_EXC_MATCH CLEANUP_THROW"""
)
"""Opcodes that read or write nothing outside the call (its own stack and locals); the
loads of attributes, globals and closure variables are looked at one by one."""
_LOCAL: Any = object()  # a closure variable of the code itself (a comprehension's)
_DEPTH = 8  # functions calling functions, looked into at most this deep


class _Refused(Exception):
    """The code may read what the engine does not see."""


class _Code:
    """What a predicate's code loads by name: ``places`` the globals (``Place``: a
    namespace, a name, its value), ``cells`` the closure cells with their values."""

    __slots__ = ("cells", "places")

    def __init__(self, found: list[Place]) -> None:
        self.places = tuple(place for place in found if type(place[0]) is dict)
        self.cells = tuple((cell, value) for cell, _, value in found if type(cell) is not dict)

    def holds(self) -> bool:
        """Whether every name still holds the value it held when the code was looked at (by
        identity): before a kept answer is reused (``unchanged``), and before the code is
        trusted again (``watched``). A loop, and ``all`` only over closure variables a code has:
        a generator costs more than the check, which runs on every commit."""
        for space, key, value in self.places:
            if space.get(key, _ABSENT) is not value:
                return False
        return not self.cells or all(_cell(cell, _ABSENT) is value for cell, value in self.cells)


def watched(predicate: Callable[..., Any]) -> _Code | None:
    """What ``predicate``'s code loads by name (``_Code``), when it can read nothing else (see
    the module's docstring); None when it may. Kept per predicate, looked at again when one of
    those names has been rebound since."""
    try:
        code = _WATCHED[predicate]
    except (KeyError, TypeError):  # not seen yet, or not a function (no weak reference)
        pass
    else:
        if code is None or code.holds():
            return code
    code = _look_at(predicate)
    with contextlib.suppress(TypeError):  # not a function: looked at again when next met
        _WATCHED[predicate] = code
    return code


def _look_at(predicate: Callable[..., Any]) -> _Code | None:
    if getattr(predicate, _RULE, None) is not None and isinstance(predicate, types.FunctionType):
        return _Code([])
    found: list[Place] = []
    try:
        _function(predicate, found, set(), 0)
    except _Refused:
        return None
    return _Code(
        list({(id(space), key): (space, key, value) for space, key, value in found}.values())
    )


def _function(fn: Any, found: list[Place], seen: set[Any], depth: int) -> None:
    if type(fn) is not types.FunctionType or depth > _DEPTH:
        raise _Refused
    if not all(map(_constant, fn.__defaults__ or ())) or fn.__kwdefaults__:
        raise _Refused
    if fn in seen:  # looked into already (a function that calls itself, or twice)
        return
    seen.add(fn)
    code = fn.__code__
    cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
    _code(code, fn, cells, found, seen, depth)


def _code(
    code: types.CodeType,
    fn: types.FunctionType,
    cells: Mapping[str, Any],
    found: list[Place],
    seen: set[Any],
    depth: int,
) -> None:
    """Refuse ``code`` (of ``fn``, its closure variables ``cells``: a cell, or ``_LOCAL``)
    unless it reads only what the module's docstring allows; note the names it loads."""
    scope = {**cells, **dict.fromkeys(code.co_cellvars, _LOCAL)}
    for op in dis.get_instructions(code):
        name = op.opname
        if name in _OPS:
            continue
        if name in ("LOAD_ATTR", "LOAD_METHOD"):
            if op.argval.startswith("_") or op.argval in _CLOCK:
                raise _Refused
        elif name == "LOAD_GLOBAL":
            _global(fn, op.argval, found, seen, depth)
        elif name == "LOAD_DEREF":
            cell = scope.get(op.argval)
            if cell is None:
                raise _Refused
            if cell is not _LOCAL:
                _value(cell.cell_contents, found, seen, depth)
                found.append((cell, None, cell.cell_contents))
        elif name not in ("STORE_DEREF", "DELETE_DEREF") or scope.get(op.argval) is not _LOCAL:
            raise _Refused
    for inner in code.co_consts:  # comprehensions, lambdas and functions defined inside
        if isinstance(inner, types.CodeType):
            inner_cells = {name: scope.get(name) for name in inner.co_freevars}
            if None in inner_cells.values():
                raise _Refused
            _code(inner, fn, inner_cells, found, seen, depth)


_builtins_of = attrgetter("__builtins__")
"""A function's builtins (``FunctionType.__builtins__``: typeshed has it, mypy 2.4 does not
see it as an attribute)."""


def _global(
    fn: types.FunctionType, name: str, found: list[Place], seen: set[Any], depth: int
) -> None:
    namespace = fn.__globals__
    if name in namespace:
        value = namespace[name]
        _value(value, found, seen, depth)
        found.append((namespace, name, value))
        return
    table: dict[str, Any] = _builtins_of(fn)
    value = table.get(name, _ABSENT)
    if value is _ABSENT or getattr(builtins, name, _ABSENT) is not value:
        raise _Refused
    if name not in _BUILTINS and not (isinstance(value, type) and issubclass(value, Exception)):
        raise _Refused
    found.append((namespace, name, _ABSENT))
    found.append((table, name, value))


def _value(value: Any, found: list[Place], seen: set[Any], depth: int) -> None:
    """Refuse a value the code loads by name unless it is a constant, a pure value type or a
    function that passes (looked into)."""
    if _constant(value) or (isinstance(value, type) and value in _CLASSES):
        return
    _function(value, found, seen, depth + 1)


def _constant(value: Any) -> bool:
    kind = type(value)
    if kind in _VALUE_TYPES:  # a time's own zone may be any code: only the fixed offsets pass
        zone = getattr(value, "tzinfo", None)
        return zone is None or type(zone) is timezone
    return (kind is tuple or kind is frozenset) and all(map(_constant, value))


def _cell(cell: Any, default: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # emptied since
        return default
