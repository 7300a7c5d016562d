"""Executor session logs read, never written: confirmed, found by id, searched by keywords."""
