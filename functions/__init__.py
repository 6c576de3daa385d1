"""The HTTP tool API: AWS Lambda handlers (aws-lambda-powertools) over ``forms.FormService``.

``functions.api.lambda_handler`` is the Lambda entry point (API Gateway HTTP API, payload v2);
``formwork.bootstrap`` is the composition root (``bootstrap(...) -> App``; a handler serves
with this process's App, ``formwork.process.app()``, or the ``app=`` it is given);
``functions.local.invoke`` calls the handler outside Lambda (tests, the local tools).
"""
