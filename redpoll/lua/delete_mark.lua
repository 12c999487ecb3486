-- delete_mark: the owner check and the point of no return of a delete. The
-- status hash is marked deleted (readers skip it at once) and is removed only
-- after the rest of the delete is done, so a delete cut short can be re-run.
-- KEYS[1]: status hash st:{sid}
-- KEYS[2]: (optional, single server) statuses deleted lately, a ZSET id -> ms
--          (keys.DELETED_STATUSES): the id goes in with the mark, so pages
--          that check ids there see the delete at once
-- ARGV[1]: id of the user asking
-- ARGV[2]: with KEYS[2], now in ms
-- ARGV[3]: with KEYS[2], ms before which entries are dropped
-- ARGV[4]: with KEYS[2], most entries kept (the oldest go first)
-- returns: {code, author id}: code 1 marked now, 0 was already marked (finish
--          the delete again, idempotently); error 'NOTFOUND' / 'FORBIDDEN'
local author = redis.call('HGET', KEYS[1], 'uid')
if not author then return redis.error_reply('NOTFOUND') end
if author ~= ARGV[1] then return redis.error_reply('FORBIDDEN') end
if KEYS[2] then
  local sid = redis.call('HGET', KEYS[1], 'id')
  redis.call('ZADD', KEYS[2], ARGV[2], sid)
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[4]) + 1))
end
if redis.call('HSETNX', KEYS[1], 'deleted', '1') == 0 then return {0, author} end
return {1, author}
