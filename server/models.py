"""Wire shapes of the tool results (their output schemas). Kept flat and small on purpose."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def _untitled(schema: dict[str, Any]) -> None:
    """Titles repeat the field names; dropping them keeps tools/list small for the model's context."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)


class Wire(BaseModel):
    model_config = ConfigDict(json_schema_extra=_untitled)


class ExecutorConfig(Wire):
    claude_code_mcp_json: str = Field(description="JSON for `claude --mcp-config`")
    codex_args: list[str] = Field(description="`codex` -c arguments")
    codex_config_toml: str = Field(description="~/.codex/config.toml entry")


class CreatedTask(Wire):
    ref: str
    task_path: str
    task_path_in_project: str
    report_path_in_project: str
    task_sha256: str
    report_token: str
    dispatch_message: str
    executor_config: ExecutorConfig


class TaskView(Wire):
    ref: str
    kind: str
    goal: str
    inputs: str
    workspace: str | None
    writable: list[str]
    read_only: list[str]
    shared: list[str]
    artifacts: list[str]
    scope_notes: str
    acceptance: str
    return_notes: str
    report_path_in_project: str
    ticket: str | None
    task_sha256: str
    task_path: str


class Written(Wire):
    ref: str
    path: str
    sha256: str
    created: bool = Field(description="false: identical content was already there")


class ReportWritten(Written):
    reply_line: str = Field(description="send this one line back through your native channel")
    warnings: list[str]


class Validation(Wire):
    ref: str
    stage: str
    ok: bool
    errors: list[str]
    warnings: list[str]
    caveat: str


class TaskState(Wire):
    ref: str
    kind: str | None
    state: str
    age_seconds: float
    workspace: str | None
    writable: list[str]
    has_locator: bool
    temp_files: list[str]
    problems: list[str]


class Status(Wire):
    tasks: list[TaskState]
    writer_claims: list[str]
    free_writer_slots: int


class Waited(Wire):
    arrived: list[str] = Field(description="'ref FILE' for each task that got a REPORT.md or RELEASE.md")
    pending: list[str]
    timed_out: bool
    waited_seconds: float
