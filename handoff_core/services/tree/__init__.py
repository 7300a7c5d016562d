"""The tree as read: derived status, held verdicts, writer claims, queries and waits."""
