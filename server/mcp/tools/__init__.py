"""The tool modules, one per group of tools; each exposes ``tools(services) -> list[Tool]``."""
