"""Use cases on one state root: the store writes, queries read; the rest build on those two."""
