"""Tool Schema Profile 1 (docs/design/schema.md): compile authored schemas, evaluate them with a
budget, derive them from Python types, bind validated arguments and check typed output."""

from mcpkit.schema._compile import KEYWORDS as KEYWORDS
from mcpkit.schema._compile import HeaderDeclaration as HeaderDeclaration
from mcpkit.schema._compile import ToolSchema as ToolSchema
from mcpkit.schema._compile import compile_schema as compile_schema
from mcpkit.schema._evaluate import EvaluationGate as EvaluationGate
from mcpkit.schema._evaluate import Outcome as Outcome
from mcpkit.schema._typed import InputModel as InputModel
from mcpkit.schema._typed import OutputModel as OutputModel
from mcpkit.schema._typed import derive_input as derive_input
from mcpkit.schema._typed import derive_output as derive_output
from mcpkit.schema._typeinfo import Arg as Arg
from mcpkit.schema._typeinfo import Int8 as Int8
from mcpkit.schema._typeinfo import Int16 as Int16
from mcpkit.schema._typeinfo import Int32 as Int32
from mcpkit.schema._typeinfo import Int64 as Int64
from mcpkit.schema._typeinfo import Width as Width

__all__ = (
    "KEYWORDS",
    "Arg",
    "EvaluationGate",
    "HeaderDeclaration",
    "InputModel",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "Outcome",
    "OutputModel",
    "ToolSchema",
    "Width",
    "compile_schema",
    "derive_input",
    "derive_output",
)
