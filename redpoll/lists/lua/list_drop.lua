-- list_drop: delete a list, its member set and its timeline together.
-- KEYS[1]: lists:{owner} hash
-- KEYS[2]: member zset of the list
-- KEYS[3]: the list timeline
-- ARGV[1]: list id
-- returns: the member ids (their reverse index entries are cleaned next), or
--          error 'NOLIST'
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return redis.error_reply('NOLIST') end
local members = redis.call('ZRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2], KEYS[3])
return members
