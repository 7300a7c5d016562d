"""The configuration git runs under here, laid over the repository's own: the repository's config
(``.git/config``, a worktree's ``config.worktree``, any file they include), its attributes and its
index are written by whoever works in it, so nothing there may start a command or answer which files
changed. Command-line configuration beats every file git reads; a filter driver, keyed by a name the
repository chooses, is overruled name by name, from a listing of the repository's config (``git
config --get-regexp``, which runs nothing).

No git here reaches a transport (``ENVIRONMENT``): ``GIT_ALLOW_PROTOCOL`` empty beats every
``protocol.*`` key, so git refuses each transport before it starts what a config names for one (an
``uploadpack`` command, a ``remote.*.vcs`` helper, an ``ext::`` URL, ``core.sshCommand``), and
``GIT_NO_LAZY_FETCH`` (git 2.39.4 and later) stops a partial clone's lazy fetch before it starts.
Both are variables, which git hands to every git it starts: the ``git fetch`` a partial clone
(``extensions.partialClone``) starts for a missing object among them, which reads its promisor
remote's ``uploadpack`` from the repository's config (an option like ``--upload-pack`` reaches only
the git it is given to), and the children that drop command-line configuration (an alternate's
``for-each-ref``, an ``upload-pack``). The one git that needs a transport reads no config of the
repository at all (``files.git_remote``).

That listing costs a git start. ``names_nothing`` spares it when the files git would read can be
found and read here and none can name a driver or another file (``silent``); anything unsure asks
git. An edit between this read and the git that follows is the same race as an edit between the
listing and that git. ``core.worktree`` moves the work tree, not the config files read; a repository
``safe.directory`` refuses is refused by the git that follows (an error, never another repository).
The listing is never run beside that git to save time: a ``git status`` started before its drivers
are known would run the commands the repository plants, outside any sandbox.

The same overrides cover every populated submodule (a repository of its own, whose config the
child git started there reads); ``files.submodules`` walks them and lists their config.
"""

from __future__ import annotations

import os
import stat

__all__ = [
    "CONFIG_LISTING",
    "ENVIRONMENT",
    "FIXED",
    "LISTED",
    "MAX_READ",
    "PROTOCOLS",
    "SUBMODULE_LISTED",
    "USER_LEVEL_DROPPED",
    "common_dir_of",
    "git_dirs",
    "names_nothing",
    "overrides",
    "refuse_attributes",
    "sets_attributes",
    "silent",
    "silent_config",
    "small_file",
    "work_tree_top",
]

PROTOCOLS = ("file", "ssh", "https", "http")  # the transports files.git_remote opens; a helper is never started
# Every git here: no system or global configuration, no prompt, no optional locks, no transport, no
# lazy fetch, no replace refs; git hands all of these down to each git it starts (files.git adds no pager).
ENVIRONMENT = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ALLOW_PROTOCOL": "",  # set, it is the list of transports allowed, whatever any config says: none
    "GIT_NO_LAZY_FETCH": "1",
    # refs/replace/* are refs whoever writes the repository's refs writes: honoured, they would let a
    # commit stand in for another in every answer git gives (the change, the ancestry, HEAD's tree).
    "GIT_NO_REPLACE_OBJECTS": "1",
    "LC_ALL": "C",
}
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
)
USER_LEVEL_DROPPED = ("core.hooksPath",)  # a location query with the user's config asks where hooks run
# The names git reads that the repository chooses: filter.<driver>.*; in a submodule's config
# core.worktree and submodule.<name>.ignore too, which the child git started there obeys (the latter
# for the submodules nested in it: no --ignore-submodules reaches that git).
_CHOSEN = r"filter\..*\.(clean|smudge|process|required)"
LISTED = rf"^({_CHOSEN})$"
SUBMODULE_LISTED = rf"^({_CHOSEN}|core\.worktree|submodule\..*\.ignore)$"
_FILTER = {"clean": "", "smudge": "", "process": "", "required": "false"}  # empty: git runs no filter


