-- delete_mark: the owner check and the point of no return of a delete. The
-- status hash is marked deleted (readers skip it at once) and is removed only
-- after the rest of the delete is done, so a delete cut short can be re-run.
-- KEYS[1]: status hash st:{sid}
-- ARGV[1]: id of the user asking
-- returns: {code, author id}: code 1 marked now, 0 was already marked (finish
--          the delete again, idempotently); error 'NOTFOUND' / 'FORBIDDEN'
local author = redis.call('HGET', KEYS[1], 'uid')
if not author then return redis.error_reply('NOTFOUND') end
if author ~= ARGV[1] then return redis.error_reply('FORBIDDEN') end
if redis.call('HSETNX', KEYS[1], 'deleted', '1') == 0 then return {0, author} end
return {1, author}
