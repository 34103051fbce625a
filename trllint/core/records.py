"""Records: trllint's dataclasses, made without compiling code for each class.

CPython 3.11 and 3.12 write each dataclass's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``
(and, frozen, ``__setattr__`` and ``__delattr__``) out as source and compile it while the class
is made: about 0.4 ms a class, which was 20 of the 47 ms a lint of one file spent importing
trllint's fifty (issue 33). A record is a dataclass made without those methods (0.05 ms), so
everything that reads a dataclass reads it the same (``dataclasses.fields``, ``replace``,
``asdict``, pickling, ``match``); the methods come from functions written once, here, that read
a table of the class's fields. Making an instance costs about a microsecond more; a lint makes
hundreds.

What ``@record`` accepts is what trllint uses of ``@dataclass``: ``frozen``, and ``field()``
with a default, a default factory, ``compare`` and ``repr``; anything else (``init=False``,
``kw_only``, ``hash``, ``InitVar``, a record deriving from one frozen otherwise) is refused as the
class is made, where it would behave otherwise. A method the class defines itself is kept, as
``@dataclass`` keeps it. ``__init__`` sets the fields in the instance's ``__dict__``, beside any
``__setattr__`` of the class (a frozen dataclass's ``__init__`` does the same).
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from typing import Any, Callable, TypeVar, dataclass_transform, overload

_T = TypeVar("_T", bound=type)
_MISSING = dataclasses.MISSING

# Per class, set by ``record``: the __init__ parameters as (name, default, factory) in order, and
# the values __eq__ and __hash__ compare and __repr__ shows.
_INIT = "__record_init__"
_COMPARED = "__record_compared__"
_SHOWN = "__record_shown__"
_FROZEN = "__record_frozen__"


@overload
def record(cls: _T, /) -> _T: ...
@overload
def record(*, frozen: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(cls: _T | None = None, /, *, frozen: bool = False) -> _T | Callable[[_T], _T]:
    """``@dataclass`` or ``@dataclass(frozen=True)``, for a class of trllint's own."""

    def make(klass: _T) -> _T:
        documented = bool(klass.__dict__.get("__doc__"))
        if not documented:
            klass.__doc__ = "-"  # else @dataclass asks inspect for the signature of __init__ (slow)
        dataclasses.dataclass(klass, init=False, repr=False, eq=False)  # the class itself, made a dataclass
        fields = dataclasses.fields(klass)
        _refuse_the_unsupported(klass, fields, frozen)
        if not documented:
            klass.__doc__ = f"{klass.__name__}({', '.join(f.name for f in fields if f.init)})"
        setattr(klass, _INIT, tuple((f.name, f.default, f.default_factory) for f in fields if f.init))
        setattr(klass, _COMPARED, _values_of([f.name for f in fields if f.compare]))
        setattr(klass, _SHOWN, tuple(f.name for f in fields if f.repr))
        setattr(klass, _FROZEN, frozen)
        methods: dict[str, Any] = {name: _Shared.__dict__[name] for name in ("__init__", "__repr__", "__eq__")}
        own = klass.__dict__
        if frozen:
            methods["__hash__"] = _Shared.__dict__["__hash__"]
            methods.update((name, _Frozen.__dict__[name]) for name in ("__setattr__", "__delattr__"))
        elif "__eq__" not in own:
            methods["__hash__"] = None  # as @dataclass: equal by value, so not hashable while mutable
        for name, method in methods.items():
            # What the class defines is kept, but for the None that defining __eq__ leaves as
            # __hash__ (a frozen record hashes by value all the same, as a frozen dataclass does).
            if name not in own or (name == "__hash__" and own[name] is None and frozen):
                setattr(klass, name, method)
        return klass

    return make if cls is None else make(cls)


def _refuse_the_unsupported(klass: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> None:
    def refuse(what: str) -> None:
        raise TypeError(f"@record {klass.__qualname__}: {what} is not supported (use @dataclass)")

    for f in fields:
        if not f.init or f.kw_only is True or f.hash is not None:
            refuse(f"field {f.name!r} with init=False, kw_only or hash")
    for name, f in klass.__dict__.get("__dataclass_fields__", {}).items():
        if isinstance(f.type, dataclasses.InitVar) or (isinstance(f.type, str) and "InitVar" in f.type):
            refuse(f"InitVar {name!r}")
    for base in klass.__mro__[1:]:
        if getattr(base, _FROZEN, frozen) != frozen or (dataclasses.is_dataclass(base) and not hasattr(base, _FROZEN)):
            refuse(f"a {'frozen ' if frozen else ''}record deriving from {base.__qualname__}")


def _values_of(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    if len(names) > 1:
        return operator.attrgetter(*names)  # a tuple, read in C
    if names:
        single = operator.attrgetter(names[0])
        return lambda instance: (single(instance),)
    return lambda instance: ()


class _Shared:
    """The methods every record gets (installed on each record class; never made itself)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        parameters = getattr(cls, _INIT)
        if len(args) > len(parameters):
            raise TypeError(f"{cls.__name__}() takes {len(parameters)} positional arguments but {len(args)} were given")
        values = {}
        for (name, _, _), value in zip(parameters, args):
            if name in kwargs:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
            values[name] = value
        for name, default, factory in parameters[len(args) :]:
            if name in kwargs:
                values[name] = kwargs.pop(name)
            elif factory is not _MISSING:
                values[name] = factory()
            elif default is not _MISSING:
                values[name] = default
            else:
                raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
        if kwargs:  # what is left names no parameter
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}")
        self.__dict__.update(values)  # beside __setattr__, as a frozen dataclass's __init__ is
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(type(self), _SHOWN))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            compared: Callable[[Any], tuple[Any, ...]] = getattr(type(self), _COMPARED)
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(getattr(type(self), _COMPARED)(self))


class _Frozen:
    """What a frozen record adds."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
