"""Tool Schema Profile 1: compile authored schemas, evaluate with a budget (docs/schema.md)."""

from mcpkit.schema._compile import KEYWORDS as KEYWORDS
from mcpkit.schema._compile import HeaderDeclaration as HeaderDeclaration
from mcpkit.schema._compile import ToolSchema as ToolSchema
from mcpkit.schema._compile import compile_schema as compile_schema
from mcpkit.schema._evaluate import EvaluationGate as EvaluationGate
from mcpkit.schema._evaluate import Outcome as Outcome

__all__ = (
    "KEYWORDS",
    "EvaluationGate",
    "HeaderDeclaration",
    "Outcome",
    "ToolSchema",
    "compile_schema",
)
