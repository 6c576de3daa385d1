"""Plain structures the engine copies on every commit, and what they carry.

``Marked`` is a dict that carries what the engine derived from its content (``derived``) and
drops it the moment the content changes; ``Sealed`` and ``SealedList`` are the read-only dict
and list an instance's containers become once a store holds or hands them out (``seal``), so
that they can be shared instead of copied; ``replaced``, ``constructed`` and ``built`` copy and
build pydantic models from parts already validated, without validating them again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

_V = TypeVar("_V")

_Model = TypeVar("_Model", bound=BaseModel)


def constructed(kind: type[_Model], **values: Any) -> _Model:
    """``kind.model_construct(**values)`` (no validation) for ``values`` naming every field."""
    return built(kind, values)


new_model = object.__new__
# A model's four slots, set through their descriptors: ``object.__setattr__`` by name looks
# each one up first (``BaseModel.__setattr__`` refuses them on a frozen model). ``built`` sets
# them; ``forms.operations._stage`` spells ``built`` out with them for the two models every
# write makes (its call and look-ups are ~1.1k instructions a model there).
set_model_dict = BaseModel.__dict__["__dict__"].__set__
set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def built(kind: type[_Model], values: dict[str, Any]) -> _Model:
    """``kind.model_construct(**values)`` for ``values`` naming every field (no defaults to
    fill, no validation), at a fraction of its cost: what a copy of a whole model needs. The
    model takes ``values`` as its own."""
    model = new_model(kind)
    set_model_dict(model, values)
    names = _ALL_FIELDS.get(kind)
    if names is None or len(names) != len(values):  # the one check: _fields_set does not redo it
        names = _fields_set(kind, values)
    set_fields_set(model, names)
    set_extra(model, None)
    set_private(model, None)
    return model


_ALL_FIELDS: dict[type[BaseModel], set[str] | None] = {}
"""Per frozen model class, the one set of its field names that every model ``built`` with
all of them set shares as its ``__pydantic_fields_set__`` (None: the class is not frozen).
Sharing is safe because pydantic adds to that set only when an attribute is set, which a
frozen model refuses, and ``model_copy`` copies it before it adds the names it updates."""


def all_fields(kind: type[BaseModel]) -> set[str]:
    """The one fields set that every model of the frozen class ``kind`` built with all its
    fields shares (``built``'s), for a ``built`` spelled out; a class not frozen has none."""
    if kind not in _ALL_FIELDS:
        _fields_set(kind, {})
    names = _ALL_FIELDS[kind]
    if names is None:
        raise TypeError(f"{kind.__name__} is not frozen: its models share no fields set")
    return names


def _fields_set(kind: type[BaseModel], values: dict[str, Any]) -> set[str]:
    """The fields set of a model of ``kind`` built from ``values``, where ``built`` found no
    shared set of the same size: the class's shared set when ``kind`` is met for the first
    time, is frozen and ``values`` names all its fields, else a set of its own."""
    if kind in _ALL_FIELDS:  # a class seen before: ``built`` compared the sizes already
        return set(values)
    frozen = kind.model_config.get("frozen", False)
    names = _ALL_FIELDS[kind] = set(kind.model_fields) if frozen else None
    if names is not None and len(names) == len(values):
        return names
    return set(values)


def fresh(source: Mapping[str, _V]) -> Marked[_V]:
    """A ``Marked`` holding ``source``'s entries and carrying nothing: ``Marked(source)``
    without its ``__init__`` (a Python call with ``*args``), for the maps of every commit."""
    made: Marked[_V] = _dict_new(Marked)
    _dict_update(made, source)
    made.derived = made._sized = made.asked = None
    return made


def replaced(model: _Model, **changes: Any) -> _Model:
    """``model.model_copy(update=changes)`` (a shallow copy with some fields replaced, not
    validated) at a fraction of its cost, for copies on the path of every commit."""
    return built(type(model), {**model.__dict__, **changes})


class Marked(dict[str, _V]):
    """A dict that carries what the engine derived from its content (``derived``), dropped
    the moment the content changes through any of its methods.

    The engine keeps, on an instance's field logs and hook states, what it last derived from
    them (``forms.incremental``), so the next call re-derives only what its changes touch.
    A copy made with ``copy_of`` keeps the mark (same content); ``dict(m)``, ``copy.copy``,
    pickling and pydantic validation drop it. Compares, serialises and prints as a dict.

    It may also carry a size (``size``, set by ``sized``): the sum of ``measure(key, value)``
    over its entries, kept up to date as ``m[key] = value`` replaces them (each replaced entry
    is noted, and measured, with what replaced it, when the size is next read: a change costs
    what it changes, never the whole dict) and carried by ``copy_of``; any other change drops
    it (``None``).

    Hook states may also carry what each checkpoint's predicate read and answered when it was
    last asked (``asked``, ``forms.predicates``): not derived from the content, and checked
    against what the predicate would read now before it is used, so it stays with every copy
    and change of the content (only ``dict(m)`` and the like drop it)."""

    __slots__ = ("_sized", "asked", "derived")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _dict_init(self, *args, **kwargs)  # dict's own, not through super(): on every commit
        self.derived: Any = None
        self._sized: _Sized | None = None
        self.asked: Any = None

    @property
    def size(self) -> int | None:
        """The size carried (``sized``), or None."""
        if self._sized is None:
            return None
        size, measure, replaced = self._sized
        if replaced:
            for key, old in replaced.items():
                new = self.get(key, _ABSENT)
                if new is not old:
                    size += 0 if new is _ABSENT else measure(key, new)
                    size -= 0 if old is _ABSENT else measure(key, old)
            self._sized = (size, measure, _NONE_REPLACED)
        return size

    def sized(self, size: int, measure: Callable[[str, _V], int]) -> None:
        """Carry ``size``, the sum of ``measure(key, value)`` over the entries, from now on."""
        self._sized = (size, measure, _NONE_REPLACED)

    @classmethod
    def copy_of(cls, source: Mapping[str, _V], *, carry: bool = True) -> Marked[_V]:
        """A copy of ``source`` carrying what it carries (unless ``carry`` is False), made
        without ``__init__``: the engine copies hook states and field logs on every commit."""
        copy: Marked[_V] = _dict_new(cls)
        _dict_update(copy, source)
        if carry and isinstance(source, Marked):
            copy.derived, copy._sized, copy.asked = source.derived, source._sized, source.asked
        else:
            copy.derived = copy._sized = copy.asked = None
        return copy

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __setitem__(self, key: str, value: _V) -> None:
        self.derived = None
        sized = self._sized
        if sized is not None and key not in sized[2]:
            old = self.get(key, _ABSENT)
            if old is not value:  # noted in a new dict: copies share the one they carry
                self._sized = (sized[0], sized[1], {**sized[2], key: old})
        _dict_set(self, key, value)  # dict's own, not through super(): hook states, per commit

    def _changed(self) -> None:
        self.derived = self._sized = None

    def __delitem__(self, key: str) -> None:
        self._changed()
        super().__delitem__(key)

    def __ior__(self, other: Any) -> Marked[_V]:  # type: ignore[override,misc]
        self._changed()
        super().update(other)
        return self

    def clear(self) -> None:
        self._changed()
        super().clear()

    def pop(self, *args: Any) -> Any:
        self._changed()
        return super().pop(*args)

    def popitem(self) -> tuple[str, _V]:
        self._changed()
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._changed()
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().update(*args, **kwargs)


class Sealed(Marked[_V]):
    """A ``Marked`` whose content no longer changes: every method that would change it raises
    ``TypeError``. What it carries (``derived``, its size) may still be set: that is not its
    content. Made by ``seal``; ``Marked.copy_of``, ``dict(s)``, ``copy.copy`` and pydantic
    validation give a changeable copy. Compares, serialises and prints as a dict."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a sealed dict does not change: copy it (Marked.copy_of, dict(...))")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse


class SealedList(list[_V]):
    """A list whose content no longer changes: every method that would change it raises
    ``TypeError``. ``list(s)``, ``copy.copy`` and pydantic validation give a changeable copy.
    Compares, serialises and prints as a list."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a sealed list does not change: copy it (list(...))")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = reverse = sort = clear = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def seal(container: Any) -> Any:
    """``container`` (a dict or list of an instance) read-only: itself when it is already;
    a ``Marked`` sealed in place (O(1), what it carries kept: whoever holds it may no longer
    change it); any other dict or list copied into a ``Sealed`` or ``SealedList``."""
    kind = type(container)
    if kind is Sealed or kind is SealedList:
        return container
    if kind is Marked:
        container.__class__ = Sealed  # same layout: a change of type, not a copy
        return container
    if isinstance(container, list):
        return SealedList(container)
    return Sealed(container)


_dict_init = dict.__init__
_dict_new = dict.__new__
_dict_update = dict.update
_dict_set = dict.__setitem__
_ABSENT: Any = object()
_NONE_REPLACED: Mapping[str, Any] = {}
_Sized = tuple[int, Callable[[str, Any], int], Mapping[str, Any]]
"""A size, how an entry is measured, and each entry replaced since (key: value before)."""
