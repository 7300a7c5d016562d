"""The project's coordination choice: resolved for a work and stage, saved as first setup says."""
