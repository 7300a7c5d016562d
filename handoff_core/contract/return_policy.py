"""What a dispatch takes back from an external channel (seed 002 ``external-web.md`` § 7: executable
content and anything over the Packet's thresholds is refused before unpacking).

The outbound package records its policy (MANIFEST.json ``return_limits``, and in words in
DISPATCH.md); the return is judged against the policy recorded, entry by entry. A return is
text: markdown, source, diffs, JSON (and for a test observation, screenshots). Refused whatever
the policy: executables (the exec bit, a binary's magic, a ``#!`` script, a Windows script by its
name), files that run by themselves once they sit in a checkout (git internals and hooks, CI
definitions, environment files, editor, agent and package-manager settings), and credentials by
name (the services refuse credentials by content, with the secret scan).

Held, not refused: files that a package manager, test runner or build would execute on the Lead's
machine at its next ``npm install``, ``pytest``, ``pip install .``, ``make`` or ``cargo build``
(``LEAD_RUN``, and a ``package.json`` with lifecycle scripts). They come back in the sealed
return, and are extracted only when the Lead accepts them by name after reading them.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Final, Literal, get_args

from handoff_core.contract.exclusions import secret_name_reason
from handoff_core.errors import InvalidContent
from handoff_core.layout import MAX_FILE_BYTES, Kind

__all__ = [
    "LEAD_RUN",
    "LIFECYCLE_SCRIPTS",
    "RETURN_FILES",
    "ContentKind",
    "ReturnPolicy",
    "entry_refusal",
    "held_because",
    "policy_for",
    "policy_from",
]

ContentKind = Literal["text", "image"]
CONTENT_KINDS: Final[tuple[ContentKind, ...]] = get_args(ContentKind)
RETURN_FILES: Final[Mapping[Kind, tuple[str, ...]]] = {
    "implementation": ("RETURN.md", "PATCH.diff or candidate/", "CHECKS.md"),
    "review": ("RETURN.md", "FINDINGS.md"),
    "research": ("RETURN.md", "RESEARCH.md", "SOURCES.json"),
    "test-observation": ("RETURN.md", "CHECKS.md"),
}


@dataclass(frozen=True, kw_only=True)
class ReturnPolicy:
    """The thresholds a return is judged by. A text return is small: the whole of it is scanned for
    secrets, so ``total_bytes`` also bounds that scan's time."""

    archive_bytes: int = MAX_FILE_BYTES  # the download itself, bounded before it is read, as any file
    entries: int = 1_000
    entry_bytes: int = 1024 * 1024
    total_bytes: int = 2 * 1024 * 1024  # the secret scan reads ~0.2 MB/s: a full return costs ~10 s
    ratio: int = 200  # uncompressed : compressed, for entries over 1 MiB
    content: tuple[ContentKind, ...] = ("text",)

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "content": list(self.content)}


def policy_for(kind: Kind) -> ReturnPolicy:
    """The policy a new package of ``kind`` records."""
    return ReturnPolicy(content=("text", "image") if kind == "test-observation" else ("text",))


def policy_from(value: object, kind: Kind) -> ReturnPolicy:
    """The policy a manifest records; ``kind``'s own when the manifest predates recorded policies."""
    if value is None:
        return policy_for(kind)
    fields = ReturnPolicy.__dataclass_fields__
    if not isinstance(value, dict) or set(value) != set(fields):
        raise InvalidContent(f"MANIFEST.json return_limits must hold exactly {sorted(fields)}: make a new dispatch")
    sizes = {name: value[name] for name in fields if name != "content"}
    content = value["content"]
    if not all(type(size) is int and size > 0 for size in sizes.values()):
        raise InvalidContent("MANIFEST.json return_limits sizes must be positive whole numbers: make a new dispatch")
    if not isinstance(content, list) or not content or any(item not in CONTENT_KINDS for item in content):
        raise InvalidContent(f"MANIFEST.json return_limits content must list some of {list(CONTENT_KINDS)}")
    return ReturnPolicy(**sizes, content=tuple(content))


