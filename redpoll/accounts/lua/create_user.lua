-- create_user: write a new user's public record and secrets together.
-- KEYS[1]: user hash u:{uid}
-- KEYS[2]: secrets hash sec:{uid}
-- KEYS[3]: the sign-up's void marker void:{uid} (settle_sign_up.lua): set when a
--          worker gave this sign-up up as dead, so that it cannot finish late
-- ARGV[1]: number N of record field/value pairs that follow
-- ARGV[2 .. 2N+1]: record fields and values
-- ARGV[2N+2 ..]: secret fields and values (maybe none)
-- returns: 1, or error 'EXISTS' if the record is already there, or error
--          'ABANDONED' if the sign-up was given up
if redis.call('EXISTS', KEYS[3]) == 1 then return redis.error_reply('ABANDONED') end
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('EXISTS') end
local n = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2, 2 * n + 1))
redis.call('HSET', KEYS[1], 'rev', 1)  -- bumped on every change (users.current)
if #ARGV > 2 * n + 1 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 2 * n + 2))
end
return 1
