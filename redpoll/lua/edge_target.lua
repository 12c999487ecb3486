-- edge_target: copy the state of an edge to the other user's slot
-- (followers:{b} has a / listed:{m} has "owner:list") with b's counter, and
-- return the status ids the owner's timeline must gain or lose.
-- KEYS[1]: target zset (followers:{b} / listed:{m})
-- KEYS[2]: user hash u:{b}, must exist
-- KEYS[3]: profile zset prof:{b}
-- ARGV[1]: member
-- ARGV[2]: '1' present, '0' absent
-- ARGV[3]: counter field in KEYS[2] ('' for none)
-- ARGV[4]: now in microseconds
-- ARGV[5]: how many ids to return at most
-- ARGV[6]: lowest id to return ('-inf' for any)
-- returns: {changed (0/1), ids newest first...}, or error reply 'NOUSER'
if redis.call('HEXISTS', KEYS[2], 'id') == 0 then
  return redis.error_reply('NOUSER')
end
local changed = 0
if ARGV[2] == '1' then
  if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    local score = tonumber(ARGV[4])
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) >= score then score = tonumber(last[2]) + 1 end
    redis.call('ZADD', KEYS[1], score, ARGV[1])
    changed = 1
  end
else
  changed = redis.call('ZREM', KEYS[1], ARGV[1])
end
if changed == 1 and ARGV[3] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[3], ARGV[2] == '1' and 1 or -1)
end
local ids = redis.call('ZREVRANGEBYSCORE', KEYS[3], '+inf', ARGV[6], 'LIMIT', 0, tonumber(ARGV[5]))
table.insert(ids, 1, changed)
return ids
