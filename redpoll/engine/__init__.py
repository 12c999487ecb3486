"""The application: the Python API (engine.Redpoll: one object that owns the
connection and offers every action as a method) and the background worker that
runs the jobs. HTTP and the streams stand on it."""
