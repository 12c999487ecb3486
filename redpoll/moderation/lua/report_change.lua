-- report_change: a moderator's change of one report, in one step with the
-- index of open reports (both in the {reports} slot), only if the report
-- exists.
-- KEYS[1]: the report keys.report(rid)   KEYS[2]: keys.REPORTS_OPEN
-- ARGV[1]: the change: 'resolve' (ARGV[3]: by whom), 'reopen',
--          'assign' (ARGV[3]: to whom), 'unassign',
--          'update' (ARGV[3]: category, ARGV[4]: rule ids' JSON)
-- ARGV[2]: now (ms)
-- returns: the report's fields (HGETALL); error 'MISSING' if there is none
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return redis.error_reply('MISSING report') end
local op, at = ARGV[1], ARGV[2]
local rid = redis.call('HGET', KEYS[1], 'id')
if op == 'resolve' then
  if redis.call('HEXISTS', KEYS[1], 'resolved') == 0 then
    redis.call('HSET', KEYS[1], 'resolved', at, 'taken_by', ARGV[3])
  end
  redis.call('ZREM', KEYS[2], rid)
elseif op == 'reopen' then
  redis.call('HDEL', KEYS[1], 'resolved', 'taken_by')
  redis.call('ZADD', KEYS[2], rid, rid)
elseif op == 'assign' then
  redis.call('HSET', KEYS[1], 'assigned', ARGV[3])
elseif op == 'unassign' then
  redis.call('HDEL', KEYS[1], 'assigned')
elseif op == 'update' then
  redis.call('HSET', KEYS[1], 'category', ARGV[3], 'rules', ARGV[4])
else
  return redis.error_reply('unknown change ' .. op)
end
redis.call('HSET', KEYS[1], 'updated', at)
return redis.call('HGETALL', KEYS[1])
