"""The pure rules every writer is judged by: single-writer ownership and the scope of one written path."""
