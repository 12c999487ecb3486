-- layout_record: record how far a migration went, only while the caller
-- still holds the migration lock (a process whose lock expired and was
-- taken over writes nothing: the new holder's record stands).
-- KEYS[1]: the lock keys.LAYOUT_LOCK    KEYS[2]: the layout hash keys.LAYOUT
-- ARGV[1]: "<token> <host> <pid>" (the lock's holder)    ARGV[2]: migration number
-- ARGV[3]: 'cursor' (ARGV[4]: where it goes on from) or 'done' (ARGV[4]:
--          what it did, as recorded in field done.<n>; the version becomes
--          the number, the cursor goes)
-- returns: 1 if recorded, 0 if the lock is not the caller's
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local n = ARGV[2]
if ARGV[3] == 'cursor' then
  redis.call('HSET', KEYS[2], 'cursor.' .. n, ARGV[4])
else
  local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
  if tonumber(n) > version then redis.call('HSET', KEYS[2], 'version', n) end
  redis.call('HSET', KEYS[2], 'done.' .. n, ARGV[4])
  redis.call('HDEL', KEYS[2], 'cursor.' .. n)
end
return 1
