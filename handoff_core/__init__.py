"""handoff_core: the handoff file contract and the services built on it (no MCP in here).

Layers, each importing only from the ones before it (``tests/test_layering.py`` pins this):

``errors``, ``layout``
    every refusal with its stable code; every file name, folder, heading, default and closed
    vocabulary of the contract.
``contract``
    the formats, text in and values out: ids, Markdown and frontmatter, TASK, REPORT, RELEASE,
    session-locator.json, change README, and the validator's judgement of a task snapshot.
``files``
    the file mechanics: confinement by directory handle, write-once publishing, reading a task's
    files into a snapshot, round and task allocation, a task directory's handle.
``services``
    the use cases: the store (writes), queries (reads, status, claims), ownership, report view,
    session logs, session handoffs, coordination, report tokens, waiting for arrivals.
``validator``
    the ``handoff-validate`` command (a drop-in for the seed's ``validate-handoff.mjs``).

Glossary:

change
    ``specdev/changes/{change}/``, a unit of work with ``Outcome: active|completed|cancelled``.
round
    one orchestration round, ``sessions/{session}/``; its id is the field the files call
    ``session`` (``20261130T044500Z``), so in code ``session`` always means a round id.
task
    one dispatch, ``{session}/{task}/`` holding TASK.md, REPORT.md, session-locator.json and
    RELEASE.md; ``Ref`` names it as ``change/session/task``.
session log
    the executor's own transcript (Claude Code or Codex JSONL) that session-locator.json points
    at; ``services.session_logs``.
session handoff
    a session-to-session document under ``commands/handoff/``; ``services.session_handoff``
    (the ``write_handoff`` tool). Not a task's REPORT, which ``services.report_view`` reads back
    (the ``read_handoff`` tool).
"""
