"""The store, the one way in for writes, and the workspace a task is pinned to at dispatch."""
