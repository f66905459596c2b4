"""mcpkit: a Python framework for Model Context Protocol servers.

This module is the public facade: every name here is an explicit re-export from the module that
owns it.  Subpackages that are public API in their own right (``mcpkit.json``) are imported by
their full name, for example ``import mcpkit.json``.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from mcpkit._version import __version__ as __version__
from mcpkit.errors import ArgumentsFailure as ArgumentsFailure
from mcpkit.errors import ArgumentsInvalid as ArgumentsInvalid
from mcpkit.errors import AuthorizationUnavailable as AuthorizationUnavailable
from mcpkit.errors import Cancelled as Cancelled
from mcpkit.errors import ConfigurationError as ConfigurationError
from mcpkit.errors import DeadlineExceeded as DeadlineExceeded
from mcpkit.errors import HeaderMismatch as HeaderMismatch
from mcpkit.errors import InputUnavailable as InputUnavailable
from mcpkit.errors import InsufficientScope as InsufficientScope
from mcpkit.errors import InternalError as InternalError
from mcpkit.errors import InvalidParams as InvalidParams
from mcpkit.errors import InvalidRequest as InvalidRequest
from mcpkit.errors import InvalidValueError as InvalidValueError
from mcpkit.errors import ListenQuota as ListenQuota
from mcpkit.errors import MCPKitError as MCPKitError
from mcpkit.errors import MethodNotFound as MethodNotFound
from mcpkit.errors import MissingClientCapability as MissingClientCapability
from mcpkit.errors import OutputError as OutputError
from mcpkit.errors import OutputFailure as OutputFailure
from mcpkit.errors import Overloaded as Overloaded
from mcpkit.errors import ParseError as ParseError
from mcpkit.errors import ParseFailure as ParseFailure
from mcpkit.errors import ProtectorUnavailable as ProtectorUnavailable
from mcpkit.errors import ProtocolError as ProtocolError
from mcpkit.errors import RateLimited as RateLimited
from mcpkit.errors import ReplayUnavailable as ReplayUnavailable
from mcpkit.errors import ResourceNotFound as ResourceNotFound
from mcpkit.errors import SchemaError as SchemaError
from mcpkit.errors import SessionNotFound as SessionNotFound
from mcpkit.errors import SessionQuota as SessionQuota
from mcpkit.errors import SessionRequired as SessionRequired
from mcpkit.errors import SessionStoreUnavailable as SessionStoreUnavailable
from mcpkit.errors import SubscriptionDenied as SubscriptionDenied
from mcpkit.errors import TaskInterrupted as TaskInterrupted
from mcpkit.errors import TaskNotFound as TaskNotFound
from mcpkit.errors import TaskQuota as TaskQuota
from mcpkit.errors import TaskStoreUnavailable as TaskStoreUnavailable
from mcpkit.errors import ToolError as ToolError
from mcpkit.errors import TooManySessions as TooManySessions
from mcpkit.errors import Unauthorized as Unauthorized
from mcpkit.errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion
from mcpkit.limits import DEFAULT_LIMITS as DEFAULT_LIMITS
from mcpkit.limits import Limits as Limits
from mcpkit.model import APP_MIME_TYPE as APP_MIME_TYPE
from mcpkit.model import APPS_EXTENSION as APPS_EXTENSION
from mcpkit.model import LOG_LEVELS as LOG_LEVELS
from mcpkit.model import UNSET as UNSET
from mcpkit.model import Annotations as Annotations
from mcpkit.model import AppCsp as AppCsp
from mcpkit.model import AppPermission as AppPermission
from mcpkit.model import AppResource as AppResource
from mcpkit.model import AppTool as AppTool
from mcpkit.model import AppVisibility as AppVisibility
from mcpkit.model import AudioContent as AudioContent
from mcpkit.model import BlobResourceContents as BlobResourceContents
from mcpkit.model import CachePolicy as CachePolicy
from mcpkit.model import CancellationToken as CancellationToken
from mcpkit.model import CompleteResult as CompleteResult
from mcpkit.model import Completion as Completion
from mcpkit.model import ContentBlock as ContentBlock
from mcpkit.model import ElicitationResponse as ElicitationResponse
from mcpkit.model import ElicitationValue as ElicitationValue
from mcpkit.model import EmbeddedResource as EmbeddedResource
from mcpkit.model import Endpoint as Endpoint
from mcpkit.model import EndpointBuilder as EndpointBuilder
from mcpkit.model import EndpointRegistry as EndpointRegistry
from mcpkit.model import Icon as Icon
from mcpkit.model import ImageContent as ImageContent
from mcpkit.model import Implementation as Implementation
from mcpkit.model import InputRequestDeclaration as InputRequestDeclaration
from mcpkit.model import InputRequestKind as InputRequestKind
from mcpkit.model import InputRequiredResult as InputRequiredResult
from mcpkit.model import InvocationFeatures as InvocationFeatures
from mcpkit.model import Lifespan as Lifespan
from mcpkit.model import OperationResult as OperationResult
from mcpkit.model import OperationType as OperationType
from mcpkit.model import ProgressReporter as ProgressReporter
from mcpkit.model import PromptArgument as PromptArgument
from mcpkit.model import PromptMessage as PromptMessage
from mcpkit.model import PromptOutput as PromptOutput
from mcpkit.model import PromptRegistration as PromptRegistration
from mcpkit.model import RequestContext as RequestContext
from mcpkit.model import RequestLogger as RequestLogger
from mcpkit.model import RequestStateMode as RequestStateMode
from mcpkit.model import Requirement as Requirement
from mcpkit.model import ResourceDescriptor as ResourceDescriptor
from mcpkit.model import ResourceLink as ResourceLink
from mcpkit.model import ResourceListPage as ResourceListPage
from mcpkit.model import ResourceListRegistration as ResourceListRegistration
from mcpkit.model import ResourceOutput as ResourceOutput
from mcpkit.model import ResourceRegistration as ResourceRegistration
from mcpkit.model import Revision as Revision
from mcpkit.model import Role as Role
from mcpkit.model import Root as Root
from mcpkit.model import RootsResponse as RootsResponse
from mcpkit.model import SamplingResponse as SamplingResponse
from mcpkit.model import SkillAccess as SkillAccess
from mcpkit.model import SkillAccessPolicy as SkillAccessPolicy
from mcpkit.model import SkillBundle as SkillBundle
from mcpkit.model import SkillRegistration as SkillRegistration
from mcpkit.model import TaskCreatedResult as TaskCreatedResult
from mcpkit.model import TaskSupport as TaskSupport
from mcpkit.model import TextContent as TextContent
from mcpkit.model import TextResourceContents as TextResourceContents
from mcpkit.model import ToolAnnotations as ToolAnnotations
from mcpkit.model import ToolArguments as ToolArguments
from mcpkit.model import ToolOutput as ToolOutput
from mcpkit.model import ToolRegistration as ToolRegistration
from mcpkit.model import UriParam as UriParam
from mcpkit.model import check_input_responses as check_input_responses
from mcpkit.model import client_supports_apps as client_supports_apps
from mcpkit.model import endpoint as endpoint
from mcpkit.model import missing_capabilities as missing_capabilities
from mcpkit.model import prompt as prompt
from mcpkit.model import resource as resource
from mcpkit.model import resource_list as resource_list
from mcpkit.model import tool as tool
from mcpkit.schema import Arg as Arg
from mcpkit.schema import Int8 as Int8
from mcpkit.schema import Int16 as Int16
from mcpkit.schema import Int32 as Int32
from mcpkit.schema import Int64 as Int64
from mcpkit.schema import Width as Width

if _TYPE_CHECKING:
    from mcpkit.server import AccessToken as AccessToken
    from mcpkit.server import AdmissionRequest as AdmissionRequest
    from mcpkit.server import Admitted as Admitted
    from mcpkit.server import Broadcaster as Broadcaster
    from mcpkit.server import Change as Change
    from mcpkit.server import ChangeKind as ChangeKind
    from mcpkit.server import CorsPolicy as CorsPolicy
    from mcpkit.server import EventStore as EventStore
    from mcpkit.server import IntrospectionVerifier as IntrospectionVerifier
    from mcpkit.server import JwtVerifier as JwtVerifier
    from mcpkit.server import Keyring as Keyring
    from mcpkit.server import KeyringSnapshot as KeyringSnapshot
    from mcpkit.server import Lease as Lease
    from mcpkit.server import ListenFilter as ListenFilter
    from mcpkit.server import MemoryBroadcaster as MemoryBroadcaster
    from mcpkit.server import MemoryEventStore as MemoryEventStore
    from mcpkit.server import MemorySessionStore as MemorySessionStore
    from mcpkit.server import MemoryTaskStore as MemoryTaskStore
    from mcpkit.server import ProtectionKey as ProtectionKey
    from mcpkit.server import RateLimitContext as RateLimitContext
    from mcpkit.server import RateLimitDecision as RateLimitDecision
    from mcpkit.server import RateLimiter as RateLimiter
    from mcpkit.server import RateLimitTarget as RateLimitTarget
    from mcpkit.server import RedisBroadcaster as RedisBroadcaster
    from mcpkit.server import RedisEventStore as RedisEventStore
    from mcpkit.server import RedisSessionStore as RedisSessionStore
    from mcpkit.server import RedisTaskStore as RedisTaskStore
    from mcpkit.server import RedisTokenBucket as RedisTokenBucket
    from mcpkit.server import Rejected as Rejected
    from mcpkit.server import ResourceServer as ResourceServer
    from mcpkit.server import Session as Session
    from mcpkit.server import SessionStore as SessionStore
    from mcpkit.server import SqliteTaskStore as SqliteTaskStore
    from mcpkit.server import SubscriptionAuthorizer as SubscriptionAuthorizer
    from mcpkit.server import SubscriptionRequest as SubscriptionRequest
    from mcpkit.server import TaskCreation as TaskCreation
    from mcpkit.server import TaskHandle as TaskHandle
    from mcpkit.server import TaskKey as TaskKey
    from mcpkit.server import TaskRecord as TaskRecord
    from mcpkit.server import TaskStatus as TaskStatus
    from mcpkit.server import TaskStore as TaskStore
    from mcpkit.server import TokenBucket as TokenBucket
    from mcpkit.server import TokenProblem as TokenProblem
    from mcpkit.server import TokenRejected as TokenRejected
    from mcpkit.server import TokenVerifier as TokenVerifier
    from mcpkit.server import VerifierUnavailable as VerifierUnavailable
    from mcpkit.serving import Server as Server

# The serving names load the engine, asyncio and the transports, so they are imported when first
# used: ``import mcpkit`` (and everything an endpoint module needs) stays free of an event loop.
_LAZY = {
    "AccessToken": "mcpkit.server",
    "IntrospectionVerifier": "mcpkit.server",
    "JwtVerifier": "mcpkit.server",
    "ResourceServer": "mcpkit.server",
    "TokenProblem": "mcpkit.server",
    "TokenRejected": "mcpkit.server",
    "TokenVerifier": "mcpkit.server",
    "VerifierUnavailable": "mcpkit.server",
    "AdmissionRequest": "mcpkit.server",
    "Admitted": "mcpkit.server",
    "Broadcaster": "mcpkit.server",
    "Change": "mcpkit.server",
    "ChangeKind": "mcpkit.server",
    "CorsPolicy": "mcpkit.server",
    "EventStore": "mcpkit.server",
    "Keyring": "mcpkit.server",
    "KeyringSnapshot": "mcpkit.server",
    "Lease": "mcpkit.server",
    "ListenFilter": "mcpkit.server",
    "MemoryBroadcaster": "mcpkit.server",
    "MemoryEventStore": "mcpkit.server",
    "MemorySessionStore": "mcpkit.server",
    "ProtectionKey": "mcpkit.server",
    "RateLimitContext": "mcpkit.server",
    "RateLimitDecision": "mcpkit.server",
    "RateLimitTarget": "mcpkit.server",
    "RateLimiter": "mcpkit.server",
    "RedisBroadcaster": "mcpkit.server",
    "RedisEventStore": "mcpkit.server",
    "RedisSessionStore": "mcpkit.server",
    "RedisTaskStore": "mcpkit.server",
    "RedisTokenBucket": "mcpkit.server",
    "Rejected": "mcpkit.server",
    "Server": "mcpkit.serving",
    "Session": "mcpkit.server",
    "SessionStore": "mcpkit.server",
    "SubscriptionAuthorizer": "mcpkit.server",
    "SubscriptionRequest": "mcpkit.server",
    "MemoryTaskStore": "mcpkit.server",
    "SqliteTaskStore": "mcpkit.server",
    "TaskCreation": "mcpkit.server",
    "TaskHandle": "mcpkit.server",
    "TaskKey": "mcpkit.server",
    "TaskRecord": "mcpkit.server",
    "TaskStatus": "mcpkit.server",
    "TaskStore": "mcpkit.server",
    "TokenBucket": "mcpkit.server",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = (
    "APPS_EXTENSION",
    "APP_MIME_TYPE",
    "DEFAULT_LIMITS",
    "LOG_LEVELS",
    "UNSET",
    "AccessToken",
    "AdmissionRequest",
    "Admitted",
    "Annotations",
    "AppCsp",
    "AppPermission",
    "AppResource",
    "AppTool",
    "AppVisibility",
    "Arg",
    "ArgumentsFailure",
    "ArgumentsInvalid",
    "AudioContent",
    "AuthorizationUnavailable",
    "BlobResourceContents",
    "Broadcaster",
    "CachePolicy",
    "CancellationToken",
    "Cancelled",
    "Change",
    "ChangeKind",
    "CompleteResult",
    "Completion",
    "ConfigurationError",
    "ContentBlock",
    "CorsPolicy",
    "DeadlineExceeded",
    "ElicitationResponse",
    "ElicitationValue",
    "EmbeddedResource",
    "Endpoint",
    "EndpointBuilder",
    "EndpointRegistry",
    "EventStore",
    "HeaderMismatch",
    "Icon",
    "ImageContent",
    "Implementation",
    "InputRequestDeclaration",
    "InputRequestKind",
    "InputRequiredResult",
    "InputUnavailable",
    "InsufficientScope",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "InternalError",
    "IntrospectionVerifier",
    "InvalidParams",
    "InvalidRequest",
    "InvalidValueError",
    "InvocationFeatures",
    "JwtVerifier",
    "Keyring",
    "KeyringSnapshot",
    "Lease",
    "Lifespan",
    "Limits",
    "ListenFilter",
    "ListenQuota",
    "MCPKitError",
    "MemoryBroadcaster",
    "MemoryEventStore",
    "MemorySessionStore",
    "MemoryTaskStore",
    "MethodNotFound",
    "MissingClientCapability",
    "OperationResult",
    "OperationType",
    "OutputError",
    "OutputFailure",
    "Overloaded",
    "ParseError",
    "ParseFailure",
    "ProgressReporter",
    "PromptArgument",
    "PromptMessage",
    "PromptOutput",
    "PromptRegistration",
    "ProtectionKey",
    "ProtectorUnavailable",
    "ProtocolError",
    "RateLimitContext",
    "RateLimitDecision",
    "RateLimitTarget",
    "RateLimited",
    "RateLimiter",
    "RedisBroadcaster",
    "RedisEventStore",
    "RedisSessionStore",
    "RedisTaskStore",
    "RedisTokenBucket",
    "Rejected",
    "ReplayUnavailable",
    "RequestContext",
    "RequestLogger",
    "RequestStateMode",
    "Requirement",
    "ResourceDescriptor",
    "ResourceLink",
    "ResourceListPage",
    "ResourceListRegistration",
    "ResourceNotFound",
    "ResourceOutput",
    "ResourceRegistration",
    "ResourceServer",
    "Revision",
    "Role",
    "Root",
    "RootsResponse",
    "SamplingResponse",
    "SchemaError",
    "Server",
    "Session",
    "SessionNotFound",
    "SessionQuota",
    "SessionRequired",
    "SessionStore",
    "SessionStoreUnavailable",
    "SkillAccess",
    "SkillAccessPolicy",
    "SkillBundle",
    "SkillRegistration",
    "SqliteTaskStore",
    "SubscriptionAuthorizer",
    "SubscriptionDenied",
    "SubscriptionRequest",
    "TaskCreatedResult",
    "TaskCreation",
    "TaskHandle",
    "TaskInterrupted",
    "TaskKey",
    "TaskNotFound",
    "TaskQuota",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "TaskStoreUnavailable",
    "TaskSupport",
    "TextContent",
    "TextResourceContents",
    "TokenBucket",
    "TokenProblem",
    "TokenRejected",
    "TokenVerifier",
    "TooManySessions",
    "ToolAnnotations",
    "ToolArguments",
    "ToolError",
    "ToolOutput",
    "ToolRegistration",
    "Unauthorized",
    "UnsupportedProtocolVersion",
    "UriParam",
    "VerifierUnavailable",
    "Width",
    "__version__",
    "check_input_responses",
    "client_supports_apps",
    "endpoint",
    "missing_capabilities",
    "prompt",
    "resource",
    "resource_list",
    "tool",
)
