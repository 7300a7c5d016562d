"""The MCP interface: a server per role, its tools, their schemas and the one place errors are translated."""
