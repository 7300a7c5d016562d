"""The HTTP interfaces: the team server (streamable HTTP for executors elsewhere) and the live board."""
