-- profile_image: point a user's avatar or header at newly stored files
-- (redpoll/media/profile_images.py), if it still points where the caller
-- read it pointing (a compare-and-set: of two uploads at once one wins,
-- and the other's journal removes its files).
-- KEYS[1]: the user record u:{uid}
-- ARGV[1]: 'avatar' or 'header'
-- ARGV[2]: the files it is expected to name now ('' none)
-- ARGV[3]: its new URL; ARGV[4]: its new still URL; ARGV[5]: its new files
-- returns: 1 set, 0 it changed meanwhile, -1 no such user
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return -1 end
local kind = ARGV[1]
local now = redis.call('HGET', KEYS[1], kind .. '_f') or ''
if now ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], kind, ARGV[3], kind .. '_s', ARGV[4], kind .. '_f', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'rev', 1)  -- the user record changed (users.current)
return 1
