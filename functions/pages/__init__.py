"""The pages a person reads in a browser (``docs/pages.md``): access (``access``), rendering
(``render``), the templates and the stylesheet shipped with the package."""
