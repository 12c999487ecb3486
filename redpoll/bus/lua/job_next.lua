-- job_next: finish one job and queue its continuation in one atomic step, so a
-- worker that dies between the two can neither lose the chain nor fork it.
-- Only the first finisher queues the continuation and counts: a slow worker
-- whose job was claimed and finished meanwhile by another (it stalled past
-- job_claim_ms) finds the entry no longer pending (XACK returns 0) and must
-- not queue the next step a second time, which would fork the chain, nor
-- count the job's effect twice.
-- KEYS[1]: job stream of the finished entry (a shard's stream or its held stream)
-- KEYS[2]: job stream for the next job (the shard's stream; same slot)
-- KEYS[3]: the shard's counters hash stats:{shard} (same slot)
-- ARGV[1]: consumer group
-- ARGV[2]: id of the finished entry
-- ARGV[3]: field of KEYS[3] to add 1 to ('' = none): what the job did
--          (a status posted, a status deleted) counted exactly once
-- ARGV[4..]: field/value pairs of the next job (none = no next job)
-- returns: the new entry's id, or '' if there was none
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if acked == 0 then return '' end
if ARGV[3] ~= '' then redis.call('HINCRBY', KEYS[3], ARGV[3], 1) end
if #ARGV < 5 then return '' end
return redis.call('XADD', KEYS[2], '*', unpack(ARGV, 4))
