-- sched_move: a scheduled status's new time, and its job's, in one atomic
-- step (redpoll.scheduling).
-- KEYS: as sched_create.lua (index, times, records, jobs, due set)
-- ARGV[1]: id   ARGV[2]: the new time (ms)   ARGV[3]: most on one day
-- ARGV[4], ARGV[5]: that day's first ms and the next day's first ms
-- returns: 'ok'; 'missing' (none); 'posting' (its job left the due set: it
--          is being posted); 'daily' (refused)
local job = redis.call('HGET', KEYS[4], ARGV[1])
if not job then return 'missing' end
if not redis.call('ZSCORE', KEYS[5], job) then return 'posting' end
local day = redis.call('ZCOUNT', KEYS[2], ARGV[4], '(' .. ARGV[5])
local now = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
if now and now >= tonumber(ARGV[4]) and now < tonumber(ARGV[5]) then day = day - 1 end
if day >= tonumber(ARGV[3]) then return 'daily' end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[2], job)
return 'ok'
