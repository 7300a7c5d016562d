from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from handoff_core.errors import InvalidContent
from handoff_core.services.handoffs import session_handoff as handoff_doc
from handoff_core.services.handoffs.session_handoff import HandoffDoc
from handoff_core.services.secrets.secret_scan import redact, scan
from handoff_core.services.writing.store import Store
from tests.support.secret_forms import FORMS

FOCUS = "Built the parser. Kept YAML strict. Stopped before the CLI. Next: wire the CLI."
SECRETS = {
    "aws": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "github": "token ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "private key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "password": 'password = "hunter2hunter2"',
}
KINDS = {"aws": "AWS Access Key", "github": "GitHub Token", "private key": "Private Key", "password": "Secret Keyword"}


@pytest.fixture
def dated(state_root: Path, project: Path) -> Store:
    (project / "src").mkdir()
    (project / "src" / "parser.py").write_text("x = 1\n")
    return Store(state_root, project, clock=lambda: datetime(2026, 11, 30, 9, 0, tzinfo=UTC))


def doc(**overrides: object) -> HandoffDoc:
    fields: dict[str, Any] = {
        "scope": "core",
        "topic": "parser",
        "focused": FOCUS,
        "references": ("src/parser.py",),
        "skills": ("python-testing",),
    }
    fields.update(overrides)
    return HandoffDoc(**fields)


def test_numbering_is_plain_first_then_two_digit_suffixes(dated: Store) -> None:
    names = [handoff_doc.publish(dated, doc()).path.name for _ in range(3)]
    assert names == ["2026-11-30-core-parser.md", "2026-11-30-core-parser-01.md", "2026-11-30-core-parser-02.md"]


def test_the_document_opens_with_the_focused_handoff_and_lists_references(dated: Store) -> None:
    text = handoff_doc.publish(dated, doc()).path.read_text()
    assert text.index("## 聚焦交接") < text.index("## 引用")
    assert "- `src/parser.py`" in text
    assert "- python-testing" in text


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_a_secret_is_refused_with_its_location(dated: Store, name: str) -> None:
    with pytest.raises(InvalidContent) as caught:
        handoff_doc.publish(dated, doc(details=f"Context line.\n{SECRETS[name]}"))
    assert f"details line 2: {KINDS[name]}" in caught.value.message
    assert not (dated.roots.state_root / "commands").exists()


def test_secrets_are_redacted_when_asked(dated: Store) -> None:
    details = "\n".join(SECRETS.values())
    text = handoff_doc.publish(dated, doc(details=details), redact_secrets=True).path.read_text()
    for secret in ("AKIAIOSFODNN7EXAMPLE", "ghp_1234567890", "MIIEowIBAAKCAQEA", "hunter2hunter2"):
        assert secret not in text
    assert "[REDACTED]" in text


def test_ordinary_engineering_text_is_not_mistaken_for_a_secret(dated: Store) -> None:
    details = "Ran `pytest -q`: 12 passed. Commit 9f2c1ab. See src/parser.py and docs/plan.md."
    assert handoff_doc.publish(dated, doc(details=details)).path.exists()


@pytest.mark.parametrize(
    "overrides",
    [
        {"references": ("src/missing.py",)},
        {"references": ("../outside.py",)},
        {"references": ("/etc/passwd",)},
        {"focused": "Too short."},
        {"scope": "Core"},
        {"topic": "a/b"},
        {"skills": ("two\nlines",)},
    ],
)
def test_bad_documents_are_refused(dated: Store, overrides: dict[str, object]) -> None:
    with pytest.raises(InvalidContent):
        handoff_doc.publish(dated, doc(**overrides))


GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def test_redaction_covers_skills_and_references_too(dated: Store, project: Path) -> None:
    (project / f"notes-{AWS}.md").write_text("x")
    published = handoff_doc.publish(
        dated, doc(skills=(f"use token {GHP}",), references=(f"notes-{AWS}.md",)), redact_secrets=True
    )
    text = published.path.read_text()
    assert GHP not in text
    assert AWS not in text
    assert text.count("[REDACTED]") == 2


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_a_lone_carriage_return_does_not_hide_a_secret_from_redaction(dated: Store, newline: str) -> None:
    details = f"First line.{newline}Second line.{newline}token {GHP}"
    text = handoff_doc.publish(dated, doc(details=details), redact_secrets=True).path.read_text()
    assert GHP not in text
    assert "Second line." in text


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        ("key sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3k", "Current API Key"),
        ("sk-ant-api03-" + "Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg-Hj_KlLkJhGfDsAqW", "Current API Key"),
        ("maps key AIza" + "SyD1e2F3g4H5i6J7k8L9m0NoPqRsTuVwXyZ", "Current API Key"),
        ("DATABASE_URL=postgres://app:Sup3rS3cret@db.internal:5432/app", "Credentials in URL"),
        ("config:\n  db:\n    password: hunter2correcthorse", "Password Field"),
    ],
)
def test_current_key_formats_are_found(secret: str, kind: str) -> None:
    assert kind in {finding.kind for finding in scan("details", secret)}


def test_ordinary_prose_about_passwords_is_not_a_secret() -> None:
    assert scan("details", "We discussed the password policy: see the docs. The api key rotation is weekly.") == []


def test_the_scan_never_writes_the_text_to_a_temporary_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None
    try:
        found = scan("details", f"token {GHP}")
    finally:
        tempfile.tempdir = None
    assert [f.kind for f in found] == ["GitHub Token"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("scope", "topic"), [("lead\n", "parser"), ("core", "parser\n"), ("core", "pärser")])
def test_a_name_part_with_a_trailing_newline_or_non_ascii_is_refused(dated: Store, scope: str, topic: str) -> None:
    with pytest.raises(InvalidContent):
        handoff_doc.publish(dated, doc(scope=scope, topic=topic))
    assert not (dated.roots.state_root / "commands").exists()


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_of_twenty_common_secret_forms_is_found_and_redacted(name: str) -> None:
    text, secret = FORMS[name]
    found = scan("details", f"Context line.\n{text}")
    assert found, name
    assert secret not in redact(f"Context line.\n{text}", found)


def test_the_scan_leaves_detect_secrets_settings_as_it_found_them() -> None:
    from detect_secrets.settings import get_settings

    before = (dict(get_settings().plugins), dict(get_settings().filters))
    assert scan("details", FORMS["shell export"][0])
    assert (dict(get_settings().plugins), dict(get_settings().filters)) == before
