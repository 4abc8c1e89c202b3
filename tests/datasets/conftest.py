"""Fixtures for the data-set tests: a local HTTP server that counts requests
(``tests/support/local_http.py``, shared with the experiment and CLI tests)."""

from local_http import closed_port_url, http_server  # noqa: F401 (fixtures)
