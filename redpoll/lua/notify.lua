-- notify: make or undo one notification of a user, found by its key
-- "<type>:<actor>:<target>" (so an undo finds what to remove), unless a newer
-- operation on the same key was applied already. A notification is made
-- only where none stands for the key (never made, or undone): one the user
-- dismissed is not made again by a repeat. Keeps at most `cap`
-- notifications, dropping the oldest with their index entries. Idempotent.
-- KEYS[1]: notification ids zset nt:{uid} (id -> id)
-- KEYS[2]: records hash ntr:{uid} (id -> JSON with at least "key")
-- KEYS[3]: index hash nti:{uid} (key -> "<operation id>:<notification id or 0>")
-- ARGV[1]: key
-- ARGV[2]: operation id (also the new notification's id)
-- ARGV[3]: '1' make, '0' undo
-- ARGV[4]: the record JSON (when making)
-- ARGV[5]: cap
-- returns: the notification id made, 0 if none was made now
local key, op = ARGV[1], tonumber(ARGV[2])
local cur = redis.call('HGET', KEYS[3], key)
local cv, cn = 0, '0'
if cur then
  local sep = string.find(cur, ':', 1, true)
  cv, cn = tonumber(string.sub(cur, 1, sep - 1)), string.sub(cur, sep + 1)
end
if op < cv then return 0 end
if ARGV[3] == '1' then
  if cn ~= '0' then  -- made already (maybe dismissed since)
    redis.call('HSET', KEYS[3], key, op .. ':' .. cn)
    return 0
  end
  redis.call('ZADD', KEYS[1], op, op)
  redis.call('HSET', KEYS[2], op, ARGV[4])
  redis.call('HSET', KEYS[3], key, op .. ':' .. op)
  local cap = tonumber(ARGV[5])
  while redis.call('ZCARD', KEYS[1]) > cap do
    local oldest = redis.call('ZPOPMIN', KEYS[1])[1]
    local record = redis.call('HGET', KEYS[2], oldest)
    redis.call('HDEL', KEYS[2], oldest)
    if record then
      local okey = cjson.decode(record)['key']
      local at = okey and redis.call('HGET', KEYS[3], okey)
      if at and string.sub(at, -(#oldest + 1)) == ':' .. oldest then redis.call('HDEL', KEYS[3], okey) end
    end
  end
  return op
end
if cn ~= '0' then
  redis.call('ZREM', KEYS[1], cn)
  redis.call('HDEL', KEYS[2], cn)
end
redis.call('HSET', KEYS[3], key, op .. ':0')
return 0
