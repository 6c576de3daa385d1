"""Runnable examples over the engine and the local stack, kept out of the engine package.

``formwork.examples.demo`` is the scripted conversation ``make demo`` and ``formwork demo`` run. The
example form definitions themselves are part of the engine's public API, in ``forms.examples``.
"""
