"""The local stack: everything the backend needs, on this machine, without Docker."""
