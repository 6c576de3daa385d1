"""Formwork as an MCP server, on the official ``mcp`` SDK (``pip install 'formwork[mcp]'``).

One server (``formwork.mcp.server.build_server``) over one port (``formwork.mcp.backends``),
for two things: a principal's conversation (the form tools) and a draft of the principal's
tenant (the builder tools, ``formwork.mcp.builder``); what a host sees of each besides the
tools is its ``Surface`` (``formwork.mcp.surface``). Two transports:

* streamable HTTP on the API, stateless (``formwork.mcp.http``, run per request by the Lambda
  routes ``formwork.aws.mcp_routes`` over the ``FormService`` or the ``BuilderService`` in
  process);
* stdio (``formwork.mcp.stdio``, ``formwork mcp``), forwarding to the API over HTTP
  (``formwork.mcp.remote``).

The tools, their annotations, results and tool-call ids are ``formwork.mcp.tools``;
``form_ask`` (elicitation, the form tools only) is ``formwork.mcp.ask``. Nothing is imported
here, so that a module of the package loads only what it needs (the backends need no SDK).
"""
