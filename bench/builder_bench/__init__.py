"""builder-bench: scripted builder agents against the builder service, and what their calls cost.

Four personas (``scenarios``) play their calls in process against a ``BuilderService`` over
in-memory stores (``harness``): the tidy build of the job application, "make this required"
on a selected field, add + inspect + rule in one turn, and a sloppy build. Each ends with its
draft checked against the expected document and every note the persona's strings should have
earned checked against what the results reported. Tokens (o200k_base, as
``bench.tool_surface`` counts them): each call's arguments and result against reprinting the
whole document at that point, and the builder tools' surface beside the form tools'
(``report``). Run: ``python -m bench.builder_bench [--publish]``.
"""
