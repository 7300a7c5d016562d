"""Report tokens: a capability for one task's REPORT, and the index from a token to its task."""
