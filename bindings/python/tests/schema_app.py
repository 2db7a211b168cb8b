"""A stdio test server whose tools exercise schema derivation: ``Annotated`` metadata, ``Enum``
and ``Literal``, and arguments the schema lets through but a parameter's type refuses."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, List, Literal

from mcpcore import Server

server = Server("schema-app", "1.0.0")


class Mode(str, enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@server.tool()
def pick(mode: Mode, level: Level, size: Literal[1, 2, 3], color: Color = Color.RED) -> str:
    """Enum members arrive as members."""
    return f"{mode!r} {level!r} {size} {color!r}"


@dataclass
class Point:
    x: int
    y: int


@server.tool()
def norm1(p: Point) -> int:
    """A dataclass argument."""
    return abs(p.x) + abs(p.y)


@server.prompt()
def greet(name: Annotated[str, "Who to greet"]) -> str:
    return f"Hello, {name}!"


try:
    import annotated_types as at
except ImportError:  # pragma: no cover - comes with pydantic
    at = None

if at is not None:

    @server.tool()
    def bounded(
        name: Annotated[str, "Who to greet", at.MinLen(1), at.MaxLen(8)],
        times: Annotated[int, at.Interval(ge=1, lt=5)] = 1,
        tags: Annotated[List[str], at.MaxLen(2), "At most two tags"] = [],  # noqa: B006
        step: Annotated[float, at.MultipleOf(0.5), at.Gt(0)] = 0.5,
    ) -> str:
        """annotated_types constraints (no pydantic object involved)."""
        return f"{name}x{times} {tags} {step}"


try:
    import pydantic
except ImportError:  # pragma: no cover - pydantic is optional
    pydantic = None

if pydantic is not None:
    from pydantic import Field, field_validator

    @server.tool()
    def fielded(
        count: Annotated[int, Field(description="How many", ge=0, le=10)],
        code: Annotated[str, Field(pattern="^[a-z]+$", min_length=2, max_length=4)],
        ratio: Annotated[float, Field(gt=0, lt=1, description="A fraction")] = 0.5,
    ) -> str:
        """pydantic Field metadata."""
        return f"{count} {code} {ratio}"

    @server.tool()
    def field_defaults(
        count: int = Field(description="How many", ge=1),
        label: str = Field(default="x", max_length=3),
        items: List[int] = Field(default_factory=list),
    ) -> str:
        """FastMCP's spelling: a Field as the parameter's default."""
        return f"{count} {label} {items}"

    class Order(pydantic.BaseModel):
        qty: int
        note: Annotated[str, Field(description="Free text", max_length=20)] = ""

        @field_validator("qty")
        @classmethod
        def positive(cls, v: int) -> int:
            if v <= 0:
                raise ValueError("qty must be positive")
            return v

    @server.tool()
    def place(order: Annotated[Order, Field(description="The order")]) -> str:
        """A pydantic model whose validator is stricter than its schema."""
        return f"placed {order.qty}"


if __name__ == "__main__":
    server.run_stdio()
