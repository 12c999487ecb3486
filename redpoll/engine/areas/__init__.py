"""The engine's areas, one per part of the network (redpoll.engine.areas.base)."""
