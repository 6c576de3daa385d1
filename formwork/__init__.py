"""The application's assembly: settings, the one bootstrap, and the ``formwork`` command.

``formwork.config`` reads a deployment's settings from its environment (the webhook route's in
``formwork.webhook_settings``); ``formwork.bootstrap`` is the composition root:
``bootstrap(settings, **parts)`` returns the ``App`` (``formwork.application``) that holds the
clock, the ids, the backoff, the adapters (the stores ``formwork.storage`` builds, the hook
dispatcher, the webhook delivery log and secrets) and the ``FormService`` over them, each built
on first use from the builders of ``formwork.references``, ``formwork.storage``,
``formwork.services`` and ``formwork.webhook_secrets``;
``formwork.process`` holds this process's App, for the Lambda handlers Lambda calls with an
event alone; ``formwork.webhooks`` is the signed-webhook transport (the scheme,
the delivery log port with its in-memory and DynamoDB adapters and contract suite, secrets,
outbound events); ``formwork.cli`` is the ``formwork`` command and ``formwork.worker`` the hook
worker's process. The shells install inside this package (the folders ``functions/``,
``workflows/``, ``infra/`` and ``examples/``, linked here): ``formwork.aws`` (the Lambda
handlers) imports the assembly; ``formwork.temporal`` (the Temporal adapter: the dispatcher, the
workflows, what serves them) is imported by it, as the adapter bootstrap builds, and imports
nothing else of ``formwork``. Neither shell imports the other.
"""
