"""A server written with the MCP Python SDK's high-level API (`MCPServer`, which was `FastMCP`
before mcp 2) whose tools take and give pydantic types: nested models, an enum, optional
fields, lists, a bounded integer, a tool that raises, and tools that ask the client while they
run (a person through `elicitation/create`, a model through `sampling/createMessage`). Run over stdio by
tests/reference_servers.rs, which calls its tools through toolsmith's MCP client.

The schemas are the SDK's own (pydantic's JSON Schema: `$defs` and `$ref`, `anyOf` with
`null` for an optional field, `default`s), and so is every answer: nothing here is shaped for
toolsmith.
"""

from enum import Enum

from pydantic import BaseModel, Field

from mcp import types
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

server = MCPServer("shop")


class Priority(str, Enum):
    """How soon an order must leave."""

    low = "low"
    normal = "normal"
    urgent = "urgent"


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None = None


class Customer(BaseModel):
    name: str
    address: Address
    vip: bool = False


class Line(BaseModel):
    sku: str
    quantity: int = Field(ge=1, le=100)
    unit_price: float


class Order(BaseModel):
    """An order as placed: what the server understood of its arguments."""

    customer: str
    city: str
    postcode: str | None
    vip: bool
    priority: Priority
    lines: int
    units: int
    total: float
    gift: bool
    note: str | None


@server.tool()
def place_order(
    customer: Customer,
    lines: list[Line],
    priority: Priority = Priority.normal,
    gift: bool = False,
    note: str | None = None,
) -> Order:
    """Places an order for a customer: one line per product."""
    return Order(
        customer=customer.name,
        city=customer.address.city,
        postcode=customer.address.postcode,
        vip=customer.vip,
        priority=priority,
        lines=len(lines),
        units=sum(line.quantity for line in lines),
        total=round(sum(line.quantity * line.unit_price for line in lines), 2),
        gift=gift,
        note=note,
    )


@server.tool()
def top_tags(tags: list[str], limit: int = 3, ascending: bool = False) -> list[str]:
    """The most frequent tags, most frequent first (or last, ascending), at most `limit`."""
    counts: dict[str, int] = {}
    for tag in tags:
        counts[tag] = counts.get(tag, 0) + 1
    ranked = sorted(counts, key=lambda tag: (-counts[tag], tag))[:limit]
    return list(reversed(ranked)) if ascending else ranked


@server.tool()
def withdraw(account: str, amount: float) -> str:
    """Withdraws money from an account; every account here is short of funds."""
    # A failure the tool anticipated: its words reach the client (any other exception is a
    # crash, which the SDK answers with only "Error executing tool withdraw").
    raise ToolError(f"insufficient funds in {account}: {amount:.2f} asked, 10.00 available")


class Reply(BaseModel):
    name: str
    guests: int = 1


@server.tool()
async def rsvp(event: str, ctx: Context) -> str:
    """Asks the person whether they come to an event, and with how many guests."""
    answer = await ctx.elicit(f"Are you coming to {event}?", schema=Reply)
    if answer.action == "accept":
        return f"{answer.data.name} comes to {event} with {answer.data.guests} guests"
    return f"no answer for {event} ({answer.action})"


@server.tool()
async def survey(questions: int, ctx: Context) -> str:
    """Asks the person up to `questions` questions in a row, until one is refused."""
    answered = 0
    for n in range(questions):
        try:
            await ctx.elicit(f"Question {n + 1}?", schema=Reply)
        except MCPError as refusal:
            return f"{answered} answered, then refused: {refusal}"
        answered += 1
    return f"{answered} answered"


@server.tool()
async def tagline(product: str, ctx: Context) -> str:
    """Asks the client's model for a product's tagline."""
    result = await ctx.session.create_message(
        messages=[
            types.SamplingMessage(
                role="user", content=types.TextContent(type="text", text=f"A tagline for {product}")
            )
        ],
        max_tokens=30,
        system_prompt="One line.",
    )
    return f"{result.content.text} (by {result.model})"


if __name__ == "__main__":
    server.run("stdio")
