"""The HTTP tool API: AWS Lambda handlers (aws-lambda-powertools) over ``forms.FormService``.

``formwork.aws.api.lambda_handler`` is the Lambda entry point (API Gateway HTTP API, payload v2);
``formwork.bootstrap`` is the composition root (``bootstrap(...) -> App``; a handler serves
with this process's App, ``formwork.process.app()``, or the ``app=`` it is given);
``formwork.aws.local.invoke`` calls the handler outside Lambda (tests, the local tools).
"""

import os

# No Formwork function uses a pydantic plugin, and pydantic looks for them, on the first model
# it builds, by reading the entry points of every installed distribution (about 19 ms in the
# development environment, where ``import boto3`` takes about 100; fewer distributions in the
# Lambda artifact cost less). template.yaml sets it for every function (Globals); the default
# here is for whatever runs the handlers without the template's environment (the local stack's
# tools, tests, another packaging). A deployment that does install a plugin sets
# PYDANTIC_DISABLE_PLUGINS itself (setdefault keeps its value).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

# Powertools' event handler and event data class packages import every resolver and every event
# source's class in their __init__; a handler needs one of each. Installed before any handler
# module imports Powertools (formwork.aws.deferred_packages says how, and why it is safe).
from formwork.aws import deferred_packages

deferred_packages.install()
