"""The form id a builder path names (``FormId``), as a route's parameter type.

The builder's routes, MCP's builder route and the builder's canvas take it, so it lives apart
from all of them: MCP's routes, which load with the tool API, import this module and not the
builder's routes (which load with the first builder request, ``formwork.aws.api``).
"""

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path

from formwork.aws.models.common import FORM_ID_PATTERN

FormId = Annotated[
    str,
    Path(
        pattern=FORM_ID_PATTERN,
        description="The form's id: a lowercase letter, then up to 62 lowercase letters, "
        "digits or hyphens",
    ),
]
