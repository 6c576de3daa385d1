"""The Bedrock handler answers without the tool result's model classes.

``forms.surface.tool_result`` makes six model classes as it is imported; the Bedrock handler
tells Bedrock of a result in its own words (``ActionResult``) and never uses them. The tools'
list names its result model lazily (``ToolSpec.result``), and the handler's ``ActionResult``
takes ``ok`` and ``summary`` from ``RESULT_WORDS``, the model's words written out: these tests
hold the words to the model's and the handler's cold start to not importing it.
"""

from __future__ import annotations

from forms.surface.tool_result import ToolResult
from forms.surface.tools import TOOLS
from formwork.aws.bedrock_schema import RESULT_WORDS, action_result
from tests.functional.test_cold_start import run


def test_the_words_written_out_are_the_result_model_s() -> None:
    assert {key: ToolResult.model_fields[key].description for key in RESULT_WORDS} == RESULT_WORDS
    told, from_the_model = action_result(), action_result(ToolResult)
    assert told.model_json_schema() == from_the_model.model_json_schema()


def test_every_form_tool_names_the_one_result_model() -> None:
    assert {tool.result for tool in TOOLS} == {ToolResult}


def test_the_bedrock_handler_and_its_first_event_never_import_the_result_model() -> None:
    code = (
        "import json, sys\n"
        "import formwork.aws.bedrock_agent as handler\n"
        "from formwork.aws.local import LocalContext\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "from forms.storage.memory import InMemoryFormStore\n"
        "imported = 'forms.surface.tool_result' in sys.modules\n"
        "app = bootstrap(Settings(), store=InMemoryFormStore())\n"
        "event = json.load(open('tests/events/bedrock_agent_form_start.json'))\n"
        "answer = handler.lambda_handler(event, LocalContext(), app=app)\n"
        "status = answer['response']['httpStatusCode']\n"
        "print(json.dumps([imported, status, 'forms.surface.tool_result' in sys.modules]))\n"
    )
    assert run(code) == [False, 200, False]
