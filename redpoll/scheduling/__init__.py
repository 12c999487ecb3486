"""Scheduled statuses: a status held until its time, then posted once by a
job queued for that time (redpoll.bus.jobs.ScheduledStatusJob), with the
uploads it attaches held for it meanwhile."""
