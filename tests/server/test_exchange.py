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

from tests.core.files.test_archives import zip_of
from tests.server.test_stdio import params
from tests.server.test_tools import call, refused, task_args

pytestmark = pytest.mark.anyio
IDS = {"scope_id": "s1", "dispatch_id": "d1", "attempt_id": "a1"}


async def sealed_review(lead: Client, project: Path) -> dict[str, Any]:
    """A review task packaged as dispatch d1; the ids a return to it needs."""
    created = await call(lead, "create_task", **task_args(kind="review", workspace="", writable=[], shared=[]))
    (project / "docs").mkdir(exist_ok=True)
    (project / "docs" / "a.md").write_text("# A\n")
    await call(lead, "package_dispatch", ref=created["ref"], scope_id="s1", dispatch_id="d1", files=["docs"])
    return {**IDS, "task_id": created["ref"].split("/")[2]}


def inbound(project: Path, ids: dict[str, Any]) -> list[str]:
    """Every path of the dispatch's inbound folder: empty when no return was persisted."""
    root = project / "temp" / "task-delivery" / "s1" / ids["task_id"] / "d1" / "inbound"
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*")) if root.exists() else []


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


def cache_file(tmp_path: Path) -> str:
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / "claims.json").write_bytes(zip_of(("RETURN.md", b"# Return\n")))  # a ZIP, even
    return str(tmp_path / "cache" / "claims.json")


def oversized(tmp_path: Path) -> str:
    with open(tmp_path / "answer.zip", "wb") as handle:
        handle.truncate(256 * 1024 * 1024 + 1)  # sparse: costs no disk
    return str(tmp_path / "answer.zip")


# What each named file is, and the refusal's code.
HOSTILE_PATHS: dict[str, tuple[Callable[[Path], str], str]] = {
    "the token secret": (lambda tmp: str(tmp / "config" / "secret"), "unsafe_path"),
    "a hard link to the token secret": (hard_link_to_secret, "unsafe_path"),
    "a file in the disk cache": (cache_file, "unsafe_path"),
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
    assert got["extracted"] == 1
    assert "a1/raw/response.zip" in inbound(project, ids)


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
