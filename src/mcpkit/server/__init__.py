"""The async engine (layer 5): the request pipeline, bounded execution and invocation."""

from mcpkit.server._access_token import AccessToken as AccessToken
from mcpkit.server._access_token import TokenProblem as TokenProblem
from mcpkit.server._access_token import TokenRejected as TokenRejected
from mcpkit.server._access_token import TokenVerifier as TokenVerifier
from mcpkit.server._access_token import VerifierUnavailable as VerifierUnavailable
from mcpkit.server._broadcast import Broadcaster as Broadcaster
from mcpkit.server._broadcast import Change as Change
from mcpkit.server._broadcast import ChangeKind as ChangeKind
from mcpkit.server._broadcast import MemoryBroadcaster as MemoryBroadcaster
from mcpkit.server._build import EngineSettings as EngineSettings
from mcpkit.server._build import TracerProvider as TracerProvider
from mcpkit.server._build import build_engine as build_engine
from mcpkit.server._engine import Engine as Engine
from mcpkit.server._events import EventStore as EventStore
from mcpkit.server._events import MemoryEventStore as MemoryEventStore
from mcpkit.server._events import Replay as Replay
from mcpkit.server._execution import Executor as Executor
from mcpkit.server._http import HttpEngine as HttpEngine
from mcpkit.server._http import HttpExchange as HttpExchange
from mcpkit.server._http import HttpRequest as HttpRequest
from mcpkit.server._http import Signal as Signal
from mcpkit.server._http import StdioHandler as StdioHandler
from mcpkit.server._http import Writer as Writer
from mcpkit.server._introspection import IntrospectionVerifier as IntrospectionVerifier
from mcpkit.server._jwt_verifier import JwtVerifier as JwtVerifier
from mcpkit.server._keyring import Keyring as Keyring
from mcpkit.server._keyring import KeyringSnapshot as KeyringSnapshot
from mcpkit.server._keyring import ProtectionKey as ProtectionKey
from mcpkit.server._listen import Lease as Lease
from mcpkit.server._listen import ListenFilter as ListenFilter
from mcpkit.server._listen import SubscriptionAuthorizer as SubscriptionAuthorizer
from mcpkit.server._listen import SubscriptionRequest as SubscriptionRequest
from mcpkit.server._policy import AdmissionController as AdmissionController
from mcpkit.server._policy import AdmissionRequest as AdmissionRequest
from mcpkit.server._policy import Admitted as Admitted
from mcpkit.server._policy import CorsPolicy as CorsPolicy
from mcpkit.server._policy import Interceptor as Interceptor
from mcpkit.server._policy import Rejected as Rejected
from mcpkit.server._policy import ResultSanitizer as ResultSanitizer
from mcpkit.server._rate_limit import RateLimitContext as RateLimitContext
from mcpkit.server._rate_limit import RateLimitDecision as RateLimitDecision
from mcpkit.server._rate_limit import RateLimiter as RateLimiter
from mcpkit.server._rate_limit import RateLimits as RateLimits
from mcpkit.server._rate_limit import RateLimitTarget as RateLimitTarget
from mcpkit.server._rate_limit import TokenBucket as TokenBucket
from mcpkit.server._redis_broadcast import RedisBroadcaster as RedisBroadcaster
from mcpkit.server._redis_rate_limit import RedisTokenBucket as RedisTokenBucket
from mcpkit.server._redis_sessions import RedisEventStore as RedisEventStore
from mcpkit.server._redis_sessions import RedisSessionStore as RedisSessionStore
from mcpkit.server._redis_task_store import RedisTaskStore as RedisTaskStore
from mcpkit.server._resource_server import ResourceServer as ResourceServer
from mcpkit.server._sessions import MemorySessionStore as MemorySessionStore
from mcpkit.server._sessions import Session as Session
from mcpkit.server._sessions import SessionStore as SessionStore
from mcpkit.server._stdio_connection import StdioConnection as StdioConnection
from mcpkit.server._task_sqlite import SqliteTaskStore as SqliteTaskStore
from mcpkit.server._task_store import MemoryTaskStore as MemoryTaskStore
from mcpkit.server._task_store import TaskKey as TaskKey
from mcpkit.server._task_store import TaskRecord as TaskRecord
from mcpkit.server._task_store import TaskStatus as TaskStatus
from mcpkit.server._task_store import TaskStore as TaskStore
from mcpkit.server._tasks import TaskCreation as TaskCreation
from mcpkit.server._tasks import TaskHandle as TaskHandle

__all__ = (
    "AccessToken",
    "AdmissionController",
    "AdmissionRequest",
    "Admitted",
    "Broadcaster",
    "Change",
    "ChangeKind",
    "CorsPolicy",
    "Engine",
    "EngineSettings",
    "EventStore",
    "Executor",
    "HttpEngine",
    "HttpExchange",
    "HttpRequest",
    "Interceptor",
    "IntrospectionVerifier",
    "JwtVerifier",
    "Keyring",
    "KeyringSnapshot",
    "Lease",
    "ListenFilter",
    "MemoryBroadcaster",
    "MemoryEventStore",
    "MemorySessionStore",
    "MemoryTaskStore",
    "ProtectionKey",
    "RateLimitContext",
    "RateLimitDecision",
    "RateLimitTarget",
    "RateLimiter",
    "RateLimits",
    "RedisBroadcaster",
    "RedisEventStore",
    "RedisSessionStore",
    "RedisTaskStore",
    "RedisTokenBucket",
    "Rejected",
    "Replay",
    "ResourceServer",
    "ResultSanitizer",
    "Session",
    "SessionStore",
    "Signal",
    "SqliteTaskStore",
    "StdioConnection",
    "StdioHandler",
    "SubscriptionAuthorizer",
    "SubscriptionRequest",
    "TaskCreation",
    "TaskHandle",
    "TaskKey",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "TokenBucket",
    "TokenProblem",
    "TokenRejected",
    "TokenVerifier",
    "TracerProvider",
    "VerifierUnavailable",
    "Writer",
    "build_engine",
)
