"""Formwork as an MCP server, on the official ``mcp`` SDK (``pip install 'formwork[mcp]'``).

One server (``formwork.mcp.server.build_server``) over one port (``formwork.mcp.backends``:
a principal's conversation), two transports:

* streamable HTTP on the API, stateless (``formwork.mcp.http``, run per request by the Lambda
  route ``functions.mcp_routes`` over the ``FormService`` in process);
* stdio (``formwork.mcp.stdio``, ``formwork mcp``), forwarding to the tool API over HTTP
  (``formwork.mcp.remote``).

The tools, their annotations, results and tool-call ids are ``formwork.mcp.tools``;
``form_ask`` (elicitation) is ``formwork.mcp.ask``. Nothing is imported here, so that a
module of the package loads only what it needs (the backends need no SDK).
"""
