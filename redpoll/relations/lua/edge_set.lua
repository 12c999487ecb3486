-- edge_set: set one side of a two-sided edge, with that side's counter. Used
-- for both sides of a follow (following:{a} has b, then followers:{b} has a)
-- and of a list membership (the list's members has m, then listed:{m} has
-- "owner:list"); edges.py runs the owner's side first (it is the truth) and
-- then copies its state to the other user's slot.
-- KEYS[1]: the zset of this side
-- KEYS[2]: hash that must hold field ARGV[3] (proves the owner, list or user
--          exists: u:{a} 'id', lists:{owner} '<lid>', u:{b} 'id')
-- KEYS[3..]: (optional, this side's slot) zsets of which one must hold
--          ARGV[1] for it to be added: a list member must be followed by
--          the list's owner or asked to be (following:{owner},
--          follow_requested:{owner}); checked with the add, so an unfollow
--          that runs before it is seen and one after it finds the member
-- ARGV[1]: member
-- ARGV[2]: '1' to add, '0' to remove
-- ARGV[3]: field of KEYS[2] that must exist
-- ARGV[4]: counter field in KEYS[2] ('' for none)
-- ARGV[5]: now in microseconds
-- ARGV[6]: maximum size of the set (0 = unbounded)
-- returns: 1 if changed, 0 if it was so already; or an error reply
--          'MISSING' (no such owner) / 'NOTFOLLOWED' (no guard holds it) / 'FULL'
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then
  return redis.error_reply('MISSING')
end
local changed = 0
if ARGV[2] == '1' then
  if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    if #KEYS > 2 then
      local held = false
      for k = 3, #KEYS do
        if redis.call('ZSCORE', KEYS[k], ARGV[1]) then held = true break end
      end
      if not held then return redis.error_reply('NOTFOLLOWED') end
    end
    local max = tonumber(ARGV[6])
    if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
      return redis.error_reply('FULL')
    end
    -- scores are unique and increasing so they work as a paging cursor
    local score = tonumber(ARGV[5])
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) >= score then score = tonumber(last[2]) + 1 end
    redis.call('ZADD', KEYS[1], score, ARGV[1])
    changed = 1
  end
else
  changed = redis.call('ZREM', KEYS[1], ARGV[1])
end
if changed == 1 and ARGV[4] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[4], ARGV[2] == '1' and 1 or -1)
  -- a counter lives in a user record: mark the record changed (readers that
  -- keep decoded users compare 'rev', users.current)
  redis.call('HINCRBY', KEYS[2], 'rev', 1)
end
return changed
