"""Drives a toolsmith MCP server with the official MCP Python SDK's client and prints what it saw.

Usage: mcp_client.py stdio COMMAND [ARG...]   (the client launches the server)
       mcp_client.py stdio-legacy COMMAND [ARG...]   (the same, with the initialize handshake)
       mcp_client.py http URL   (sending `Authorization: Bearer ada`, which the server reads)
       mcp_client.py http-legacy URL   (the same, with the initialize handshake)

By default the client negotiates as it does out of the box (probing `server/discover`, then the
newest protocol both sides speak); `stdio-legacy` forces the pre-2026 `initialize` handshake.

Prints one JSON object: the negotiated protocol version, the tools as listed, and the outcome of
each call (a result, or the protocol error the client raised), with the progress and log
notifications the client's callbacks received. The Rust test that runs this script
(python_client.rs) holds the assertions.
"""

import asyncio
import json
import sys

import anyio
import httpx2
from mcp import Client, MCPError, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client

# How long the script waits for anything the server should do at once.
PATIENCE = 30


def outcome(result):
    return {
        "is_error": bool(result.is_error),
        "text": "".join(block.text for block in result.content if block.type == "text"),
        "structured": result.structured_content,
    }


async def call(client, name, arguments, **options):
    try:
        return outcome(await client.call_tool(name, arguments, **options))
    except MCPError as error:
        return {"protocol_error": {"code": error.code, "message": error.message, "data": error.data}}


async def progress_of(client):
    """The progress notifications of one call, as the client's progress callback saw them."""
    seen = []

    async def on_progress(progress, total, message):
        seen.append({"progress": progress, "total": total, "message": message})

    result = await call(client, "count_to", {"n": 3}, progress_callback=on_progress)
    # Sent before the answer; the SDK runs each callback as a task of its own, which may still
    # be on its way when the call returns.
    await anyio.sleep(0.3)
    return {"result": result, "seen": seen}


async def cancelled_call(client):
    """Starts `hold`, cancels it once the tool has said it started, then asks the server how many
    more cancellations its tools saw than before (until one more is seen, for a while: the count
    is the server process's, which may serve other clients first)."""
    before = int((await call(client, "cancellations", {}))["text"])
    started = anyio.Event()

    async def on_progress(progress, total, message):
        started.set()

    async def hold():
        await client.call_tool("hold", {}, progress_callback=on_progress)

    with anyio.fail_after(PATIENCE):
        async with anyio.create_task_group() as group:
            group.start_soon(hold)
            await started.wait()
            group.cancel_scope.cancel()
    seen = None
    with anyio.move_on_after(PATIENCE):
        while seen != "1":
            seen = str(int((await call(client, "cancellations", {}))["text"]) - before)
            if seen != "1":
                await anyio.sleep(0.02)
    return {"cancellations_seen": seen, "after": await call(client, "add", {"a": 1, "b": 1})}


async def logs_of(client, seen, **options):
    """The log messages the client's logging callback received during one call of `chatty`."""
    seen.clear()
    result = await call(client, "chatty", {}, **options)
    # As for progress: the callbacks' tasks may still be on their way when the call returns.
    await anyio.sleep(0.3)
    return {"result": result, "seen": [[m.level, m.logger, m.data] for m in seen]}


async def on_elicit(context, params):
    """A person who answers every question: with a name, and the bag count as text."""
    questions.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
    return types.ElicitResult(action="accept", content={"name": "Ada", "bags": "2"})


async def on_sample(context, params):
    """A model that repeats the last message it was given."""
    samplings.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
    prompt = params.messages[-1].content.text
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"short: {prompt}"),
        model="echo-1",
        stopReason="endTurn",
    )


# What the client's callbacks were asked.
questions = []
samplings = []


async def drive(server, mode):
    report = {}
    logged = []

    async def on_log(params):
        logged.append(params)

    async with Client(
        server,
        raise_exceptions=True,
        mode=mode,
        logging_callback=on_log,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
    ) as client:
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
        report["async_call"] = await call(client, "shout", {"text": "hello"})
        report["progress"] = await progress_of(client)
        report["cancelled"] = await cancelled_call(client)
        media = await client.call_tool("media", {})
        report["media"] = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in media.content]
        report["whoami"] = await call(client, "whoami", {})
        report["book"] = await call(client, "book", {})
        report["asked"] = questions
        report["summarize"] = await call(client, "summarize", {"text": "the sky is blue"})
        report["sampled"] = samplings
        report["plan_trip"] = await call(client, "plan_trip", {})
        # Last: on a handshake-era connection, the level set stays for the rest of it.
        report["logs"] = await logs_of(client, logged)
        if client.session.protocol_version == "2026-07-28":
            asked = {"meta": {"io.modelcontextprotocol/logLevel": "warning"}}
            report["logs_at_warning"] = await logs_of(client, logged, **asked)
        else:
            await client.set_logging_level("warning")
            report["logs_at_warning"] = await logs_of(client, logged)
    return report


async def whoami_without_header(url):
    async with Client(url, raise_exceptions=True) as client:
        return await call(client, "whoami", {})


def main():
    transport, *rest = sys.argv[1:]
    mode = "auto"
    if transport in ("stdio-legacy", "http-legacy"):
        transport, mode = transport.split("-")[0], "legacy"
    if transport == "stdio":
        report = asyncio.run(drive(StdioServerParameters(command=rest[0], args=rest[1:]), mode))
    elif transport == "http":
        url = rest[0]
        http = httpx2.AsyncClient(headers={"Authorization": "Bearer ada"}, timeout=PATIENCE)
        report = asyncio.run(drive(streamable_http_client(url, http_client=http), mode))
        report["whoami_without_header"] = asyncio.run(whoami_without_header(url))
    else:
        raise SystemExit(f"unknown transport {transport!r}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
