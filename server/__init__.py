"""The adapter, one package per interface over the same core.

``mcp``   the MCP server: ``app`` builds a server per role from the ``tools`` modules,
          ``registration`` is the one place tools are built and their errors translated,
          ``services`` what a tool body gets.
``web``   the HTTP team server (``team``, ``auth``) and the live board (``board``, ``board_model``),
          fed by one tree ``watcher``.
``cli``   the ``handoff-mcp`` command.

Shared by all three: ``config`` (settings and roles), ``discovery`` (finding the project),
``client_config`` (a client's launch), ``client_forms`` (the configurations printed for agent CLIs,
in ``claude_config`` and ``codex_config`` forms) and ``logs``. ``cli`` and ``web``
may use ``mcp``; ``mcp`` uses neither.
"""
