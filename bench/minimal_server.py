"""The floor for start-up: a minimal MCPServer with one tool, nothing else."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")


@server.tool()
def ping(text: str) -> str:
    """Echo the text."""
    return text


if __name__ == "__main__":
    server.run("stdio")
