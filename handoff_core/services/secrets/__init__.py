"""Secrets found in text a handoff would persist or a package would carry."""
