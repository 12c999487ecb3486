"""How work leaves a request: deferred jobs on Redis Streams (jobs) and the real-
time events the streams carry (events)."""
