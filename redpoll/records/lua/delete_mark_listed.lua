-- delete_mark_listed: delete_mark.lua on a single server, where the id also
-- goes into the log of changed statuses (keys.CHANGED_STATUSES) as deleted
-- (version -1) in the same step, so pages that check ids there
-- (read_page_listed.lua) skip it at once. The entry stays until the
-- status's cleanup has taken the id out of every timeline (forget_deleted
-- .lua) and a while after (`ARGV[6]`). If the log is still full, entries go
-- (the lowest scores first) and the database
-- epoch gets a new value in the same step: every process drops what it
-- kept (redpoll.core.memo), since the log no longer proves what did not change.
-- The status hash becomes a tombstone (see delete_mark.lua).
-- KEYS[1]: status hash st:{sid}
-- KEYS[2]: the log of changed statuses, zset id -> version (-1 = deleted,
--          -<ms> = deleted and cleaned up at that time)
-- KEYS[3]: the database epoch (keys.EPOCH)
-- ARGV[1]: id of the user asking
-- ARGV[2]: marker: the id of the delete journal entry doing this
-- ARGV[3]: seconds the tombstone is kept
-- ARGV[4]: most entries KEYS[2] keeps
-- ARGV[5]: a new epoch value, used if entries had to go
-- ARGV[6]: -(ms before which finished deletes' entries are dropped)
-- returns: {mine, author id} as delete_mark.lua; error 'NOTFOUND' / 'FORBIDDEN'
local call = redis.call
local author = call('HGET', KEYS[1], 'uid')
if not author then return redis.error_reply('NOTFOUND') end
if author ~= ARGV[1] then return redis.error_reply('FORBIDDEN') end
local sid = call('HGET', KEYS[1], 'id')
call('ZADD', KEYS[2], -1, sid)
call('ZREMRANGEBYSCORE', KEYS[2], '(' .. ARGV[6], '(-1')
local over = call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  call('ZPOPMIN', KEYS[2], over)
  call('SET', KEYS[3], ARGV[5])
end
local marker = call('HGET', KEYS[1], 'deleted')
if marker then return {marker == ARGV[2] and 1 or 0, author} end
call('DEL', KEYS[1])
call('HSET', KEYS[1], 'id', sid, 'uid', author, 'deleted', ARGV[2])
call('EXPIRE', KEYS[1], ARGV[3])
return {1, author}
