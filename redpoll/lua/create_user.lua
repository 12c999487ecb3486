-- create_user: write a new user's public record and secrets together.
-- KEYS[1]: user hash u:{uid}
-- KEYS[2]: secrets hash sec:{uid}
-- ARGV[1]: number N of record field/value pairs that follow
-- ARGV[2 .. 2N+1]: record fields and values
-- ARGV[2N+2 ..]: secret fields and values (maybe none)
-- returns: 1, or error 'EXISTS' if the record is already there
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('EXISTS') end
local n = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2, 2 * n + 1))
redis.call('HSET', KEYS[1], 'rev', 1)  -- bumped on every change (users.current)
if #ARGV > 2 * n + 1 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 2 * n + 2))
end
return 1
