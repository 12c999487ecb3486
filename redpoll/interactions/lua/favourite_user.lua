-- favourite_user: copy a favourite's state into the user's own index (the
-- `favourited` flag and GET /api/v1/favourites), unless a newer operation on
-- the same status was copied already. Idempotent.
-- KEYS[1]: the user's favourites zset ufav:{uid} (sid -> favourite id)
-- (The same for boosts: ureb:{uid}, urebv:{uid}, urebv:{uid}:u.)
-- KEYS[2]: versions hash ufavv:{uid} (sid -> operation id applied)
-- KEYS[3]: undone zset ufavv:{uid}:u (sid -> operation id): statuses whose
--          last state copied is "not favourited"; past `kept` of them the
--          oldest go with their version (as favourite_status.lua)
-- ARGV[1]: status id
-- ARGV[2]: 1 favourited, 0 not
-- ARGV[3]: version of that state
-- ARGV[4]: favourite id (the score) when favourited
-- ARGV[5]: kept
-- returns: 1 applied, 0 stale
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if tonumber(ARGV[3]) < last then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
  local n, kept = redis.call('ZCARD', KEYS[3]), tonumber(ARGV[5])
  if n > kept then
    for _, old in ipairs(redis.call('ZRANGE', KEYS[3], 0, n - kept - 1)) do
      redis.call('HDEL', KEYS[2], old)
    end
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, n - kept - 1)
  end
end
return 1
