-- filter_put: write, replace or remove one filter of an account, only if it
-- is still as the caller read it (compare and set), and give the account's
-- filters a new version. Atomic: the bound's check, the write and the
-- version in one step; a caller whose read went stale gets CHANGED and
-- reads again.
-- KEYS[1]: the account's filters hash flt:{uid} (filter id -> JSON, 'v' -> version)
-- ARGV[1]: filter id    ARGV[2]: the filter's JSON as read ('' = absent)
-- ARGV[3]: its new JSON ('' = remove it)    ARGV[4]: most filters an account holds
-- ARGV[5]: the new version
-- returns: 1; error 'CHANGED' when the filter is not as read, 'FULL' at the bound
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (current or '') ~= ARGV[2] then
  return redis.error_reply('CHANGED filter')
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  if not current then
    local held = redis.call('HLEN', KEYS[1]) - redis.call('HEXISTS', KEYS[1], 'v')
    if held >= tonumber(ARGV[4]) then
      return redis.error_reply('FULL filters')
    end
  end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
redis.call('HSET', KEYS[1], 'v', ARGV[5])
return 1
