-- sched_create: write a scheduled status and queue its job for its time, in
-- one atomic step, if the account's limits allow (redpoll.scheduling).
-- KEYS[1]: index (id -> id)   KEYS[2]: times (id -> ms)
-- KEYS[3]: records (id -> JSON)   KEYS[4]: jobs (id -> job JSON)
-- KEYS[5]: the shard's due set (jobs:{shard}:due; all in one slot)
-- ARGV[1]: id   ARGV[2]: when (ms)   ARGV[3]: record JSON   ARGV[4]: job JSON
-- ARGV[5]: most scheduled at once   ARGV[6]: most on one day
-- ARGV[7], ARGV[8]: that day's first ms and the next day's first ms
-- returns: 'ok'; 'total' or 'daily' (refused, nothing written)
if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then return 'ok' end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 'total' end
if redis.call('ZCOUNT', KEYS[2], ARGV[7], '(' .. ARGV[8]) >= tonumber(ARGV[6]) then
  return 'daily'
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[5], ARGV[2], ARGV[4])
return 'ok'
