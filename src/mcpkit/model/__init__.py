"""The authoring model: revisions, endpoint paths, resource templates, content blocks and the
values handlers build (layer 4).

Everything here is immutable and validated at construction; nothing here
knows how a revision projects a value onto the wire, which is ``mcpkit.protocol``'s job.
"""

from mcpkit.model._apps import APP_MIME_TYPE as APP_MIME_TYPE
from mcpkit.model._apps import APPS_EXTENSION as APPS_EXTENSION
from mcpkit.model._apps import AppCsp as AppCsp
from mcpkit.model._apps import AppPermission as AppPermission
from mcpkit.model._apps import AppResource as AppResource
from mcpkit.model._apps import AppTool as AppTool
from mcpkit.model._apps import AppVisibility as AppVisibility
from mcpkit.model._apps import client_supports_apps as client_supports_apps
from mcpkit.model._checks import absolute_uri as absolute_uri
from mcpkit.model._completion import Completion as Completion
from mcpkit.model._completion import CompletionHandler as CompletionHandler
from mcpkit.model._content import Annotations as Annotations
from mcpkit.model._content import AudioContent as AudioContent
from mcpkit.model._content import BlobResourceContents as BlobResourceContents
from mcpkit.model._content import ContentBlock as ContentBlock
from mcpkit.model._content import EmbeddedResource as EmbeddedResource
from mcpkit.model._content import Icon as Icon
from mcpkit.model._content import ImageContent as ImageContent
from mcpkit.model._content import ResourceContents as ResourceContents
from mcpkit.model._content import ResourceLink as ResourceLink
from mcpkit.model._content import Role as Role
from mcpkit.model._content import TextContent as TextContent
from mcpkit.model._content import TextResourceContents as TextResourceContents
from mcpkit.model._context import LOG_LEVELS as LOG_LEVELS
from mcpkit.model._context import CancellationToken as CancellationToken
from mcpkit.model._context import InvocationFeatures as InvocationFeatures
from mcpkit.model._context import OperationType as OperationType
from mcpkit.model._context import ProgressReporter as ProgressReporter
from mcpkit.model._context import RequestContext as RequestContext
from mcpkit.model._context import RequestId as RequestId
from mcpkit.model._context import RequestLogger as RequestLogger
from mcpkit.model._context import ToolArguments as ToolArguments
from mcpkit.model._context import server_arguments as server_arguments
from mcpkit.model._context import server_context as server_context
from mcpkit.model._context import server_features as server_features
from mcpkit.model._decorators import UriParam as UriParam
from mcpkit.model._decorators import endpoint as endpoint
from mcpkit.model._decorators import prompt as prompt
from mcpkit.model._decorators import resource as resource
from mcpkit.model._decorators import resource_list as resource_list
from mcpkit.model._decorators import tool as tool
from mcpkit.model._endpoint import Endpoint as Endpoint
from mcpkit.model._endpoint import Lifespan as Lifespan
from mcpkit.model._endpoint import ResourceMatch as ResourceMatch
from mcpkit.model._endpoint_builder import EndpointBuilder as EndpointBuilder
from mcpkit.model._handlers import never_suspends as never_suspends
from mcpkit.model._implementation import CachePolicy as CachePolicy
from mcpkit.model._implementation import CacheScope as CacheScope
from mcpkit.model._implementation import Implementation as Implementation
from mcpkit.model._input import InputRequestDeclaration as InputRequestDeclaration
from mcpkit.model._input import InputRequestKind as InputRequestKind
from mcpkit.model._input import RequestStateMode as RequestStateMode
from mcpkit.model._input import Requirement as Requirement
from mcpkit.model._input import asks_for_input as asks_for_input
from mcpkit.model._input import missing_capabilities as missing_capabilities
from mcpkit.model._input_responses import ElicitationResponse as ElicitationResponse
from mcpkit.model._input_responses import ElicitationValue as ElicitationValue
from mcpkit.model._input_responses import Root as Root
from mcpkit.model._input_responses import RootsResponse as RootsResponse
from mcpkit.model._input_responses import SamplingResponse as SamplingResponse
from mcpkit.model._input_responses import check_input_responses as check_input_responses
from mcpkit.model._input_responses import response_answers as response_answers
from mcpkit.model._media import MediaType as MediaType
from mcpkit.model._media import parse_media_type as parse_media_type
from mcpkit.model._outputs import UNSET as UNSET
from mcpkit.model._outputs import PromptMessage as PromptMessage
from mcpkit.model._outputs import PromptOutput as PromptOutput
from mcpkit.model._outputs import ResourceOutput as ResourceOutput
from mcpkit.model._outputs import ToolOutput as ToolOutput
from mcpkit.model._outputs import Unset as Unset
from mcpkit.model._paths import validate_endpoint_path as validate_endpoint_path
from mcpkit.model._prompts import PromptArgument as PromptArgument
from mcpkit.model._prompts import PromptRegistration as PromptRegistration
from mcpkit.model._registry import ENDPOINT_ATTRIBUTE as ENDPOINT_ATTRIBUTE
from mcpkit.model._registry import EndpointRegistry as EndpointRegistry
from mcpkit.model._resource_list import ResourceDescriptor as ResourceDescriptor
from mcpkit.model._resource_list import ResourceListPage as ResourceListPage
from mcpkit.model._resource_list import ResourceListRegistration as ResourceListRegistration
from mcpkit.model._resources import ResourceKind as ResourceKind
from mcpkit.model._resources import ResourceRegistration as ResourceRegistration
from mcpkit.model._results import CompletePayload as CompletePayload
from mcpkit.model._results import CompleteResult as CompleteResult
from mcpkit.model._results import InputRequiredResult as InputRequiredResult
from mcpkit.model._results import OperationResult as OperationResult
from mcpkit.model._results import TaskCreatedResult as TaskCreatedResult
from mcpkit.model._results import structured_result as structured_result
from mcpkit.model._revision import Revision as Revision
from mcpkit.model._skills import SKILLS_EXTENSION as SKILLS_EXTENSION
from mcpkit.model._skills import SkillAccess as SkillAccess
from mcpkit.model._skills import SkillAccessPolicy as SkillAccessPolicy
from mcpkit.model._skills import SkillBundle as SkillBundle
from mcpkit.model._skills import SkillFile as SkillFile
from mcpkit.model._skills import SkillRegistration as SkillRegistration
from mcpkit.model._tasks import TASKS_EXTENSION as TASKS_EXTENSION
from mcpkit.model._tasks import TaskSupport as TaskSupport
from mcpkit.model._tasks import declares_tasks as declares_tasks
from mcpkit.model._tasks import tasks_capability as tasks_capability
from mcpkit.model._templates import UriTemplate as UriTemplate
from mcpkit.model._templates import check_no_overlaps as check_no_overlaps
from mcpkit.model._templates import is_template as is_template
from mcpkit.model._templates import overlaps as overlaps
from mcpkit.model._tool_annotations import ToolAnnotations as ToolAnnotations
from mcpkit.model._tool_annotations import ToolShape as ToolShape
from mcpkit.model._tools import OperationHandler as OperationHandler
from mcpkit.model._tools import ToolHandler as ToolHandler
from mcpkit.model._tools import ToolRegistration as ToolRegistration

