"""What the REST API (``redpoll.api``) and the streams (``redpoll.stream``)
share at the HTTP edge: how a request's links are built (``links``).
(``redpoll.web`` is the web app served at ``/``.)
"""
