"""Drives `toolsmith mcp` with the official MCP Python SDK's client and prints what it saw.

Usage: mcp_client.py CALLS_JSON COMMAND [ARG...]

The client launches COMMAND as its stdio server, lists the tools, makes each call of CALLS_JSON
(a JSON array of [name, arguments]) in order, and leaves (closing the server's stdin). Prints one
JSON object: the names listed, and each call's outcome (a result, or the protocol error the
client raised). The Rust test that runs this script (mcp_python.rs) holds the assertions.
"""

import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters


async def call(client, name, arguments):
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as error:
        return {"protocol_error": {"code": error.code, "message": error.message}}
    return {
        "is_error": bool(result.is_error),
        "text": "".join(block.text for block in result.content if block.type == "text"),
    }


async def drive(server, calls):
    report = {}
    async with Client(server, raise_exceptions=True) as client:
        listed = await client.list_tools()
        report["tools"] = [tool.name for tool in listed.tools]
        report["calls"] = [await call(client, name, arguments) for name, arguments in calls]
    return report


def main():
    calls, command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args)
    print(json.dumps(asyncio.run(drive(server, json.loads(calls)))))


if __name__ == "__main__":
    main()
