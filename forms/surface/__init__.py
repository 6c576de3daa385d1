"""What the model reads: the tool specs and their input schemas, the vendor export shapes, the
form's views and status lines, and the results and errors a tool call returns.

Built on the pure core (the modules directly in ``forms``) and nothing else; the application
layer (``forms.app``) uses it to answer tool calls.
"""
