"""The application's assembly: settings, the one bootstrap, and the ``formwork`` command.

``formwork.config`` reads a deployment's settings from its environment (the webhook route's in
``formwork.webhook_settings``); ``formwork.bootstrap`` is the composition root:
``bootstrap(settings, **parts)`` returns the ``App`` that holds the clock, the ids, the
backoff, the adapters (the stores ``formwork.storage`` builds, the hook dispatcher, the webhook
delivery log and secrets) and the ``FormService`` over them, each built on first use from the
builders of ``formwork.references``, ``formwork.storage`` and ``formwork.services``;
``formwork.process`` holds this process's App, for the Lambda handlers Lambda calls with an
event alone; ``formwork.webhooks`` is the signed-webhook transport (the scheme,
the delivery log port with its in-memory and DynamoDB adapters and contract suite, secrets,
outbound events); ``formwork.cli`` is the ``formwork`` command. Both shells use it and neither
imports the other: ``functions/`` (the Lambda handlers) and ``workflows/`` (the Temporal worker
and dispatcher) sit side by side above ``forms``.
"""
