-- job_next: finish one job and queue its continuation in one atomic step, so a
-- worker that dies between the two can neither lose the chain nor fork it.
-- KEYS[1]: job stream
-- ARGV[1]: consumer group
-- ARGV[2]: id of the finished entry
-- ARGV[3..]: field/value pairs of the next job ('' alone = no next job)
-- returns: the new entry's id, or '' if there was none
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if #ARGV < 4 then return '' end
return redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
