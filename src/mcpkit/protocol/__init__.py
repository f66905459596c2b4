"""The protocol layer (layer 4, beside ``mcpkit.model``): the revision table, per-revision
projection of model values to the wire, and the static catalog pages.

Everything here is a pure function or an immutable value over bytes and model values: no event
loop, no socket.  Revision differences live only in ``profile(revision)``.
"""

from mcpkit.protocol._catalog import DEFAULT_PAGE_SIZE as DEFAULT_PAGE_SIZE
from mcpkit.protocol._catalog import Catalog as Catalog
from mcpkit.protocol._catalog import ListKind as ListKind
from mcpkit.protocol._envelope import Envelope as Envelope
from mcpkit.protocol._envelope import MessageKind as MessageKind
from mcpkit.protocol._envelope import parse_envelope as parse_envelope
from mcpkit.protocol._envelope import readable_id as readable_id
from mcpkit.protocol._error_map import HandlerFailure as HandlerFailure
from mcpkit.protocol._error_map import wire_error as wire_error
from mcpkit.protocol._fixed_results import discover_result as discover_result
from mcpkit.protocol._fixed_results import empty_result as empty_result
from mcpkit.protocol._fixed_results import initialize_result as initialize_result
from mcpkit.protocol._fixed_results import server_capabilities as server_capabilities
from mcpkit.protocol._messages import error_message as error_message
from mcpkit.protocol._messages import error_object as error_object
from mcpkit.protocol._messages import notification_message as notification_message
from mcpkit.protocol._messages import raw_notification_message as raw_notification_message
from mcpkit.protocol._messages import raw_result_message as raw_result_message
from mcpkit.protocol._messages import request_message as request_message
from mcpkit.protocol._messages import result_message as result_message
from mcpkit.protocol._messages import sse_event as sse_event
from mcpkit.protocol._mirroring import check_mirrored_headers as check_mirrored_headers
from mcpkit.protocol._projection import SERVER_INFO_KEY as SERVER_INFO_KEY
from mcpkit.protocol._projection import call_tool_result as call_tool_result
from mcpkit.protocol._projection import get_prompt_result as get_prompt_result
from mcpkit.protocol._projection import implementation_info as implementation_info
from mcpkit.protocol._projection import prompt_definition as prompt_definition
from mcpkit.protocol._projection import read_resource_result as read_resource_result
from mcpkit.protocol._projection import resource_definition as resource_definition
from mcpkit.protocol._projection import tool_definition as tool_definition
from mcpkit.protocol._request_meta import META_KEY as META_KEY
from mcpkit.protocol._request_meta import PROTOCOL_VERSION_KEY as PROTOCOL_VERSION_KEY
from mcpkit.protocol._request_meta import LogLevel as LogLevel
from mcpkit.protocol._request_meta import RequestMeta as RequestMeta
from mcpkit.protocol._request_meta import read_meta as read_meta
from mcpkit.protocol._request_meta import require_stateless as require_stateless
from mcpkit.protocol._revisions import CatalogOrder as CatalogOrder
from mcpkit.protocol._revisions import RevisionProfile as RevisionProfile
from mcpkit.protocol._revisions import profile as profile
from mcpkit.protocol._routing import NAMED_METHODS as NAMED_METHODS
from mcpkit.protocol._routing import PROTOCOL_VERSION_HEADER as PROTOCOL_VERSION_HEADER
from mcpkit.protocol._routing import HeaderFields as HeaderFields
from mcpkit.protocol._routing import accepts as accepts
from mcpkit.protocol._routing import check_method_headers as check_method_headers
from mcpkit.protocol._routing import decode_header_value as decode_header_value
from mcpkit.protocol._routing import header as header
from mcpkit.protocol._routing import media_type_ok as media_type_ok
from mcpkit.protocol._selection import is_stateless_request as is_stateless_request
from mcpkit.protocol._selection import is_stateless_version as is_stateless_version
from mcpkit.protocol._selection import negotiate as negotiate
from mcpkit.protocol._selection import select_handshake as select_handshake
from mcpkit.protocol._selection import select_stateless as select_stateless
from mcpkit.protocol._selection import supported as supported

__all__ = (
    "DEFAULT_PAGE_SIZE",
    "META_KEY",
    "NAMED_METHODS",
    "PROTOCOL_VERSION_HEADER",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "Catalog",
    "CatalogOrder",
    "Envelope",
    "HandlerFailure",
    "HeaderFields",
    "ListKind",
    "LogLevel",
    "MessageKind",
    "RequestMeta",
    "RevisionProfile",
    "accepts",
    "call_tool_result",
    "check_method_headers",
    "check_mirrored_headers",
    "decode_header_value",
    "discover_result",
    "empty_result",
    "error_message",
    "error_object",
    "get_prompt_result",
    "header",
    "implementation_info",
    "initialize_result",
    "is_stateless_request",
    "is_stateless_version",
    "media_type_ok",
    "negotiate",
    "notification_message",
    "parse_envelope",
    "profile",
    "prompt_definition",
    "raw_notification_message",
    "raw_result_message",
    "read_meta",
    "read_resource_result",
    "readable_id",
    "request_message",
    "require_stateless",
    "resource_definition",
    "result_message",
    "select_handshake",
    "select_stateless",
    "server_capabilities",
    "sse_event",
    "supported",
    "tool_definition",
    "wire_error",
)
