-- home_seen: record that a user read their home now (redpoll.timelines.hybrid) and
-- say whether they had been idle, i.e. skipped by fan-out since (their last
-- recorded read is older than the idle period, or negative: their home was
-- dropped): the caller then rebuilds their home before it reads, and puts
-- the old record back if it cannot. Idempotent (GT: the record never goes
-- back by this script).
-- KEYS[1]: keys.HOME_SEEN (uid -> ms of the last recorded home read)
-- ARGV[1]: user id; ARGV[2]: now (ms); ARGV[3]: idle period (ms)
-- returns: {1 if the user had been idle else 0, the old record or ''}
local prev = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
if prev and tonumber(prev) < tonumber(ARGV[2]) - tonumber(ARGV[3]) then return {1, prev} end
return {0, prev or ''}
