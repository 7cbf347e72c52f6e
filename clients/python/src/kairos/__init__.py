"""A Python client of Kairos's HTTP API (`kairos serve`), standard library only.

    import kairos
    client = kairos.Client("http://127.0.0.1:8080")
    for hit in client.search("vitamin D and bone density", k=3).hits:
        print(hit.rank, hit.passage_id, hit.title)

Every call returns the dataclasses of kairos.models (the schemas of server/openapi.json, with
their field names) or raises a kairos.KairosError subclass named after what went wrong.
"""

from ._version import __version__
from .client import DEFAULT_CHAT_TIMEOUT, DEFAULT_TIMEOUT, ChatStream, Client
from .errors import (
    BadRequest,
    KairosError,
    NotFound,
    ProtocolError,
    RateLimited,
    Timeout,
    Unauthorized,
    Unavailable,
    Unreachable,
    UpstreamError,
)
from .models import (
    ChatCitation,
    ChatResponse,
    ChatTurn,
    ChatUsage,
    CollectionInfo,
    Conversation,
    Explain,
    Filters,
    Health,
    Hit,
    IndexStats,
    Passage,
    Query,
    QueryResult,
    SearchResponse,
    ServerStats,
    StageTrace,
    Stats,
    TimeSpec,
    WikiChatBlock,
    WikiChatFilter,
    WikiChatV1Result,
    WikiChatV20Result,
    YearSpan,
)

__all__ = [
    "__version__",
    "Client",
    "ChatStream",
    "DEFAULT_TIMEOUT",
    "DEFAULT_CHAT_TIMEOUT",
    "KairosError",
    "BadRequest",
    "Unauthorized",
    "NotFound",
    "RateLimited",
    "UpstreamError",
    "Unavailable",
    "Timeout",
    "Unreachable",
    "ProtocolError",
    "ChatCitation",
    "ChatResponse",
    "ChatTurn",
    "ChatUsage",
    "CollectionInfo",
    "Conversation",
    "Explain",
    "Filters",
    "Health",
    "Hit",
    "IndexStats",
    "Passage",
    "Query",
    "QueryResult",
    "SearchResponse",
    "ServerStats",
    "StageTrace",
    "Stats",
    "TimeSpec",
    "WikiChatBlock",
    "WikiChatFilter",
    "WikiChatV1Result",
    "WikiChatV20Result",
    "YearSpan",
]
