"""Acceptance that cannot be faked: a task's checks replayed at its reported checkpoint, contained as an executor is."""
