"""The MCP adapter: ``app`` builds a server per role from the tool modules, ``registration`` is the
one place tools are built and their errors translated, ``services`` what a tool body gets, ``cli``
the ``handoff-mcp`` command.
"""
