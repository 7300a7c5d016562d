"""``handoff-mcp sandbox --ref REF --task-sha256 HEX … -- COMMAND [ARGS…]``: an executor's launch,
contained by the kernel in what its published TASK grants, then ``exec``.

In order: the TASK is read by handle and must hash to the pinned sha256 (a TASK changed since its
dispatch launches nothing); the executor's home is made and what its CLI needs copied in; the grants
are drawn (``grants``) and turned into a Landlock ruleset; the broker (``broker``) is started
outside it, on a loopback port the ruleset lets the sandbox reach and a key only the sandbox is
handed; the launch restricts itself (and filters what Landlock does not govern: the terminal
requests that would type into the shell that started it, Unix sockets, io_uring: ``files.seccomp``),
closes every descriptor but the standard three, then becomes the command. Where the kernel offers
no Landlock the launch refuses, unless the TASK says ``sandbox: if-available`` (or ``off``): then it
says so and runs the command as it is. On macOS the same grants become a Seatbelt profile for
``sandbox-exec``. Every refusal says why and exits 125 (the command never ran); the command's own
exit is the launch's. Stdlib only up to the exec.
"""

from __future__ import annotations

import _socket  # not socket: its wrapper costs every launch a few milliseconds of imports
import os
import stat
import sys

from handoff_core.files import landlock, seccomp
from handoff_core.files.executor_home import REPLACED, executor_home, prepare_home
from handoff_core.files.local_socket import broker_address, parse_address
from handoff_core.layout import BROKER_VARIABLE, SANDBOX_VARIABLE, WRITABLE_VARIABLE, default_secret_file
from handoff_core.services.containment.endpoints import url_port
from handoff_core.services.containment.grants import Grant, Grants, draw_grants
from handoff_core.services.evidence.task_pin import PinnedTask, TaskUnreadable, read_pinned

__all__ = ["REFUSED_EXIT", "contained_ruleset", "run"]

REFUSED_EXIT = 125  # as env(1) and timeout(1) say that they, not the command, failed
_FLAGS = ("--ref", "--task-sha256", "--project-root", "--state-root", "--secret-file", "--url", "--token-env")
_REPEATED = ("--allow-port",)
USAGE = (
    "usage: handoff-mcp sandbox --ref REF --task-sha256 HEX --project-root DIR --state-root DIR "
    "[--secret-file FILE] [--allow-port N]… -- COMMAND [ARGS…]"
)
_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NO_FD = 2**31 - 1  # past every descriptor: os.closerange closes the range with one close_range(2)


class Refused(Exception):
    """The launch cannot go ahead contained: why, for the person who started it."""


def _options(argv: list[str]) -> tuple[dict[str, str], list[int], list[str]]:
    if "--" not in argv:
        raise Refused("the command to launch comes after --")
    split = argv.index("--")
    flags, command = argv[:split], argv[split + 1 :]
    options: dict[str, str] = {}
    ports: list[int] = []
    pairs = iter(flags)
    for flag in pairs:
        name, _, value = flag.partition("=")
        if name not in _FLAGS + _REPEATED:
            raise Refused(f"unknown argument {name[:60]!r}")
        value = value or next(pairs, "")
        if not value:
            raise Refused(f"{name} needs a value")
        if name in _REPEATED:
            if not value.isdigit() or not 0 < int(value) < 65536:  # noqa: PLR2004 - TCP's ports
                raise Refused(f"--allow-port {value[:20]!r} is not a TCP port")
            ports.append(int(value))
        elif name in options:
            raise Refused(f"{name} given twice")
        else:
            options[name] = value
    if not command:
        raise Refused("no command after --")
    if "--ref" not in options or "--task-sha256" not in options:
        raise Refused("--ref REF and --task-sha256 HEX are required (print the launch line with handoff-mcp config)")
    if "--url" not in options and not all(
        os.path.isabs(options.get(f, "")) for f in ("--project-root", "--state-root")
    ):
        raise Refused("--project-root and --state-root must be absolute paths")
    return options, ports, command


def _say(ref: str, text: str) -> None:
    try:
        sys.stderr.write(f"handoff sandbox for {ref}: {text}\n")
        sys.stderr.flush()
    except OSError:
        pass  # nobody reads the launch's stderr: the launch goes on


def _pinned(options: dict[str, str], environ: dict[str, str]) -> tuple[PinnedTask, str, str]:
    """The TASK as published, and the project and state roots (resolved) the grants are drawn in."""
    ref, pin = options["--ref"], options["--task-sha256"]
    if "--url" in options:  # the errors module loads only here: a launch from the Lead's tree never needs it
        from handoff_core.errors import SandboxRefused
        from handoff_core.services.containment.remote import remote_pinned

        try:
            return remote_pinned(options, environ)
        except SandboxRefused as exc:
            raise Refused(exc.message) from exc
    state = os.path.realpath(options["--state-root"])
    try:
        return read_pinned(state, ref, pin), os.path.realpath(options["--project-root"]), state
    except TaskUnreadable as exc:
        raise Refused(f"cannot use the task ({exc}); nothing was launched") from exc


