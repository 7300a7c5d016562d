from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from handoff_core.errors import InvalidContent
from handoff_core.services import session_handoff as handoff_doc
from handoff_core.services.session_handoff import HandoffDoc
from handoff_core.services.store import Store

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
    fields: dict[str, object] = {
        "scope": "core",
        "topic": "parser",
        "focused": FOCUS,
        "references": ("src/parser.py",),
        "skills": ("python-testing",),
    }
    fields.update(overrides)
    return HandoffDoc(**fields)  # type: ignore[arg-type]


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
