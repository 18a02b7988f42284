"""Drives `toolsmith mcp` with the official MCP Python SDK's client and prints what it saw.

Usage: mcp_client.py [--legacy] CALLS_JSON COMMAND [ARG...]

The client launches COMMAND as its stdio server, lists the tools, makes each call of CALLS_JSON
(a JSON array of [name, arguments]) in order, and leaves (closing the server's stdin). Prints one
JSON object: the names listed, each call's outcome (a result, or the protocol error the client
raised), and what the server asked the client's person and model meanwhile. The person accepts
every form with `ANSWER` (a name and two guests); the model repeats the last message. By
default the client negotiates as it does out of the box; `--legacy` forces the `initialize`
handshake. The Rust test that runs this script (mcp_python.rs) holds the assertions.
"""

import asyncio
import json
import sys

from mcp import Client, MCPError, StdioServerParameters, types

# What the person answers every form with.
ANSWER = {"name": "Ada", "guests": 2}


async def call(client, name, arguments):
    try:
        result = await client.call_tool(name, arguments)
    except MCPError as error:
        return {"protocol_error": {"code": error.code, "message": error.message}}
    return {
        "is_error": bool(result.is_error),
        "text": "".join(block.text for block in result.content if block.type == "text"),
    }


async def drive(server, calls, mode):
    report = {"asked": [], "sampled": []}

    async def on_elicit(context, params):
        report["asked"].append(params.message)
        return types.ElicitResult(action="accept", content=ANSWER)

    async def on_sample(context, params):
        prompt = params.messages[-1].content.text
        report["sampled"].append(prompt)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo: {prompt}"),
            model="echo-1",
            stopReason="endTurn",
        )

    async with Client(
        server,
        raise_exceptions=True,
        mode=mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
    ) as client:
        report["protocol_version"] = client.session.protocol_version
        listed = await client.list_tools()
        report["tools"] = [tool.name for tool in listed.tools]
        report["calls"] = [await call(client, name, arguments) for name, arguments in calls]
    return report


def main():
    args = sys.argv[1:]
    mode = "auto"
    if args and args[0] == "--legacy":
        mode, args = "legacy", args[1:]
    calls, command, *rest = args
    server = StdioServerParameters(command=command, args=rest)
    print(json.dumps(asyncio.run(drive(server, json.loads(calls), mode))))


if __name__ == "__main__":
    main()
