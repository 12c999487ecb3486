-- media_attach: attach uploads to a status, all or none (posting.py calls
-- it in the post journal's first step, before the status is written; a
-- replay of that step finds them attached to the same status: no change).
-- KEYS[1..n]: the records, all of the status's author (one slot)
-- ARGV[1]: the status id
-- ARGV[2..n+1]: each record's version 'v' as read when the status was
--               prepared (what the status shows of it was copied then)
-- ARGV[n+2]: the scheduled status the uploads are held for (media_hold.lua)
--            when this status is its posting, else ''; attaching releases it
-- returns: {0, ''} attached; else {i, why} for the first record i that
--          cannot be: 'missing' (none, or removed), 'processing', 'failed',
--          'attached' (to another status), 'held' (for a scheduled status),
--          'changed' (since it was read)
local hold = ARGV[#KEYS + 2] or ''
for i, key in ipairs(KEYS) do
  local state, sid, v, sched = unpack(redis.call('HMGET', key, 'state', 'sid', 'v', 'sched'))
  if not state or state == 'gone' then return {i, 'missing'} end
  if state ~= 'ready' then return {i, state} end
  if sid and sid ~= ARGV[1] then return {i, 'attached'} end
  if not sid and sched and sched ~= hold then return {i, 'held'} end
  if not sid and v ~= ARGV[i + 1] then return {i, 'changed'} end
end
for _, key in ipairs(KEYS) do
  redis.call('HSET', key, 'sid', ARGV[1])
  redis.call('HDEL', key, 'sched')
end
return {0, ''}
