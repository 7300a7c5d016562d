"""Session-to-session handoff documents (SPEC §12): focused handoff first, references by path, no secrets."""

from __future__ import annotations

from dataclasses import dataclass

from handoff_core.contract.ids import TOPIC_RE
from handoff_core.contract.markdown import check_fragment
from handoff_core.contract.report import focused_problem
from handoff_core.errors import InvalidContent
from handoff_core.layout import HANDOFF_DOCS, REPORT_FOCUSED
from handoff_core.services.secrets.secret_scan import Finding, redact, scan_all
from handoff_core.services.writing.store import Store, StoredDocument

__all__ = ["HandoffDoc", "publish"]


@dataclass(kw_only=True, frozen=True)
class HandoffDoc:
    scope: str
    topic: str
    focused: str
    details: str = ""
    references: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    history: str = ""


MAX_NAME_PART = 40  # scope and topic each, so a handoff document's name stays readable


def base_name(doc: HandoffDoc, date: str) -> str:
    for value, what in ((doc.scope, "scope"), (doc.topic, "topic")):
        if not TOPIC_RE.match(value) or len(value) > MAX_NAME_PART:
            raise InvalidContent(
                f"{what} {value!r} must be lowercase letters, digits and single hyphens (≤ {MAX_NAME_PART})"
            )
    return f"{date}-{doc.scope}-{doc.topic}"


def file_name(base: str, taken: set[str]) -> str:
    """``base.md`` for the first of the day, then ``base-01.md``, ``base-02.md``…"""
    if f"{base}.md" not in taken:
        return f"{base}.md"
    number = 1
    while f"{base}-{number:02d}.md" in taken:
        number += 1
    return f"{base}-{number:02d}.md"


def _fields(doc: HandoffDoc) -> dict[str, str]:
    """Every field a secret could hide in, as the scanner reads it (a list is one item per line)."""
    return {
        "focused": doc.focused,
        "details": doc.details,
        "history": doc.history,
        "references": "\n".join(doc.references),
        "skills": "\n".join(doc.skills),
    }


def secrets_in(doc: HandoffDoc) -> list[Finding]:
    return scan_all([(name, text) for name, text in _fields(doc).items() if text.strip()])


def cleaned(doc: HandoffDoc, redact_secrets: bool) -> HandoffDoc:
    """The document with no secrets: refused (naming each finding) unless redaction is asked for."""
    findings = secrets_in(doc)
    if not findings:
        return doc
    if not redact_secrets:
        raise InvalidContent(
            "the handoff holds secrets; remove them or call again with redact=true: "
            + "; ".join(f.describe() for f in findings)
        )
    fields = {name: redact(text, [f for f in findings if f.field == name]) for name, text in _fields(doc).items()}
    return HandoffDoc(
        scope=doc.scope,
        topic=doc.topic,
        focused=fields["focused"],
        details=fields["details"],
        references=tuple(fields["references"].split("\n")) if doc.references else (),
        skills=tuple(fields["skills"].split("\n")) if doc.skills else (),
        history=fields["history"],
    )


def render(doc: HandoffDoc, date: str) -> str:
    focused = check_fragment(doc.focused, "focused handoff")
    if (problem := focused_problem(focused)) is not None:
        raise InvalidContent(f"{problem}: say what was done, key decisions, the stop point and the next step")
    listed = [("## 引用", [f"- `{ref}`" for ref in doc.references]), ("## 建议技能", [f"- {s}" for s in doc.skills])]
    lines = [f"# 交接：{doc.scope} / {doc.topic}", "", f"Date: {date}", "", f"## {REPORT_FOCUSED}", focused, ""]
    lines += ["## 详情", check_fragment(doc.details, "details") if doc.details.strip() else "无", ""]
    for heading, items in listed:
        lines += [heading, *(items or ["无"]), ""]
    lines += ["## 历史会话", check_fragment(doc.history, "history") if doc.history.strip() else "无", ""]
    return "\n".join(lines)


def publish(store: Store, doc: HandoffDoc, redact_secrets: bool = False) -> StoredDocument:
    """Check references and secrets, render, and publish under the day's next free name."""
    for reference in doc.references:
        if not reference.isprintable() or not store.queries.project_has(reference):
            raise InvalidContent(f"reference {reference!r} does not exist in the project; reference real paths only")
    for skill in doc.skills:
        if not skill.strip() or not skill.isprintable():
            raise InvalidContent("each suggested skill is one non-empty line")
    doc = cleaned(doc, redact_secrets)
    day = store.clock().strftime("%Y-%m-%d")
    base = base_name(doc, day)
    return store.publish_new(HANDOFF_DOCS, lambda taken: file_name(base, taken), render(doc, day).encode())
