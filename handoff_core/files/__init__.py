"""File mechanics: confinement by directory handle, write-once publishing, reading, allocation.

OS errors become ``StorageError`` at this layer's edge (``task_dir.translated``).
"""
