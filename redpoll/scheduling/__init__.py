"""Scheduled statuses: a status held until its time, then posted once by a
job queued for that time (redpoll.scheduling.jobs.ScheduledStatusJob), with the
uploads it attaches held for it meanwhile."""
