-- job_hold: queue a job that is already "taken" by the caller: the entry is
-- added to a held stream and put straight into the consumer group's pending
-- list under the caller's name (XCLAIM ... FORCE), so no worker reads it now.
-- The caller does the work itself and then finishes the entry (job_next.lua);
-- if the caller dies first, the entry goes idle and a worker takes it over
-- with XAUTOCLAIM after job_claim_ms, like any job of a dead worker. Posting
-- uses this for fan-out: the first batch runs in the call, and a crash in the
-- middle of the call still cannot lose the delivery.
-- KEYS[1]: held job stream (same slot as the shard's job stream)
-- ARGV[1]: consumer group
-- ARGV[2]: holder (consumer name)
-- ARGV[3..]: field/value pairs of the job
-- returns: the entry id
if redis.call('EXISTS', KEYS[1]) == 0 then
  -- the stream is gone (data lost or flushed): recreate it with its group
  -- rather than leave an entry no consumer group knows of
  redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
end
local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'FORCE', 'JUSTID')
return id
