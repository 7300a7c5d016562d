"""The tool modules, one per group of tools: each tool a module-level function whose ``Services`` the SDK
resolves (``registration.ServicesArg``); each module's ``tools()`` lists its group."""
