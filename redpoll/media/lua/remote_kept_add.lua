-- remote_kept_add: note a copy of another server's file kept here
-- (redpoll/media/remote.py), before its files are written: the copy's
-- entry, its weight added to the total, its time in the eviction order.
-- KEYS[1]: media:{remote} (zset member -> ms)   KEYS[2]: media:{remote}:files
-- KEYS[3]: media:{remote}:bytes
-- ARGV[1]: the member   ARGV[2]: now (ms)   ARGV[3]: bytes   ARGV[4]: its names
-- returns: the names the member's entry held before ('' none), now replaced
local old = redis.call('HGET', KEYS[2], ARGV[1])
local before = ''
if old then
  local size, names = string.match(old, '^(%d+) ?(.*)$')
  redis.call('DECRBY', KEYS[3], size or 0)
  before = names or ''
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ' ' .. ARGV[4])
redis.call('INCRBY', KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return before
