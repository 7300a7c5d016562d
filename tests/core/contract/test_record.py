"""The contract's ``NamedTuple`` base builds the class ``typing.NamedTuple`` builds, without importing typing."""

from __future__ import annotations

import pickle
import subprocess
import sys
import typing

import pytest

from handoff_core.contract import record


class Typed(typing.NamedTuple):
    """A record."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name}:{self.size}"

    def grown(self, by: int) -> Typed:
        return self._replace(size=self.size + by)


class Plain(record.NamedTuple):
    """A record."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name}:{self.size}"

    def grown(self, by: int) -> Plain:
        return self._replace(size=self.size + by)


def test_the_record_has_the_fields_defaults_and_annotations_typing_gives() -> None:
    assert Plain._fields == Typed._fields
    assert Plain._field_defaults == Typed._field_defaults
    assert typing.get_type_hints(Plain) == typing.get_type_hints(Typed)  # typing keeps ForwardRefs, this the text
    assert Plain.__doc__ == Typed.__doc__
    assert Plain.__module__ == Typed.__module__
    assert Plain.__mro__[1:] == Typed.__mro__[1:] == (tuple, object)


def test_the_record_behaves_as_typing_s_tuple() -> None:
    plain, typed = Plain("a", 2), Typed("a", 2)
    assert tuple(plain) == tuple(typed) == ("a", 2, ())
    assert hash(plain) == hash(typed)
    assert repr(plain).removeprefix("Plain") == repr(typed).removeprefix("Typed")
    assert plain.label == typed.label == "a:2"
    assert tuple(plain.grown(3)) == tuple(typed.grown(3)) == ("a", 5, ())
    assert type(plain.grown(3)) is Plain
    assert plain._asdict() == typed._asdict()
    assert tuple(Plain._make(["b", 1, ("x",)])) == tuple(Typed._make(["b", 1, ("x",)]))
    assert pickle.loads(pickle.dumps(plain)) == plain


@pytest.mark.slow  # starts a process
def test_importing_the_record_base_does_not_import_typing() -> None:
    code = "import sys; import handoff_core.contract.record; print('typing' in sys.modules)"
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.strip() == "False", result.stderr
