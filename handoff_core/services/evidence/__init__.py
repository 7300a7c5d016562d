"""The evidence layers after dispatch: the live guard and the audit of a task's actual change."""
