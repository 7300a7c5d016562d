"""The tool modules, one per group of tools: each tool a module-level function whose ``Services`` the SDK
resolves (``registration.ServicesArg``); each module's ``tools()`` lists its group.

A tool module imports at its top what its tools' signatures name, and the core services a body calls
inside that body: a server lists its tools before any is called, and its ``tools/list`` answer waits
for every import at the top (the bench's start-up target, within 1.15x a minimal MCPServer)."""