def _walk(grant: Grant) -> int | None:
    """A handle on the grant's path, walked from its anchor by handle, never through a link; folders
    made on the way when the grant says so. None when it cannot be reached that way."""
    fd = os.open(grant.anchor, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(grant.parts):
            last = index == len(grant.parts) - 1
            if grant.make and not _exists(part, fd):
                os.mkdir(part, 0o777, dir_fd=fd)
            nxt = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC if last else _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError:
        os.close(fd)
        return None
    return fd


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _readable(ruleset: landlock.Ruleset, denied: tuple[str, ...]) -> None:
    """Reading allowed everywhere but ``denied``: a rule on every entry of each folder on the way to a
    denied path, except the way itself. Whatever appears in those folders later is not readable."""
    if not denied:
        ruleset.allow_path("/", landlock.READ_FILE)
        return
    way = set()
    for path in denied:
        folder = path
        while folder != "/":
            folder = os.path.dirname(folder)
            way.add(folder)
    for folder in sorted(way):
        try:
            listing = os.scandir(folder)
        except OSError:
            continue  # a folder this user cannot list: nothing in it is readable from inside
        with listing:
            for _, entry in zip(range(20_000), listing, strict=False):
                if entry.path in way or entry.path in denied or entry.is_symlink():
                    continue  # a link needs no rule: what it points at is ruled where it lies
                ruleset.allow_path(entry.path, landlock.READ_FILE, folder=entry.is_dir(follow_symlinks=False))


def _ruleset(version: int, grants: Grants, broker: int | None) -> tuple[landlock.Ruleset, list[str]]:
    """The ruleset of ``grants`` (and the ``broker``'s port), and the paths it lets the executor write
    (a folder ends with /)."""
    write = landlock.write_access(version)
    ruleset = landlock.Ruleset(version, fs=write | landlock.READ_FILE, connect=grants.connect is not None, scoped=True)
    try:
        for port in (*(grants.connect or ()), *([broker] if broker is not None else [])):
            ruleset.allow_connect(port)
        _readable(ruleset, grants.read_denied)
        granted = []
        for grant in grants.write:
            fd = _walk(grant)
            if fd is None:
                continue
            try:
                folder = stat.S_ISDIR(os.fstat(fd).st_mode)
                ruleset.allow_handle(fd, write | landlock.READ_FILE)
            finally:
                os.close(fd)
            granted.append(grant.path + ("/" if folder else ""))
    except BaseException:
        ruleset.close()
        raise
    return ruleset, granted


def _writable_code(grants: Grants) -> str | None:
    """The first of what runs outside the sandbox (this package, the interpreter, its standard library
    and virtual environment: the launch until it restricts itself, the broker throughout) that a grant
    reaches; an executor writing it would run unconfined at its task's next launch."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    code = {package, os.path.realpath(sys.executable), os.path.dirname(os.path.realpath(os.__file__))}
    if sys.prefix != sys.base_prefix:
        code.add(os.path.realpath(sys.prefix))
    for grant in grants.write:
        for path in sorted(code):
            if _within(path, grant.path) or _within(grant.path, path):
                return path
    return None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _listener() -> tuple[_socket.socket, str]:
    """The broker's listening socket, at the loopback address, and its address with a fresh key."""
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener, broker_address(listener.getsockname()[1], os.urandom(24).hex())


def _broker(listener: _socket.socket, address: str, options: dict[str, str], environ: dict[str, str]) -> None:
    """The broker started outside the sandbox on ``listener``, already listening."""
    entry = os.path.join(os.path.dirname(os.path.abspath(__file__)), "broker_process.py")
    args = [sys.executable, "-I", entry, "--fd", str(listener.fileno()), "--parent", str(os.getpid())]
    args += [f"{flag}={options[flag]}" for flag in ("--ref", "--project-root", "--state-root", "--secret-file")]
    pid = os.fork()
    if pid == 0:  # the broker: never returns here; it holds none of the command's pipes open
        try:
            os.set_inheritable(listener.fileno(), True)
            quiet = os.open(os.devnull, os.O_RDWR)
            for stream in (0, 1, 2):
                os.dup2(quiet, stream)
            os.execve(sys.executable, args, environ | {BROKER_VARIABLE: address})  # noqa: S606 - no shell
        finally:
            os._exit(REFUSED_EXIT)
    listener.close()


def _exec(command: list[str], env: dict[str, str], ref: str) -> int:
    try:
        os.execvpe(command[0], command, env)  # noqa: S606 - the command as given, no shell
    except OSError as exc:
        _say(ref, f"cannot start {command[0]!r}: {exc.strerror}")
    return 127


def _unsandboxed(command: list[str], environ: dict[str, str], ref: str, why: str) -> int:
    _say(ref, f"{why}; the executor runs without the kernel sandbox (the guard and the audit still judge it)")
    return _exec(resumed(command, environ), environ, ref)


def resumed(command: list[str], env: dict[str, str]) -> list[str]:
    """A Claude Code launch that pins a session which already has its log, continuing it instead:
    the same printed line runs again (``--session-id`` names a new session only once)."""
    if "--session-id" not in command[:-1]:
        return command
    at = command.index("--session-id")
    session = command[at + 1]
    folder = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME", ""), ".claude")
    try:
        slugs = os.listdir(os.path.join(folder, "projects"))
    except OSError:
        return command
    if not any(os.path.isfile(os.path.join(folder, "projects", slug, f"{session}.jsonl")) for slug in slugs):
        return command
    return [*command[:at], "--resume", session, *command[at + 2 :]]


def launch(argv: list[str], environ: dict[str, str]) -> int:
    options, ports, command = _options(argv)
    ref = options["--ref"]
    pinned, project, state = _pinned(options, environ)
    if pinned.has_report or pinned.has_release:
        ended = "a REPORT" if pinned.has_report else "a RELEASE"
        raise Refused(
            f"the task has {ended}: its writer's claim has ended, so no executor starts for it; dispatch a new task"
        )
    mode = pinned.task.scope.sandbox
    if mode == "off":
        return _unsandboxed(command, environ, ref, "the TASK says sandbox: off")
    version = landlock.abi()
    if version == 0 and sys.platform != "darwin":
        if mode == "if-available":
            return _unsandboxed(command, environ, ref, "this kernel offers no Landlock and the TASK allows that")
        raise Refused(
            "this kernel offers no Landlock (Linux 5.13 or later, enabled at boot), and the TASK requires the "
            "sandbox: run the executor on such a kernel, or have the Lead dispatch it with sandbox=if-available"
        )
    secret = options.get("--secret-file") or environ.get("HANDOFF_SECRET_FILE") or default_secret_file(environ)
    home = executor_home(options.get("--url") or state, ref)
    env = {k: v for k, v in environ.items() if k not in REPLACED} | prepare_home(home, environ)
    if "--url" in options and (port := url_port(options["--url"])) is not None:
        ports.append(port)  # the executor's server is the team server: its port is reached
    grants = draw_grants(pinned.task, ref, (project, state), secret, home, environ, pinned.in_effect, tuple(ports))
    env = {k: v for k, v in env.items() if k not in grants.drop_env}
    if (code := _writable_code(grants)) is not None:
        raise Refused(
            f"the task may write {code}, which this launch runs before it is contained (the sandbox's own code "
            "or its interpreter): install handoff-mcp where no task writes (pipx, uv tool) and print the launch "
            "line from there; nothing was launched"
        )
    if sys.platform == "darwin":
        from handoff_core.services.containment.seatbelt import profile

        os.closerange(3, _NO_FD)
        return _exec(["/usr/bin/sandbox-exec", "-p", profile(grants), *command], env, ref)
    listener, address = _listener() if "--url" not in options else (None, "")
    ruleset, granted = _ruleset(version, grants, parse_address(address)[0] if address else None)
    for note in grants.notes:
        _say(ref, note)
    if listener is not None:
        _broker(listener, address, options | {"--secret-file": secret}, environ)
        env[BROKER_VARIABLE] = address
    env |= {SANDBOX_VARIABLE: ref, WRITABLE_VARIABLE: "\n".join(granted)}
    ruleset.restrict()
    try:
        seccomp.forbid_outside_reach(truncate=version < 3)  # noqa: PLR2004 - ABI 3 governs truncation
    except seccomp.FilterUnavailable as exc:  # restricted already: nothing runs uncontained from here on
        raise Refused(
            f"cannot keep the executor from its terminal and the user's services ({exc.strerror}); nothing was launched"
        ) from exc
    os.closerange(3, _NO_FD)  # a descriptor the launch's parent leaked stays open past any rule: none passes
    return _exec(resumed(command, env), env, ref)


def run(argv: list[str], environ: dict[str, str]) -> int:
    """The launch; an exit code only when it did not become the command."""
    try:
        return launch(argv, environ)
    except Refused as exc:
        ref = argv[argv.index("--ref") + 1] if "--ref" in argv[:-1] else "a task"
        _say(ref, f"{exc}")
        if str(exc).startswith(("unknown argument", "no command", "the command", "--")):
            sys.stderr.write(f"{USAGE}\n")
        return REFUSED_EXIT
    except landlock.LandlockUnavailable as exc:
        sys.stderr.write(f"handoff sandbox: the kernel refused the sandbox ({exc.strerror}); nothing was launched\n")
        return REFUSED_EXIT
    except OSError as exc:
        sys.stderr.write(f"handoff sandbox: cannot prepare the launch ({exc}); nothing was launched\n")
        return REFUSED_EXIT


def contained_ruleset(version: int, grants: Grants) -> tuple[landlock.Ruleset, list[str]]:
    """The Landlock ruleset of ``grants`` exactly as a launch draws it, and the paths it lets write:
    for another contained command (a task's acceptance check replayed, ``containment.replay``)."""
    return _ruleset(version, grants, None)
