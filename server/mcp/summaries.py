"""Short text blocks for tools whose answer is large: the answer goes once, in structuredContent.

A client that reads only the text still gets what it needs to act: the counts, the writer slots,
each task of the page by state and ref (``read_task`` or ``validate_handoff`` tells the rest), and
the cursor of the next page.
"""

from __future__ import annotations

from typing import Any

__all__ = ["status_summary"]


def status_summary(answer: dict[str, Any]) -> str:
    """``handoff_status`` in a few lines: counts, slots, one line per task of the page, the cursor."""
    counts = ", ".join(f"{state} {count}" for state, count in sorted(answer["counts"].items())) or "no tasks"
    lines = [f"counts: {counts}"]
    if answer.get("unjudged"):
        lines.append(f"unjudged: {answer['unjudged']} (counted from file headers, judged after this answer)")
    lines.append(answer.get("writers") or f"free writer slots: {answer['free_writer_slots']}")
    tasks = answer["tasks"]
    lines.append(f"tasks on this page: {len(tasks)}, under their round (ref = round/task)")
    lines += _task_lines(tasks)
    if answer.get("next_cursor"):
        lines.append(f"next page: view={answer['next_cursor']}")
    lines += [f"{key}: {answer[key]}" for key in ("events",) if answer.get(key)]
    lines += [f"external: {item}" for item in answer.get("external", ())]
    lines.append("the full answer is this result's structuredContent")
    return "\n".join(lines)


def _task_lines(tasks: list[dict[str, Any]]) -> list[str]:
    """One line per task under a line naming its change/round, which a page shares among many tasks."""
    lines: list[str] = []
    heading = ""
    for task in tasks:
        change_round, _, name = task["ref"].rpartition("/")
        if change_round != heading:
            heading = change_round
            lines.append(f"{change_round}/")
        extras = [task[key] for key in ("kind", "claim", "proof", "audit") if task.get(key)]
        if task.get("problems"):
            extras.append(f"{len(task['problems'])} problems")
        lines.append(" ".join([f"- {task['state']} {name}", *extras]))
    return lines
