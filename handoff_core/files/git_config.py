"""The configuration git runs under here, laid over the repository's own: the repository's config
(``.git/config``, a worktree's ``config.worktree``, any file they include), its attributes and its
index are written by whoever works in it, so nothing there may start a command, answer which files
changed, or pick a transport. Command-line configuration beats every file git reads; a value git
keys by a name the repository chooses (a filter driver, a protocol) is overruled name by name, from
a listing of the repository's config (``git config --get-regexp``, which runs nothing).

That listing costs a git start. ``names_nothing`` spares it when the files git would read can be
found and read here and none can name a driver, a protocol or another file (``silent``); anything
unsure asks git. An edit between this read and the git that follows is the same race as an edit
between the listing and that git. ``core.worktree`` moves the work tree, not the config files read;
a repository ``safe.directory`` refuses is refused by the git that follows (an error, never another
repository). The listing is never run beside that git to save time: a ``git status`` started before
its drivers are known would run the commands the repository plants, outside any sandbox.

A submodule is a repository of its own: a ``git status``/``diff-files`` that compares a populated gitlink
starts a child git inside it, which reads the submodule's config (``.git/modules/<name>/config`` or its
own ``.git``). Command-line configuration (``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n``, ``-c``) is passed
down to that child, so the names every populated gitlink's config plants, recursively, are overruled in
the one command (``submodule_listing``). Git recurses only into gitlink entries of the index whose
directory holds ``.git``; ``may_hold_gitlinks`` proves there is none without a git start.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable  # already loaded with os: the hook pays no import for it

__all__ = [
    "CONFIG_LISTING",
    "FIXED",
    "LISTED",
    "MAX_READ",
    "PROTOCOLS",
    "SUBMODULE_LISTED",
    "SUBMODULE_LISTING",
    "USER_LEVEL_DROPPED",
    "common_dir_of",
    "may_hold_gitlinks",
    "names_nothing",
    "overrides",
    "refuse_attributes",
    "sets_attributes",
    "silent",
    "submodule_listing",
    "work_tree_top",
]

PROTOCOLS = ("file", "ssh", "https", "http")  # git's own transports; a remote helper is never started
FIXED: tuple[tuple[str, str], ...] = (
    ("core.quotePath", "false"),
    ("core.hooksPath", os.devnull),
    ("diff.external", ""),
    ("color.ui", "false"),
    ("core.fsmonitor", "false"),  # a hook that answers which paths changed: it could answer "none"
    ("core.untrackedCache", "false"),
    ("core.attributesFile", os.devnull),
    ("core.excludesFile", os.devnull),  # the user-level ignore file too: only .gitignore files hide a path
    ("core.ignoreStat", "false"),
    ("core.trustctime", "true"),
    ("core.checkStat", "default"),
    ("core.fileMode", "true"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.sparseCheckout", "false"),
    ("index.sparse", "false"),
    ("diff.autoRefreshIndex", "true"),
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty helper clears every helper read before it, per-URL ones too
    ("core.sshCommand", "ssh"),
    ("core.alternateRefsCommand", ""),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "none"),  # the child git in a submodule gets no --ignore-submodules of ours
    ("protocol.allow", "never"),  # then the transports git ships, by name; git:// could go through core.gitProxy
    *((f"protocol.{name}.allow", "always") for name in PROTOCOLS),
    ("protocol.git.allow", "never"),
    ("protocol.ext.allow", "never"),
)
USER_LEVEL_DROPPED = ("core.hooksPath",)  # a location query with the user's config asks where hooks run
# The names git reads that the repository chooses: filter.<driver>.* and protocol.<name>.allow; in a
# submodule's config core.worktree and submodule.<name>.ignore too, which the child git started there
# obeys (the latter for the submodules nested in it: no --ignore-submodules reaches that git).
_CHOSEN = r"filter\..*\.(clean|smudge|process|required)|protocol\..*\.allow"
LISTED = rf"^({_CHOSEN})$"
SUBMODULE_LISTED = rf"^({_CHOSEN}|core\.worktree|submodule\..*\.ignore)$"
_FILTER = {"clean": "", "smudge": "", "process": "", "required": "false"}  # empty: git runs no filter


def overrides(listing: bytes) -> dict[str, str]:
    """``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` (command-line level, keys never split on ``=``) that
    neutralise each filter driver, close each protocol and hide no submodule the repository's config
    names in ``listing`` (``git config -z --get-regexp LISTED``: ``key\\nvalue\\0`` records)."""
    keys: dict[str, str] = {}
    for record in listing.split(b"\0"):
        key = record.partition(b"\n")[0].decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[0]
        if section == "filter" and name:
            keys |= {f"filter.{name}.{field}": value for field, value in _FILTER.items()}
        elif section == "protocol" and name and name.lower() not in PROTOCOLS:
            keys[f"protocol.{name}.allow"] = "never"
        elif section == "submodule" and name and key.endswith(".ignore"):
            keys[f"submodule.{name}.ignore"] = "none"
    env = {"GIT_CONFIG_COUNT": str(len(keys))}
    for index, (key, value) in enumerate(keys.items()):
        env |= {f"GIT_CONFIG_KEY_{index}": key, f"GIT_CONFIG_VALUE_{index}": value}
    return env


# Git runs here with no system or global file and no GIT_* variable, so it reads the repository's
# `config` and, with extensions.worktreeConfig, the worktree's `config.worktree`: nothing else but
# what those include. A section name is ASCII letters, digits, `-` and `.`, matched without case and
# never escaped or split over lines; so a file that names a filter driver (`[filter "x"]`,
# `[FiLtEr.x]`), a protocol or an included file (`include`, `includeIf`) holds one of these words.
WORDS = (b"filter", b"protocol", b"include")
MAX_READ = 64 * 1024  # a config, HEAD, gitdir or commondir file past this: git is asked instead
_OID_HEX = 40  # the shortest object id git reads in HEAD (SHA-1's)
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO never blocks; a link is odd


def silent(config: bytes) -> bool:
    """Whether a config file's bytes cannot name a filter driver, a protocol or an included file."""
    folded = config.lower()  # ASCII only, as git folds a section name
    return not any(word in folded for word in WORDS)


def names_nothing(tree: str) -> bool:
    """Whether the repository config files git would read in ``tree`` (``git -C tree``) are found
    here, as git finds them, and all are ``silent``: then the listing would name nothing. False
    whenever unsure (no ``.git`` at ``tree``, where git would search upward; a link, FIFO, odd or
    oversized file; a layout git might read otherwise): the caller asks git."""
    return _silent_config(os.fsencode(tree)) is not None


def _silent_config(tree: bytes) -> tuple[bytes, bytes, bytes] | None:
    """(git dir, ``config``, ``config.worktree``) of ``tree`` when ``names_nothing``, else None."""
    found = _git_dirs(tree)
    if found is None:
        return None
    git_dir, common_dir = found
    config = _small_file(os.path.join(common_dir, b"config"))
    worktree = _small_file(os.path.join(git_dir, b"config.worktree"), absent=b"")  # read whether git would or not
    if config is None or worktree is None or not (silent(config) and silent(worktree)):
        return None
    return git_dir, config, worktree


def common_dir_of(tree: str) -> bytes | None:
    """The common git dir of the repository git finds at ``tree``, found here as git finds it; None when unsure."""
    found = _git_dirs(os.fsencode(tree))
    return None if found is None else found[1]


def sets_attributes(path: bytes) -> bool:
    """Whether the attributes file at ``path`` (a repository's ``info/attributes``) holds a rule, or is
    anything but a small regular file. Its rules beat every ``.gitattributes`` and appear in no diff, and
    no option turns the file off: ``ident``, ``text``/``eol`` or ``working-tree-encoding`` there make git
    hash a rewritten file as the committed one."""
    data = _small_file(path, absent=b"")
    return data is None or any(line.strip() and not line.lstrip().startswith(b"#") for line in data.splitlines())


def refuse_attributes(common_dir: bytes) -> None:
    """Raise ``GitError`` when the repository's ``info/attributes`` (in ``common_dir``) ``sets_attributes``."""
    if sets_attributes(os.path.join(common_dir, b"info", b"attributes")):
        from handoff_core.errors import GitError  # here: only a refusal pays for the module

        raise GitError(
            f"{os.path.normpath(os.fsdecode(common_dir))}/info/attributes sets attributes, which can make git read "
            "a rewritten file as unchanged: move its rules to a tracked .gitattributes (or delete it) and try again"
        )


def _small_file(path: bytes, absent: bytes | None = None, limit: int = MAX_READ) -> bytes | None:
    """A regular file's bytes, ``absent`` when there is none, None when it is anything else or too big."""
    try:
        fd = os.open(path, _OPEN)
    except FileNotFoundError:
        return absent
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = _read_all(fd, limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_all(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _git_dirs(tree: bytes) -> tuple[bytes, bytes] | None:
    """(git dir, common dir) of ``tree`` when git would take ``tree/.git``: a directory git accepts,
    or a ``gitdir:`` file (git dies when its target is no repository; it never searches on)."""
    dot_git = os.path.join(tree, b".git")
    try:
        mode = os.lstat(dot_git).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        git_dir: bytes | None = dot_git
    elif stat.S_ISREG(mode):
        git_dir = _named_path(_small_file(dot_git), tree, b"gitdir: ")
    else:
        return None
    if git_dir is None:
        return None
    common_dir = _common_dir(git_dir)
    if common_dir is None or not _is_git_directory(git_dir, common_dir):
        return None
    return git_dir, common_dir


def _named_path(data: bytes | None, base: bytes, prefix: bytes = b"") -> bytes | None:
    """The path a ``gitdir``/``commondir`` file names (relative to ``base``), or None when odd."""
    if data is None or not data.startswith(prefix):
        return None
    path = data[len(prefix) :].removesuffix(b"\n").removesuffix(b"\r")
    if not path or any(byte in path for byte in b"\0\r\n"):
        return None
    return os.path.join(base, path)


def _common_dir(git_dir: bytes) -> bytes | None:
    named = os.path.join(git_dir, b"commondir")  # a linked worktree's: git reads the config found there
    data = _small_file(named, absent=b"")
    if data == b"":
        return git_dir if not os.path.lexists(named) else None
    return _named_path(data, git_dir)


def _is_git_directory(git_dir: bytes, common_dir: bytes) -> bool:
    """Git's own test, or stricter: a HEAD that is a plain file naming a ref or an object id, and
    ``objects`` and ``refs`` it may enter. Where git would refuse, it would search elsewhere."""
    head = _small_file(os.path.join(git_dir, b"HEAD"))
    if head is None:
        return False
    oid = head[:_OID_HEX]
    names = head.startswith(b"ref: refs/") or (
        len(oid) == _OID_HEX and all(c in b"0123456789abcdefABCDEF" for c in oid)
    )
    return names and all(os.access(os.path.join(common_dir, name), os.X_OK) for name in (b"objects", b"refs"))


# An index entry's mode is a 32-bit big-endian word in every index version (2, 3, 4); a gitlink's is
# 0o160000. An index that does not hold these 4 bytes anywhere holds no gitlink entry.
GITLINK_MODE = b"\x00\x00\xe0\x00"
MAX_INDEX = 64 * 1024 * 1024  # an index past this: git is asked instead
MAX_SUBMODULES = 64  # populated gitlinks, all levels together; past this the answer is an error
MAX_DEPTH = 8
CONFIG_LISTING = ("config", "-z", "--get-regexp", LISTED)
SUBMODULE_LISTING = ("config", "-z", "--get-regexp", SUBMODULE_LISTED)
GITLINKS = ("ls-files", "-s", "-z")


def work_tree_top(path: str) -> str | None:
    """The top of the work tree ``path`` lies in — the nearest folder holding ``.git`` — found by a stat
    per level, no git process; None outside any repository."""
    folder = os.path.abspath(path)
    while not os.path.lexists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder


def may_hold_gitlinks(tree: str, index: bytes | None = None) -> bool:
    """Whether the index git reads in ``tree`` (or the file ``index``) may hold a gitlink entry. False
    only when the index is a small regular file (or absent: an empty index) without ``GITLINK_MODE``
    and no part of it lives elsewhere: a split index (``sharedindex.*`` beside it, which its ``link``
    extension names) or a sparse index (``sdir``: a directory entry stands for a tree) is unsure."""
    if index is None:
        found = _git_dirs(os.fsencode(tree))
        if found is None:
            return True
        index = os.path.join(found[0], b"index")
        try:
            if any(name.startswith(b"sharedindex.") for name in os.listdir(found[0])):
                return True
        except OSError:
            return True
    data = _small_file(index, absent=b"", limit=MAX_INDEX)
    return data is None or GITLINK_MODE in data or b"sdir" in data


def submodule_listing(
    top: str,
    ask: Callable[[str, tuple[str, ...], tuple[int, ...]], bytes],
    index: bytes | None = None,
    populated: list[str] | None = None,
) -> bytes | None:
    """The listings (as ``overrides`` reads them) of the config of every populated gitlink under
    ``top``, recursively; ``index`` is the index file git reads at ``top`` (else its own). ``ask(cwd,
    args, ok)`` runs git in ``cwd`` (its work tree) under the fixed environment and returns its output,
    raising when git fails. None when there are too many submodules or levels to decide. The folders
    of the populated gitlinks of ``top`` itself are added to ``populated``."""
    found: list[bytes] = []
    todo, count = [(top, index, 0)], 0
    while todo:
        tree, tree_index, depth = todo.pop()
        if depth:
            found.append(_submodule_config(tree, ask))
        if not may_hold_gitlinks(tree, tree_index):
            continue
        subs = [os.path.join(tree, path) for path in _gitlinks(ask(tree, GITLINKS, (0,)))]
        subs = [sub for sub in subs if os.path.lexists(os.path.join(sub, ".git"))]  # populated, as git asks
        count += len(subs)
        if subs and (depth >= MAX_DEPTH or count > MAX_SUBMODULES):
            return None
        if not depth and populated is not None:
            populated += subs
        todo += [(sub, None, depth + 1) for sub in subs]
    return b"\0".join(found)


def _gitlinks(listed: bytes) -> list[str]:
    """The paths of gitlink entries in ``git ls-files -s -z`` output (``mode oid stage\tpath`` records)."""
    paths = []
    for record in listed.split(b"\0"):
        meta, _, path = record.partition(b"\t")
        if meta.startswith(b"160000 ") and path:
            paths.append(path.decode("utf-8", "surrogateescape"))
    return paths


def _submodule_config(sub: str, ask: Callable[[str, tuple[str, ...], tuple[int, ...]], bytes]) -> bytes:
    """The listing of a populated submodule's config (empty when it is read in place and ``silent``),
    once its ``core.worktree`` is known to leave the submodule's work tree at ``sub``: git drops
    ``GIT_WORK_TREE`` for the child git it starts there, which obeys that config, so a value that
    names another folder (a copy, an empty one) would have the submodule's changes read there."""
    path = os.fsencode(sub)
    in_place = _silent_config(path)
    known, value = (False, None) if in_place is None else _work_tree_named(in_place[1], in_place[2])
    if in_place is not None and b"ignore" in (in_place[1] + in_place[2]).lower():
        known = False  # a submodule.<name>.ignore there could hide a submodule nested in it: git lists it
    listing = b""
    if not known:
        listing = ask(sub, SUBMODULE_LISTING, (0, 1))
        value = _listed_work_tree(listing)
    found = _git_dirs(path) if in_place is None else (in_place[0], b"")
    if not _own_work_tree(path, None if found is None else found[0], value):
        from handoff_core.errors import GitError  # here: only a refusal pays for the module

        shown = os.fsdecode((value or b"")[:200])
        raise GitError(
            f"the submodule {sub} has core.worktree {shown!r} in its config, which is not that folder, so git "
            f"would read another folder's files for it: unset it (git -C {sub} config --unset core.worktree) "
            "and try again"
        )
    return listing


def _listed_work_tree(listing: bytes) -> bytes | None:
    """The last ``core.worktree`` of a ``SUBMODULE_LISTING`` (git obeys the last), ``b""`` for one
    without a value (git refuses it), None when there is none."""
    value = None
    for record in listing.split(b"\0"):
        key, _, rest = record.partition(b"\n")
        if key == b"core.worktree":
            value = rest
    return value


def _own_work_tree(sub: bytes, git_dir: bytes | None, value: bytes | None) -> bool:
    """Whether the work tree a ``core.worktree`` of ``value`` gives (relative to the git dir, as git
    resolves it) is the folder ``sub`` itself (same device and inode); True when it is unset."""
    if value is None:
        return True
    if not value or (git_dir is None and not os.path.isabs(value)):
        return False
    try:
        there, here = os.stat(os.path.join(git_dir or b"/", value)), os.stat(sub)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)


# Bytes after which a config line is not read here: an escape or a continued line (a backslash),
# git's other whitespace, a NUL. A file holding one is unsure: git is asked.
_UNSURE = b"\\\r\v\f\0"


def _work_tree_named(config: bytes, worktree_config: bytes) -> tuple[bool, bytes | None]:
    """(known, value): the ``core.worktree`` that ``config`` and ``config.worktree`` set, when a plain
    reading of lines git would read alike can tell it; (False, None) whenever unsure."""
    if b"worktree" in worktree_config.lower():
        return False, None
    if b"worktree" not in config.lower():  # a key is spelled whole on its line: unset
        return True, None
    if any(byte in config for byte in _UNSURE):
        return False, None
    section: bytes | None = b""
    value = None
    for raw in config.split(b"\n"):
        line = raw.strip(b" \t")
        if not line or line[:1] in (b"#", b";"):
            continue
        if line[:1] == b"[":
            if (section := _section(line)) is None:
                return False, None
            continue
        key, equals, rest = line.partition(b"=")
        key, rest = key.rstrip(b" \t"), rest.strip(b" \t")
        if not (key[:1].isalpha() and key.replace(b"-", b"").isalnum()):
            return False, None
        if section == b"core" and key.lower() == b"worktree":
            if not equals or any(byte in rest for byte in b'\t"#;'):
                return False, None
            value = rest
    return True, value


def _section(line: bytes) -> bytes | None:
    """The section a header line opens, lower case (``[core]``: ``core``; a subsection's never reads
    ``core``); None for anything but a whole header line git reads alike."""
    inner = line[1:-1] if line.endswith(b"]") else b""
    name, quote, sub = inner.partition(b'"')
    if quote:  # [name "subsection"]
        if name == name.rstrip(b" \t") or not sub.endswith(b'"') or b'"' in sub[:-1]:
            return None
        name = name.rstrip(b" \t")
    if not name.replace(b"-", b"").replace(b".", b"").isalnum():
        return None
    return name.lower() + quote
