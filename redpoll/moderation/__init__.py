"""Reports and moderation: reports and their resolution, suspending an account,
revoking its tokens, granting admin, resetting a password, deleting an account
with everything it wrote, as ``redpoll admin`` and ``POST /api/v1/reports``
ask."""
