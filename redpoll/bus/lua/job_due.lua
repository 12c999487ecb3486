-- job_due: move the jobs whose time has come from a shard's due set onto its
-- stream, in one atomic step, so a job is queued exactly once however many
-- workers promote at the same moment (the second finds the set empty).
-- KEYS[1]: the shard's due set jobs:{shard}:due (score: due time, ms)
-- KEYS[2]: the shard's job stream jobs:{shard} (same slot)
-- ARGV[1]: now (ms)
-- ARGV[2]: at most this many jobs per call
-- returns: how many were moved
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, job in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'j', job)
  redis.call('ZREM', KEYS[1], job)
end
return #due
