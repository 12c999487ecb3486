-- media_hold: hold uploads for a scheduled status (redpoll.scheduling), all
-- or none, or release those it holds. A held upload ('sched' set) is not
-- attachable to another status nor another scheduled status, and the sweep
-- of never-attached uploads leaves it (media_drop.lua 'stale').
-- KEYS[1..n]: the records, all of one owner (one slot)
-- ARGV[1]: the scheduled status's id
-- ARGV[2]: 'hold' or 'release'
-- returns: hold: {0, ''} held (again: no change); else {i, why} for the first
--          record i that cannot be: 'missing', 'processing', 'failed',
--          'attached' (to a status), 'held' (for another scheduled status);
--          release: the 'at' of each record now neither attached nor held
--          (released now or before: a replay gets them again), '' for others
if ARGV[2] == 'release' then
  local out = {}
  for i, key in ipairs(KEYS) do
    local state, sid, sched, at = unpack(redis.call('HMGET', key, 'state', 'sid', 'sched', 'at'))
    if sched == ARGV[1] then
      redis.call('HDEL', key, 'sched')
      sched = false
    end
    if state and state ~= 'gone' and not sid and not sched then
      out[i] = at or '0'
    else
      out[i] = ''
    end
  end
  return out
end
for i, key in ipairs(KEYS) do
  local state, sid, sched = unpack(redis.call('HMGET', key, 'state', 'sid', 'sched'))
  if not state or state == 'gone' then return {i, 'missing'} end
  if state ~= 'ready' then return {i, state} end
  if sid then return {i, 'attached'} end
  if sched and sched ~= ARGV[1] then return {i, 'held'} end
end
for _, key in ipairs(KEYS) do redis.call('HSET', key, 'sched', ARGV[1]) end
return {0, ''}
