"""The MCP Python SDK's server with the tool the `mcp` benchmark calls: `add`, two integers.

Run by benches/mcp.rs over stdio, as the peer the toolsmith server is compared against.
"""

from mcp.server import MCPServer

server = MCPServer("python-peer")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


if __name__ == "__main__":
    server.run("stdio")
