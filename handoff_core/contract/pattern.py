"""Regular expressions compiled on first use.

``handoff-validate`` starts a process per check; compiling every pattern the contract modules hold
at import cost it milliseconds for patterns a check never reaches (a remote's name, a resource, an
archive month...). A pattern made here compiles the first time a method is asked for, then holds
the compiled pattern's methods as its own attributes: later calls cost what the compiled ones do.
"""

from __future__ import annotations

__all__ = ["compile_on_use"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: handoff-validate never loads it
if TYPE_CHECKING:
    import re

    compile_on_use = re.compile  # what the type checker sees: the pattern it stands for
else:
    _METHODS = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split")

    class _OnUse:
        def __init__(self, source, flags=0):
            self._source, self._flags, self._compiled = source, flags, None

        def __getattr__(self, name):  # reached only for what the instance does not hold yet
            if self._compiled is None:
                import re  # here: a process that reaches no pattern never loads re

                self._compiled = re.compile(self._source, self._flags)
                for method in _METHODS:
                    setattr(self, method, getattr(self._compiled, method))
            return getattr(self._compiled, name)

        def __repr__(self):
            return f"compile_on_use({self._source!r}, {self._flags!r})"

    def compile_on_use(source, flags=0):
        """``re.compile(source, flags)``, done when the pattern is first used."""
        return _OnUse(source, flags)