_AUTO_RUN_DIRS = {
    ".git": "git internals (its hooks and config run code on git commands)",
    ".githooks": "git hooks (run on git commands)",
    ".husky": "git hooks (run on git commands)",
    ".lefthook": "git hooks (run on git commands)",
    ".circleci": "a CI definition (runs when pushed)",
    ".buildkite": "a CI definition (runs when pushed)",
    ".woodpecker": "a CI definition (runs when pushed)",
    ".vscode": "editor settings (tasks run when the folder opens)",
    ".idea": "editor settings (run configurations)",
    ".zed": "editor settings (tasks and language servers it starts)",
    ".devcontainer": "a dev container definition (its commands run when it opens)",
    ".mise": "tool-version settings (mise runs their hooks and tasks on entering the folder)",
    ".claude": "agent settings (hooks run commands)",
    ".codex": "agent settings (hooks run commands)",
    ".cursor": "agent settings (hooks run commands)",
    ".gemini": "agent settings (hooks run commands)",
    ".opencode": "agent settings (plugins and MCP servers run commands)",
    ".roo": "agent settings (MCP servers start commands)",
    ".windsurf": "agent settings (workflows and MCP servers run commands)",
    ".kilocode": "agent settings (MCP servers start commands)",
    ".continue": "agent settings (MCP servers start commands)",
    ".amazonq": "agent settings (MCP servers start commands)",
}
# Folders of another folder that a forge runs: (parent, child), matched anywhere in the path.
_CI_PAIRS = tuple((forge, part) for forge in (".github", ".gitea", ".forgejo") for part in ("workflows", "actions"))
_AUTO_RUN_FILES = (
    ((".envrc", ".env", ".env.*", ".flaskenv"), "an environment file (loaded by direnv or dotenv by itself)"),
    ((".gitmodules",), "submodules (fetch code on update)"),
    (
        (".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml", ".huskyrc"),
        "commit hooks",
    ),
    (("lint-staged.config.*", ".lintstagedrc", ".lintstagedrc.*"), "commit hooks (lint-staged runs them)"),
    (
        (
            ".gitlab-ci.yml",
            ".travis.yml",
            "jenkinsfile",
            "azure-pipelines.yml",
            "bitbucket-pipelines.yml",
            ".drone.yml",
            ".woodpecker.yml",
            ".woodpecker.yaml",
            "appveyor.yml",
            ".appveyor.yml",
            ".cirrus.yml",
            ".cirrus.star",
        ),
        "a CI definition (runs when pushed)",
    ),
    (("*.code-workspace",), "editor settings (a workspace's tasks run when it opens)"),
    (
        (".mise.toml", "mise.toml", ".mise.*.toml", "mise.*.toml"),
        "tool-version settings (mise runs their hooks and tasks on entering the folder)",
    ),
    ((".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"), "package-manager settings (run code on install)"),
    ((".mcp.json", "opencode.json", "opencode.jsonc"), "MCP server or agent definitions (start commands)"),
    (("autorun.inf", "desktop.ini", "*.desktop", "*.lnk", "*.scf", "*.url"), "opened or run by a file manager"),
)
_WINDOWS_RUN = ("*.exe", "*.com", "*.bat", "*.cmd", "*.ps1", "*.psm1", "*.vbs", "*.vbe", "*.wsf", "*.scr", "*.msi")
_MAGIC = (
    (b"\x7fELF", "an ELF binary"),
    (b"\xfe\xed\xfa\xce", "a Mach-O binary"),
    (b"\xfe\xed\xfa\xcf", "a Mach-O binary"),
    (b"\xce\xfa\xed\xfe", "a Mach-O binary"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O binary"),
    (b"\xca\xfe\xba\xbe", "a Mach-O universal binary or Java class"),
    (b"\x00asm", "a WebAssembly module"),
    (b"#!", "a script with a #! line"),
)
_IMAGES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


def _auto_run(parts: tuple[str, ...], is_dir: bool) -> str | None:
    folded = tuple(part.lower() for part in parts)  # .GIT is .git on a case-insensitive file system
    for part in folded if is_dir else folded[:-1]:
        if part in _AUTO_RUN_DIRS:
            return _AUTO_RUN_DIRS[part]
    for index in range(len(folded) - 1):
        if folded[index : index + 2] in _CI_PAIRS:
            return f"a CI definition ({folded[index]} workflows run when pushed)"
    if is_dir:
        return None
    if folded[-1] == ".git":
        return "a .git file (it points git at another repository, its hooks and config)"
    for patterns, reason in _AUTO_RUN_FILES:
        if any(fnmatch.fnmatchcase(folded[-1], pattern) for pattern in patterns):
            return reason
    return None


def _executable(name: str, mode: int, body: bytes) -> str | None:
    if mode & 0o111:
        return "the executable bit is set"
    if any(fnmatch.fnmatchcase(name.lower(), pattern) for pattern in _WINDOWS_RUN):
        return "a Windows executable or script by its name"
    if body.startswith(b"MZ") and b"\x00" in body[:64]:
        return "executable content (a DOS/Windows binary)"
    return next((f"executable content ({what})" for magic, what in _MAGIC if body.startswith(magic)), None)


def _kind_of(body: bytes) -> ContentKind | None:
    if body.startswith(_IMAGES) or (body[:4] == b"RIFF" and body[8:12] == b"WEBP"):
        return "image"
    if b"\x00" in body:
        return None
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "text"


def entry_refusal(parts: tuple[str, ...], mode: int, body: bytes | None, policy: ReturnPolicy) -> str | None:
    """Why one entry of a return is refused (a folder has no ``body``), or None."""
    if (reason := _auto_run(parts, body is None)) is not None:
        return f"an auto-run file: {reason}"
    if body is None:
        return None
    if (reason := secret_name_reason(parts[-1])) is not None:
        return f"a {reason} by its name (credentials never come back)"
    if (reason := _executable(parts[-1], mode, body)) is not None:
        return reason
    if (kind := _kind_of(body)) not in policy.content:
        return f"{kind or 'binary'} content: this dispatch takes back only {', '.join(policy.content)} files"
    return None


# Files the Lead's own tools execute by themselves when run in the project: by (folded) name.
LEAD_RUN: Final[tuple[tuple[tuple[str, ...], str], ...]] = (
    (
        ("conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "noxfile.py"),
        "test-runner code or configuration",
    ),
    ((".coveragerc",), "test-runner configuration"),
    (("sitecustomize.py", "usercustomize.py", "*.pth"), "Python start-up code"),
    (("setup.py", "setup.cfg", "pyproject.toml"), "a Python build definition (runs on pip install)"),
    (("makefile", "gnumakefile", "*.mk", "justfile", "rakefile", "taskfile.yml", "taskfile.yaml"), "a build script"),
    (("build.rs", "cargo.toml", "build.zig"), "a Rust or Zig build script or definition"),
    (("cmakelists.txt", "*.cmake", "meson.build", "build.ninja", "sconstruct", "configure"), "a build definition"),
    (("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "pom.xml"), "a JVM build"),
    (("gemfile", "*.gemspec", "composer.json", "binding.gyp"), "a package definition (runs code on install)"),
    (
        ("jest.config.*", "vitest.config.*", "vite.config.*", "playwright.config.*", "webpack.config.*",
         "babel.config.*", ".babelrc", ".babelrc.*", ".mocharc.*", "karma.conf.*", "eslint.config.*", ".eslintrc.*"),
        "JavaScript tool configuration (code run by the test runner, bundler or linter)",
    ),
    (
        tuple(f"{stem}.{ext}" for stem in ("*.config", ".*rc") for ext in ("js", "cjs", "mjs", "ts", "cts", "mts")),
        "JavaScript or TypeScript configuration (code the tool that reads it runs)",
    ),
)  # fmt: skip
# By folder and name: cargo reads .cargo/config(.toml) of every folder above where it runs.
_LEAD_RUN_IN = ((".cargo", ("config", "config.toml"), "cargo configuration (its wrappers and runners run on build)"),)
# package.json scripts npm, yarn and pnpm run by themselves (on install, pack, publish, version, or
# when the package is a git dependency), as https://docs.npmjs.com/cli/using-npm/scripts lists them.
LIFECYCLE_SCRIPTS: Final = frozenset(
    f"{when}{name}"
    for name in ("install", "uninstall", "prepare", "prepublish", "publish", "pack", "version", "dependencies")
    for when in ("pre", "", "post")
) | {"prepublishOnly", "preshrinkwrap", "shrinkwrap", "postshrinkwrap"}


def _lifecycle(body: bytes) -> list[str] | None:
    """The lifecycle scripts a package.json declares; None when it cannot be read (then it is held)."""
    try:
        scripts = json.loads(body).get("scripts", {})
    except (ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(scripts, dict):
        return None
    return sorted(name for name in scripts if name in LIFECYCLE_SCRIPTS)


def held_because(parts: tuple[str, ...], body: bytes) -> str | None:
    """Why an entry is held for the Lead's explicit acceptance (it would run on the Lead's machine), or None."""
    name = parts[-1].lower()
    if name == "package.json":
        scripts = _lifecycle(body)
        if scripts is None:
            return "a package.json that cannot be read as JSON with a scripts object (npm could run it)"
        return f"a package.json with lifecycle scripts ({', '.join(scripts)}) npm runs on install" if scripts else None
    folder = parts[-2].lower() if len(parts) > 1 else ""
    if reason := next((why for parent, names, why in _LEAD_RUN_IN if folder == parent and name in names), None):
        return reason
    return next((why for names, why in LEAD_RUN if any(fnmatch.fnmatchcase(name, n) for n in names)), None)
