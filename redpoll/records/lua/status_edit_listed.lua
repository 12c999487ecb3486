-- status_edit_listed: an edit of a live status by its author, whole in one step:
-- its history gets the edit (and the original first, when this is the first
-- edit), the record's fields change, and it gets a new version 'v' (which
-- makes every process read it again: redpoll.core.memo); on a single server
-- the new version also goes into the log of changed statuses
-- (keys.CHANGED_STATUSES), from which pages take versions
-- (read_page_listed.lua). Refused, with nothing written, when the status is
-- gone or another's, when it changed since the edit was made from it (the
-- caller reads it again), or when its history is full. status_edit.lua is
-- the cluster's variant.
-- KEYS[1]: status hash st:{sid}
-- KEYS[2]: its history, list edits:{sid} (JSON versions, oldest first)
-- KEYS[3]: the log of changed statuses, zset id -> version
-- ARGV[1]: the author's id
-- ARGV[2]: the version 'v' the edit was made from
-- ARGV[3]: the most entries the history may hold
-- ARGV[4]: the original's entry (pushed first when the history is empty)
-- ARGV[5]: this edit's entry
-- ARGV[6]: n, the number of fields to remove, then those n fields
-- ARGV[7+n..]: field/value pairs to set
-- returns: the new version; errors NOTFOUND (missing or deleted), FORBIDDEN
-- (another's), CHANGED (not at version ARGV[2]), FULL (the history is full)
local call = redis.call
if call('EXISTS', KEYS[1]) == 0 or call('HEXISTS', KEYS[1], 'deleted') == 1 then
  return redis.error_reply('NOTFOUND')
end
if call('HGET', KEYS[1], 'uid') ~= ARGV[1] then
  return redis.error_reply('FORBIDDEN')
end
if (call('HGET', KEYS[1], 'v') or '1') ~= ARGV[2] then
  return redis.error_reply('CHANGED')
end
local held = call('LLEN', KEYS[2])
local adding = (held == 0) and 2 or 1
if held + adding > tonumber(ARGV[3]) then
  return redis.error_reply('FULL')
end
if held == 0 then call('RPUSH', KEYS[2], ARGV[4]) end
call('RPUSH', KEYS[2], ARGV[5])
local n = tonumber(ARGV[6])
if n > 0 then call('HDEL', KEYS[1], unpack(ARGV, 7, 6 + n)) end
if #ARGV > 6 + n then call('HSET', KEYS[1], unpack(ARGV, 7 + n)) end
local v = call('HINCRBY', KEYS[1], 'v', 1)
call('ZADD', KEYS[3], v, call('HGET', KEYS[1], 'id'))
return v
