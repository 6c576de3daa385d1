"""Type fit, where memory has always imported it from: the fit lives in the core
(``forms.fact_fit``), beside the vocabulary, as the compile check asks it too; every name is
importable from here as before."""

from __future__ import annotations

from forms.fact_fit import Kind, TypeFit, accepts, fits, kinds_of, type_fit

__all__ = ["Kind", "TypeFit", "accepts", "fits", "kinds_of", "type_fit"]
