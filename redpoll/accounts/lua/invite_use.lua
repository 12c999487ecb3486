-- invite_use: take one use of an invite for a sign-up, or give one back
-- when that sign-up failed, in one step: the check (it exists, has not
-- expired, has a use left) and the count together, so two sign-ups never
-- take the last use both.
-- KEYS[1]: the invite hash keys.invite(code) (fields: uid, exp (ms, 0 =
--          never), max (0 = no limit), uses)
-- ARGV[1]: now (ms)
-- ARGV[2]: 'take' or 'give'
-- returns: {state, creator id}: state 'ok', 'none' (no such invite),
--          'expired' or 'used' (no use left); nothing written unless 'ok'
local inv = redis.call('HMGET', KEYS[1], 'uid', 'exp', 'max', 'uses')
if not inv[1] then return {'none', 0} end
if ARGV[2] == 'give' then
  if tonumber(inv[4] or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'uses', -1) end
  return {'ok', inv[1]}
end
local exp = tonumber(inv[2] or '0')
if exp > 0 and exp <= tonumber(ARGV[1]) then return {'expired', inv[1]} end
local max = tonumber(inv[3] or '0')
if max > 0 and tonumber(inv[4] or '0') >= max then return {'used', inv[1]} end
redis.call('HINCRBY', KEYS[1], 'uses', 1)
return {'ok', inv[1]}