__all__ = (
    "APPS_EXTENSION",
    "APP_MIME_TYPE",
    "ENDPOINT_ATTRIBUTE",
    "LOG_LEVELS",
    "SKILLS_EXTENSION",
    "TASKS_EXTENSION",
    "UNSET",
    "Annotations",
    "AppCsp",
    "AppPermission",
    "AppResource",
    "AppTool",
    "AppVisibility",
    "AudioContent",
    "BlobResourceContents",
    "CachePolicy",
    "CacheScope",
    "CancellationToken",
    "CompletePayload",
    "CompleteResult",
    "Completion",
    "CompletionHandler",
    "ContentBlock",
    "ElicitationResponse",
    "ElicitationValue",
    "EmbeddedResource",
    "Endpoint",
    "EndpointBuilder",
    "EndpointRegistry",
    "Icon",
    "ImageContent",
    "Implementation",
    "InputRequestDeclaration",
    "InputRequestKind",
    "InputRequiredResult",
    "InvocationFeatures",
    "Lifespan",
    "MediaType",
    "OperationHandler",
    "OperationResult",
    "OperationType",
    "ProgressReporter",
    "PromptArgument",
    "PromptMessage",
    "PromptOutput",
    "PromptRegistration",
    "RequestContext",
    "RequestId",
    "RequestLogger",
    "RequestStateMode",
    "Requirement",
    "ResourceContents",
    "ResourceDescriptor",
    "ResourceKind",
    "ResourceLink",
    "ResourceListPage",
    "ResourceListRegistration",
    "ResourceMatch",
    "ResourceOutput",
    "ResourceRegistration",
    "Revision",
    "Role",
    "Root",
    "RootsResponse",
    "SamplingResponse",
    "SkillAccess",
    "SkillAccessPolicy",
    "SkillBundle",
    "SkillFile",
    "SkillRegistration",
    "TaskCreatedResult",
    "TaskSupport",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolArguments",
    "ToolHandler",
    "ToolOutput",
    "ToolRegistration",
    "ToolShape",
    "Unset",
    "UriParam",
    "UriTemplate",
    "absolute_uri",
    "asks_for_input",
    "check_input_responses",
    "check_no_overlaps",
    "client_supports_apps",
    "declares_tasks",
    "endpoint",
    "is_template",
    "missing_capabilities",
    "never_suspends",
    "overlaps",
    "parse_media_type",
    "prompt",
    "resource",
    "resource_list",
    "response_answers",
    "server_arguments",
    "server_context",
    "server_features",
    "structured_result",
    "tasks_capability",
    "tool",
    "validate_endpoint_path",
)
