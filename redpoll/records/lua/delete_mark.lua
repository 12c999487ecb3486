-- delete_mark: the owner check and the point of no return of a delete (the
-- cluster variant; delete_mark_listed.lua is the single-server one). The
-- status hash becomes a tombstone at once: readers skip it, and a post
-- journal replayed late finds it and stops (status_create.lua). The
-- tombstone keeps id, uid and who marked it, and expires after `ttl`.
-- KEYS[1]: status hash st:{sid}
-- ARGV[1]: id of the user asking
-- ARGV[2]: marker: the id of the delete journal entry doing this
-- ARGV[3]: seconds the tombstone is kept
-- returns: {mine, author id}: mine 1 if this marker marked it (now or in
--          an earlier run of the same journal entry), else 0;
--          error 'NOTFOUND' / 'FORBIDDEN'
local call = redis.call
local author = call('HGET', KEYS[1], 'uid')
if not author then return redis.error_reply('NOTFOUND') end
if author ~= ARGV[1] then return redis.error_reply('FORBIDDEN') end
local marker = call('HGET', KEYS[1], 'deleted')
if marker then return {marker == ARGV[2] and 1 or 0, author} end
local sid = call('HGET', KEYS[1], 'id')
call('DEL', KEYS[1])
call('HSET', KEYS[1], 'id', sid, 'uid', author, 'deleted', ARGV[2])
call('EXPIRE', KEYS[1], ARGV[3])
return {1, author}
