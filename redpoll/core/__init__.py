"""The ground every other package stands on: bounds (limits), errors, records
(models), input checks (validate), key names (keys), settings, metrics, the
memo rule, the health probe. It imports nothing of redpoll."""
