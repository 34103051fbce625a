"""A record behaves as the dataclass it replaces (trllint.core.records): each test makes the same
class both ways and holds the record to what the dataclass does."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pytest

from trllint.core.records import record

REPO = Path(__file__).resolve().parents[1]


def _frozen(decorate, name: str) -> type:
    """One class body, made by ``decorate`` (a dataclass or a record), named ``name`` (a global of
    this module, so that pickle finds it)."""

    @decorate
    class Frozen:
        name: str
        count: int = 0
        tags: tuple[str, ...] = ()
        notes: list[str] = field(default_factory=list, compare=False, repr=False)

        @cached_property
        def label(self) -> str:
            return f"{self.name}:{self.count}"

    Frozen.__name__ = Frozen.__qualname__ = name
    return Frozen


def _mutable(decorate, name: str) -> type:
    @decorate
    class Mutable:
        """Documented."""

        path: str
        seen: set[str] = field(default_factory=set)
        size: int = 0

        def __post_init__(self) -> None:
            self.size = len(self.path)

    Mutable.__name__ = Mutable.__qualname__ = name
    return Mutable


FrozenDataclass = _frozen(dataclass(frozen=True), "FrozenDataclass")
FrozenRecord = _frozen(record(frozen=True), "FrozenRecord")
MutableDataclass = _mutable(dataclass, "MutableDataclass")
MutableRecord = _mutable(record, "MutableRecord")


FROZEN = [FrozenDataclass, FrozenRecord]
MUTABLE = [MutableDataclass, MutableRecord]
CALLS = [
    (("a",), {}),
    (("a", 2), {}),
    (("a",), {"tags": ("x",), "count": 3}),
    ((), {"name": "b", "notes": ["kept"]}),
    (("a", 1, ("y", "z"), ["n"]), {}),
]


def _state(instance) -> dict:
    return {f.name: getattr(instance, f.name) for f in dataclasses.fields(instance)}


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_construction_sets_the_fields_the_dataclass_sets(args, kwargs):
    made = [cls(*args, **kwargs) for cls in FROZEN]
    assert _state(made[0]) == _state(made[1])
    assert [f.name for f in dataclasses.fields(FrozenRecord)] == ["name", "count", "tags", "notes"]
    assert dataclasses.is_dataclass(made[1]) and FrozenRecord.__match_args__ == FrozenDataclass.__match_args__


def test_a_default_factory_makes_a_new_value_for_each_instance():
    first, second = MutableRecord("p"), MutableRecord("q")
    first.seen.add("x")
    assert second.seen == set() and first.seen is not second.seen


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), (("a", 1, (), [], "extra"), {}), (("a",), {"colour": "red"}), (("a",), {"name": "b"})],
    ids=["missing", "too-many", "unknown-keyword", "twice"],
)
def test_a_wrong_call_raises_type_error_as_the_dataclass_does(args, kwargs):
    for cls in FROZEN:
        with pytest.raises(TypeError):
            cls(*args, **kwargs)


def test_post_init_runs_after_the_fields_are_set():
    assert MutableRecord("abcd").size == MutableDataclass("abcd").size == 4


def test_repr_shows_the_fields_the_dataclass_shows():
    for args, kwargs in CALLS:
        shown = [repr(cls(*args, **kwargs)) for cls in FROZEN]
        assert shown[1] == shown[0].replace("FrozenDataclass", "FrozenRecord")
    assert repr(MutableRecord("p")) == "MutableRecord(path='p', seen=set(), size=1)"


def test_equality_reads_the_compared_fields_of_the_same_class():
    for dataclass_or_record in FROZEN:
        a, b = dataclass_or_record("a", 1, notes=["one"]), dataclass_or_record("a", 1, notes=["two"])
        assert a == b and not a != b  # notes are not compared
        assert a != dataclass_or_record("a", 2) and a != dataclass_or_record("b", 1)
    assert FrozenRecord("a") != FrozenDataclass("a")  # another class: never equal
    assert FrozenRecord("a") != ("a", 0, ())


def test_frozen_records_hash_by_value_and_mutable_ones_do_not_hash():
    assert hash(FrozenRecord("a", 1)) == hash(FrozenRecord("a", 1, notes=["x"]))
    assert len({FrozenRecord("a"), FrozenRecord("a"), FrozenRecord("b")}) == 2
    for cls in MUTABLE:
        with pytest.raises(TypeError, match="unhashable"):
            hash(cls("p"))


def test_a_frozen_record_refuses_assignment_as_the_dataclass_does():
    for cls in FROZEN:
        instance = cls("a")
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'name'"):
            instance.name = "b"  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'count'"):
            del instance.count  # type: ignore[misc]
        assert instance.label == "a:0"  # a cached property still caches
    mutable = MutableRecord("p")
    mutable.size = 9
    assert mutable.size == 9


def test_replace_asdict_pickle_copy_and_match_work_on_a_record():
    instance = FrozenRecord("a", 2, ("t",), ["n"])
    assert dataclasses.replace(instance, count=5) == FrozenRecord("a", 5, ("t",))
    assert dataclasses.asdict(instance) == dataclasses.asdict(FrozenDataclass("a", 2, ("t",), ["n"]))
    assert dataclasses.astuple(instance) == ("a", 2, ("t",), ["n"])
    for again in (pickle.loads(pickle.dumps(instance)), copy.copy(instance), copy.deepcopy(instance)):
        assert again == instance and _state(again) == _state(instance)
    match instance:
        case FrozenRecord(name, count):
            assert (name, count) == ("a", 2)
        case _:
            pytest.fail("the match statement did not read the record's fields")


@record(frozen=True)
class _Base:
    name: str

    def __repr__(self) -> str:
        return f"<{self.name}>"


@record(frozen=True)
class _Derived(_Base):
    size: int = 0


def test_a_method_the_class_defines_is_kept_and_subclasses_add_fields():
    assert repr(_Base("a")) == "<a>"  # its own __repr__, as @dataclass keeps it
    derived = _Derived("b", 3)
    assert [f.name for f in dataclasses.fields(derived)] == ["name", "size"]
    assert derived == _Derived("b", 3) and derived != _Derived("b", 4) and derived != _Base("b")
    assert _Derived.__doc__ == "_Derived(name, size)" and MutableRecord.__doc__ == "Documented."


def test_trllint_makes_records_not_dataclasses():
    """Every @dataclass of trllint costs its import a compile of each method (0.4 ms a class):
    trllint's own classes are records. Left out: what subclasses LibCST's dataclasses (their
    fields are LibCST's), and the runtime scenarios, which are training scripts."""
    allowed = {"trllint/core/positions.py"}  # _PlacingState(CodegenState)
    found = []
    for path in [*REPO.glob("trllint/**/*.py"), *REPO.glob("rules/**/*.py")]:
        relative = path.relative_to(REPO).as_posix()
        if "/scenarios/" in relative or "/cases/" in relative or relative in allowed:
            continue
        if re.search(r"^\s*@(dataclasses\.)?dataclass\b", path.read_text(encoding="utf-8"), re.MULTILINE):
            found.append(relative)
    assert not found, f"@dataclass instead of @record in: {found}"


def _record_of(body: dict, decorate=record, bases: tuple[type, ...] = ()) -> type:
    return decorate(type("Made", bases, {"__module__": __name__, **body}))


@pytest.mark.parametrize(
    "body",
    [
        {"__annotations__": {"x": "int", "later": "list"}, "later": field(init=False, default_factory=list)},
        {"__annotations__": {"x": "int"}, "x": field(kw_only=True)},
        {"__annotations__": {"x": "int"}, "x": field(hash=False)},
        {"__annotations__": {"x": "int", "seed": "dataclasses.InitVar[int]"}},
    ],
    ids=["init-false", "kw-only", "hash", "initvar"],
)
def test_what_a_record_would_do_otherwise_is_refused_as_the_class_is_made(body):
    dataclass(type("Made", (), {"__module__": __name__, **body}))  # the dataclass takes it
    with pytest.raises(TypeError, match="is not supported"):
        _record_of(body)


def test_a_record_derives_only_from_records_of_its_own_frozenness():
    assert _record_of({"__annotations__": {"size": "int"}}, record(frozen=True), (FrozenRecord,))("a", size=2).size == 2
    with pytest.raises(TypeError, match="deriving from FrozenRecord"):
        _record_of({"__annotations__": {"size": "int"}}, record, (FrozenRecord,))
    with pytest.raises(TypeError, match="frozen"):  # here dataclasses refuses it first
        _record_of({"__annotations__": {"size": "int"}}, record(frozen=True), (FrozenDataclass,))
