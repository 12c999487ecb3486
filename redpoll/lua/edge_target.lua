-- edge_target: copy the state of an edge to the other user's slot
-- (followers:{b} has a / listed:{m} has "owner:list") with b's counter. The
-- status ids the owner's timeline must gain or lose are read next with a
-- plain ZREVRANGEBYSCORE: handing 1,000 ids through Lua costs more than the
-- rest of a follow.
-- KEYS[1]: target zset (followers:{b} / listed:{m})
-- KEYS[2]: user hash u:{b}, must exist
-- ARGV[1]: member
-- ARGV[2]: '1' present, '0' absent
-- ARGV[3]: counter field in KEYS[2] ('' for none)
-- ARGV[4]: now in microseconds
-- returns: 1 if the set changed, else 0; error reply 'NOUSER'
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
return changed
