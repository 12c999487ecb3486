-- media_attach: attach uploads to a status, all or none (posting.py calls
-- it in the post journal's first step, before the status is written; a
-- replay of that step finds them attached to the same status: no change).
-- KEYS[1..n]: the records, all of the status's author (one slot)
-- ARGV[1]: the status id
-- ARGV[2..n+1]: each record's version 'v' as read when the status was
--               prepared (what the status shows of it was copied then)
-- returns: {0, ''} attached; else {i, why} for the first record i that
--          cannot be: 'missing' (none, or removed), 'processing', 'failed',
--          'attached' (to another status), 'changed' (since it was read)
for i, key in ipairs(KEYS) do
  local state, sid, v = unpack(redis.call('HMGET', key, 'state', 'sid', 'v'))
  if not state or state == 'gone' then return {i, 'missing'} end
  if state ~= 'ready' then return {i, state} end
  if sid and sid ~= ARGV[1] then return {i, 'attached'} end
  if not sid and v ~= ARGV[i + 1] then return {i, 'changed'} end
end
for _, key in ipairs(KEYS) do redis.call('HSET', key, 'sid', ARGV[1]) end
return {0, ''}
