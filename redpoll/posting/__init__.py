"""Writing statuses: posting (at most once per Idempotency-Key), deleting, and
boosting (a boost is a status)."""
