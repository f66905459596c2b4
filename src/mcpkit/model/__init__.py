"""The authoring model: revisions, endpoint paths, resource templates, content blocks and the
values handlers build (layer 4).

Everything here is immutable and validated at construction (DESIGN.md §1.2, §1.3); nothing here
knows how a revision projects a value onto the wire, which is ``mcpkit.protocol``'s job.
"""

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
from mcpkit.model._media import MediaType as MediaType
from mcpkit.model._media import parse_media_type as parse_media_type
from mcpkit.model._paths import validate_endpoint_path as validate_endpoint_path
from mcpkit.model._revision import Revision as Revision
from mcpkit.model._templates import UriTemplate as UriTemplate
from mcpkit.model._templates import check_no_overlaps as check_no_overlaps
from mcpkit.model._templates import is_template as is_template
from mcpkit.model._templates import overlaps as overlaps

__all__ = (
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "MediaType",
    "ResourceContents",
    "ResourceLink",
    "Revision",
    "Role",
    "TextContent",
    "TextResourceContents",
    "UriTemplate",
    "check_no_overlaps",
    "is_template",
    "overlaps",
    "parse_media_type",
    "validate_endpoint_path",
)
