"""forms-bench: the agent tool surface under the ways models misuse tools.

Scripted conversations (``scenarios``) played in process against offline personas
(``personas``) and, when credentials exist, real models (``adapters``); graded (``graders``),
measured (``metrics``, ``ledger``) and reported (``report``). Run: ``python -m bench.forms_bench``.
"""
