"""Drives a toolsmith MCP server with the official MCP Python SDK's client and prints what it saw.

Usage: mcp_client.py stdio COMMAND [ARG...]   (the client launches the server)
       mcp_client.py stdio-legacy COMMAND [ARG...]   (the same, with the initialize handshake)
       mcp_client.py http URL

By default the client negotiates as it does out of the box (probing `server/discover`, then the
newest protocol both sides speak); `stdio-legacy` forces the pre-2026 `initialize` handshake.

Prints one JSON object: the negotiated protocol version, the tools as listed, and the outcome of
each call (a result, or the protocol error the client raised). The Rust test that runs this
script (python_client.rs) holds the assertions.
"""

import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters


def outcome(result):
    return {
        "is_error": bool(result.is_error),
        "text": "".join(block.text for block in result.content if block.type == "text"),
        "structured": result.structured_content,
    }


async def call(client, name, arguments):
    try:
        return outcome(await client.call_tool(name, arguments))
    except MCPError as error:
        return {"protocol_error": {"code": error.code, "message": error.message, "data": error.data}}


async def drive(server, mode):
    report = {}
    async with Client(server, raise_exceptions=True, mode=mode) as client:
        report["protocol_version"] = client.session.protocol_version
        listed = await client.list_tools()
        report["tools"] = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]
        report["call"] = await call(client, "add", {"a": 2, "b": "40"})
        report["structured_call"] = await call(client, "forecast", {"city": "Oslo"})
        report["bad_arguments"] = await call(client, "add", {"a": 1, "c": 2})
        report["failing_tool"] = await call(client, "refuse", {"reason": "no quota left"})
        report["panicking_tool"] = await call(client, "explode", {})
        report["unknown_tool"] = await call(client, "ad", {"a": 1, "b": 2})
        # Four calls that each wait until all four are inside the server at once.
        report["parallel"] = await asyncio.gather(*(call(client, "rendezvous", {"group": 4}) for _ in range(4)))
        report["after_errors"] = await call(client, "add", {"a": 1, "b": 1})
    return report


def main():
    transport, *rest = sys.argv[1:]
    mode = "auto"
    if transport == "stdio-legacy":
        transport, mode = "stdio", "legacy"
    if transport == "stdio":
        server = StdioServerParameters(command=rest[0], args=rest[1:])
    elif transport == "http":
        server = rest[0]
    else:
        raise SystemExit(f"unknown transport {transport!r}")
    print(json.dumps(asyncio.run(drive(server, mode))))


if __name__ == "__main__":
    main()
