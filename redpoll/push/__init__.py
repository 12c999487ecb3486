"""Web Push (Mastodon's /api/v1/push/subscription): one subscription per
access token (``subscriptions``), the server's VAPID key pair (``vapid``),
and the sending of a notification to a user's subscriptions, decided when
it is sent (``delivery``)."""
