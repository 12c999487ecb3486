-- sched_remove: take a scheduled status away, in one atomic step
-- (redpoll.scheduling): cancelled (its job too), or posted (its job is the
-- one running).
-- KEYS: as sched_create.lua (index, times, records, jobs, due set)
-- ARGV[1]: id   ARGV[2]: 'cancel' or 'posted'   ARGV[3]: now (ms)
-- A cancelled one's job leaves the due set, unless it holds uploads: then it
-- is moved to now, and its run (finding the status gone) releases them, so
-- they are released even if the caller's own release is cut short. (Jobs are
-- JSON with sorted keys and no spaces: no uploads is '"media":[]'.)
-- returns: the record JSON, or false if there was none
local job = redis.call('HGET', KEYS[4], ARGV[1])
if not job then return false end
local record = redis.call('HGET', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if ARGV[2] == 'cancel' and redis.call('ZSCORE', KEYS[5], job) then
  if string.find(job, '"media":[]', 1, true) then
    redis.call('ZREM', KEYS[5], job)
  else
    redis.call('ZADD', KEYS[5], ARGV[3], job)
  end
end
return record
