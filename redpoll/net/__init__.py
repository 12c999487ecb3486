"""Outgoing HTTP, shared by federation and Web Push: the address guard
(``safety``: never a private or loopback address unless the loopback
setting allows it) and one bounded request (``http``)."""
