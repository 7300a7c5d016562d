"""The tree as read: derived status, verdicts and their disk cache, writer claims, queries and waits."""
