-- fts_swap: record the posting keys a status is in now (redpoll.search.index),
-- if, and only if, the status and its record are still as the indexing run
-- read them. The run has added the status to its new posting lists and taken
-- it out of the old ones before this; a run that lost a race (the status was
-- edited or deleted meanwhile, or another run recorded first) gets 0 and
-- starts again from what is there now.
-- KEYS[1]: status hash st:{sid}; KEYS[2]: its record fts:s:{sid} (same slot)
-- ARGV[1]: the status's state as read ("<v>|<d>": its version, "d" if deleted)
-- ARGV[2]: the record as read ('' for none)
-- ARGV[3]: the new record ('' for none: the status is in no posting list)
-- returns: 1 recorded, 0 changed meanwhile (nothing written)
local call = redis.call
local v, deleted = unpack(call('HMGET', KEYS[1], 'v', 'deleted'))
local state = (v or '') .. '|' .. (deleted and 'd' or '')
if call('EXISTS', KEYS[1]) == 0 then state = '|' end
if state ~= ARGV[1] or (call('GET', KEYS[2]) or '') ~= ARGV[2] then
  return 0
end
if ARGV[3] == '' then call('DEL', KEYS[2]) else call('SET', KEYS[2], ARGV[3]) end
return 1
