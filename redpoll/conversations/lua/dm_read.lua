-- dm_read: mark one of a user's conversations read (ARGV[2] = '0') or
-- unread ('1'), keeping its last status.
-- KEYS[1]: the user's conversation states hash dm:{uid}:s
-- ARGV[1]: conversation id   ARGV[2]: '0' read, '1' unread
-- returns: 1 if the conversation exists, else 0
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local sid = string.sub(v, 1, string.find(v, ':', 1, true) - 1)
redis.call('HSET', KEYS[1], ARGV[1], sid .. ':' .. ARGV[2])
return 1
