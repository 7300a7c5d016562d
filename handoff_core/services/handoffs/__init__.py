"""Session-to-session handoff documents, written through the store."""