def overrides(listing: bytes) -> dict[str, str]:
    """``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` (command-line level, keys never split on ``=``) that
    neutralise each filter driver and hide no submodule the repository's config names in ``listing``
    (``git config -z --get-regexp LISTED``: ``key\\nvalue\\0`` records)."""
    keys: dict[str, str] = {}
    for record in listing.split(b"\0"):
        key = record.partition(b"\n")[0].decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[0]
        if section == "filter" and name:
            keys |= {f"filter.{name}.{field}": value for field, value in _FILTER.items()}
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
# `[FiLtEr.x]`) or an included file (`include`, `includeIf`) holds one of these words.
WORDS = (b"filter", b"include")
MAX_READ = 64 * 1024  # a config, HEAD, gitdir or commondir file past this: git is asked instead
_OID_HEX = 40  # the shortest object id git reads in HEAD (SHA-1's)
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO never blocks; a link is odd


def silent(config: bytes) -> bool:
    """Whether a config file's bytes cannot name a filter driver or an included file."""
    folded = config.lower()  # ASCII only, as git folds a section name
    return not any(word in folded for word in WORDS)


def names_nothing(tree: str) -> bool:
    """Whether the repository config files git would read in ``tree`` (``git -C tree``) are found
    here, as git finds them, and all are ``silent``: then the listing would name nothing. False
    whenever unsure (no ``.git`` at ``tree``, where git would search upward; a link, FIFO, odd or
    oversized file; a layout git might read otherwise): the caller asks git."""
    return silent_config(os.fsencode(tree)) is not None


def silent_config(tree: bytes) -> tuple[bytes, bytes, bytes] | None:
    """(git dir, ``config``, ``config.worktree``) of ``tree`` when ``names_nothing``, else None."""
    found = git_dirs(tree)
    if found is None:
        return None
    git_dir, common_dir = found
    config = small_file(os.path.join(common_dir, b"config"))
    worktree = small_file(os.path.join(git_dir, b"config.worktree"), absent=b"")  # read whether git would or not
    if config is None or worktree is None or not (silent(config) and silent(worktree)):
        return None
    return git_dir, config, worktree


def common_dir_of(tree: str) -> bytes | None:
    """The common git dir of the repository git finds at ``tree``, found here as git finds it; None when unsure."""
    found = git_dirs(os.fsencode(tree))
    return None if found is None else found[1]


def sets_attributes(path: bytes) -> bool:
    """Whether the attributes file at ``path`` (a repository's ``info/attributes``) holds a rule, or is
    anything but a small regular file. Its rules beat every ``.gitattributes`` and appear in no diff, and
    no option turns the file off: ``ident``, ``text``/``eol`` or ``working-tree-encoding`` there make git
    hash a rewritten file as the committed one."""
    data = small_file(path, absent=b"")
    return data is None or any(line.strip() and not line.lstrip().startswith(b"#") for line in data.splitlines())


def refuse_attributes(common_dir: bytes) -> None:
    """Raise ``GitError`` when the repository's ``info/attributes`` (in ``common_dir``) ``sets_attributes``."""
    if sets_attributes(os.path.join(common_dir, b"info", b"attributes")):
        from handoff_core.errors import GitError  # here: only a refusal pays for the module

        raise GitError(
            f"{os.path.normpath(os.fsdecode(common_dir))}/info/attributes sets attributes, which can make git read "
            "a rewritten file as unchanged: move its rules to a tracked .gitattributes (or delete it) and try again"
        )


def small_file(path: bytes, absent: bytes | None = None, limit: int = MAX_READ) -> bytes | None:
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


def git_dirs(tree: bytes) -> tuple[bytes, bytes] | None:
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
        git_dir = _named_path(small_file(dot_git), tree, b"gitdir: ")
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
    data = small_file(named, absent=b"")
    if data == b"":
        return git_dir if not os.path.lexists(named) else None
    return _named_path(data, git_dir)


def _is_git_directory(git_dir: bytes, common_dir: bytes) -> bool:
    """Git's own test, or stricter: a HEAD that is a plain file naming a ref or an object id, and
    ``objects`` and ``refs`` it may enter. Where git would refuse, it would search elsewhere."""
    head = small_file(os.path.join(git_dir, b"HEAD"))
    if head is None:
        return False
    oid = head[:_OID_HEX]
    names = head.startswith(b"ref: refs/") or (
        len(oid) == _OID_HEX and all(c in b"0123456789abcdefABCDEF" for c in oid)
    )
    return names and all(os.access(os.path.join(common_dir, name), os.X_OK) for name in (b"objects", b"refs"))


CONFIG_LISTING = ("config", "-z", "--get-regexp", LISTED)


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
