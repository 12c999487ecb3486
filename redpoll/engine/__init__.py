"""The application: the Python API (engine.Redpoll: one object that owns the
connection, runs the jobs, and offers every action through its areas,
engine.areas) and the background worker that runs the jobs. HTTP and the
streams stand on it."""
