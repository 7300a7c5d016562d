"""``NamedTuple`` for the contract's records, without importing ``typing`` at run time.

``handoff-validate`` starts a process per check, and ``typing`` costs it ~2.5 ms to import for
nothing but the base of a few records. The type checker sees ``typing.NamedTuple`` itself; at run
time this base builds the same class ``typing`` would: ``collections.namedtuple`` over the
annotated fields in order, the defaults given, and the body's methods, properties and docstring
(tests compare the two).
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing.TYPE_CHECKING`` without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from collections import namedtuple

    _MADE_BY_NAMEDTUPLE = frozenset({"__module__", "__qualname__", "__annotations__", "__orig_bases__"})

    class _RecordMeta(type):
        def __new__(cls, name, bases, namespace):
            if not bases:  # the base itself
                return super().__new__(cls, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            defaults = [namespace[field] for field in annotations if field in namespace]
            made = namedtuple(name, annotations, defaults=defaults, module=namespace["__module__"])
            made.__annotations__ = dict(annotations)
            made.__qualname__ = namespace.get("__qualname__", name)
            for key, value in namespace.items():
                if key not in annotations and key not in _MADE_BY_NAMEDTUPLE:
                    setattr(made, key, value)
            return made

    class NamedTuple(metaclass=_RecordMeta):
        pass


__all__ = ["NamedTuple"]
