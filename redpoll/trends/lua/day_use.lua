-- day_use: count one public status in an item's (a hashtag's, a link's)
-- history of the day: its id in the day's uses and its author in the day's
-- accounts (both HyperLogLogs, so a replay of the post journal counts
-- nothing twice), the two expiring after the history's days. Idempotent.
-- KEYS[1]: uses of the day (taguse:{name}:<day>, linkuse:{digest}:<day>)
-- KEYS[2]: accounts of the day (tagacc:..., linkacc:...)
-- ARGV[1]: status id    ARGV[2]: author id    ARGV[3]: seconds to keep them
-- returns: the day's accounts (estimated) after the count
redis.call('PFADD', KEYS[1], ARGV[1])
redis.call('PFADD', KEYS[2], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return redis.call('PFCOUNT', KEYS[2])
