"""Containment: an executor launched inside the kernel's sandbox drawn from its published TASK, and
the broker that publishes, from outside it, what the executor may publish."""
