"""The git actions a shell command takes, read from its words before it runs.

A TASK's authorised actions (``layout.AUTHORISED_ACTIONS``) name what an executor may do to the
repository beyond writing its files: ``commit``, ``merge``, ``push``, ``rebase``, ``reset-hard``,
``switch-branch``, ``stash``, ``stage-outside-scope``. A command is split into simple commands on
``;``, ``&&``, ``||``, ``|`` and newlines; each one that runs ``git`` (after variable assignments and
git's own global options, through ``sh -c`` once) is mapped to the action it takes. A command the
shell grammar here cannot split is not guessed at: the post-tool check still sees what it changed.
Stdlib only: the hook process imports this.
"""

from __future__ import annotations

import os
import shlex

__all__ = ["ACTIONS", "GitStep", "git_steps"]

# The vocabulary's home is handoff_core.layout.AuthorisedAction (a test pins the two equal); the hook
# process may not import typing, which layout needs.
ACTIONS = frozenset(
    {"commit", "merge", "push", "rebase", "reset-hard", "switch-branch", "stash", "stage-outside-scope"}
)
_SIMPLE = {
    "commit": "commit",
    "merge": "merge",
    "push": "push",
    "rebase": "rebase",
    "pull": "merge",
    "cherry-pick": "commit",
    "revert": "commit",
    "am": "commit",
    "switch": "switch-branch",
    "stash": "stash",
}
_GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_WRAPPERS = frozenset({"command", "exec", "env", "nohup", "time", "sudo"})
_STAGE_ALL = frozenset({"-A", "--all", "-u", "--update", "--no-ignore-removal"})


class GitStep:
    """One git action a command takes: its name, and for ``git add`` the paths it stages."""

    __slots__ = ("action", "cwd", "paths", "stages_all", "words")

    def __init__(self, action: str, words: list[str], paths: tuple[str, ...] = (), stages_all: bool = False):
        self.action, self.words, self.paths, self.stages_all = action, words, paths, stages_all
        self.cwd = ""  # where git works: the command's folder, or the one -C names


def _simple_commands(command: str) -> list[list[str]] | None:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # an open quote: not a command this can read
        return None
    found: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            found.append([])
        else:
            found[-1].append(word)
    return [words for words in found if words]


def _after_wrappers(words: list[str]) -> list[str]:
    while words and (("=" in words[0] and not words[0].startswith("=")) or words[0] in _WRAPPERS):
        words = words[1:]
    return words


def _shell_script(words: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` (``-lc``, ``-ec`` … alike), or None when this runs no script."""
    if not words or os.path.basename(words[0]) not in _SHELLS:
        return None
    for index, word in enumerate(words[1:], 1):
        if word.startswith("-") and not word.startswith("--") and "c" in word:
            return words[index + 1] if index + 1 < len(words) else ""
    return None


def _git_args(words: list[str], cwd: str) -> tuple[list[str], str] | None:
    """The arguments after ``git`` and its global options, and the folder git works in (``-C``
    followed); None when this is not git."""
    if not words or os.path.basename(words[0]) != "git":
        return None
    index = 1
    while index < len(words) and words[index].startswith("-"):
        option = words[index]
        if option == "-C" and index + 1 < len(words):
            cwd = os.path.join(cwd, words[index + 1])
        index += 2 if option in _GLOBAL_WITH_VALUE else 1
    return words[index:], cwd


def _checkout(args: list[str], cwd: str) -> str | None:
    """``git checkout`` switches branch unless it names paths (after ``--``, or existing files)."""
    rest = args[1:]
    if "--" in rest:
        return None
    if any(flag in rest for flag in ("-b", "-B", "--orphan", "--detach")):
        return "switch-branch"
    names = [word for word in rest if not word.startswith("-")]
    if names and all(os.path.lexists(os.path.join(cwd, name)) for name in names):
        return None
    return "switch-branch"


def _step(args: list[str], cwd: str) -> GitStep | None:
    sub = args[0] if args else ""
    if sub in _SIMPLE:
        if sub == "stash" and args[1:2] in (["list"], ["show"]):
            return None
        return GitStep(_SIMPLE[sub], args)
    if sub == "reset" and "--hard" in args:
        return GitStep("reset-hard", args)
    if sub == "checkout" and (action := _checkout(args, cwd)) is not None:
        return GitStep(action, args)
    if sub == "add":
        names = args[1:]
        paths = tuple(word for word in names if not word.startswith("-") and word != "--")
        stages_all = bool(_STAGE_ALL.intersection(names)) or any(p.startswith(":") or "*" in p for p in paths)
        return GitStep("stage", args, paths, stages_all)
    return None


def git_steps(command: str, cwd: str, depth: int = 0) -> list[GitStep] | None:
    """The git actions ``command`` takes, in order; None when it cannot be read (not guessed at)."""
    commands = _simple_commands(command)
    if commands is None:
        return None
    steps: list[GitStep] = []
    for simple in commands:
        words = _after_wrappers(simple)
        if (inner := _shell_script(words)) is not None:
            nested = git_steps(inner, cwd, depth + 1) if depth == 0 else None
            if nested is None:
                return None
            steps += nested
            continue
        found = _git_args(words, cwd)
        if found is not None and (step := _step(*found)) is not None:
            step.cwd = found[1]
            steps.append(step)
    return steps
