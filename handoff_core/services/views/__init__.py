"""What every surface shows, built once: the status of each task with its evidence, rendered by each interface."""
