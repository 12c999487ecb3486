"""What the server says about itself, set by its operator: its rules and its
extended description (``redpoll admin rules ...``, ``redpoll admin
describe``), shown by the instance endpoints."""
