-- notify: make or undo one notification of a user, found by its key
-- "<type>:<actor>:<target>" (so an undo finds what to remove), unless a newer
-- operation on the same key was applied already. A notification is made
-- only where none stands for the key (never made, or undone): one the user
-- dismissed is not made again by a repeat. Keeps at most `cap`
-- notifications, dropping the oldest with their index entries. Idempotent.
-- A groupable notification (ARGV[6] not '') gets its group key here, as
-- Mastodon 4.3 makes it: "<prefix>-<hour bucket>", where the bucket is the
-- one of the newest group of that prefix if it started less than
-- ARGV[8] hours ago, else this hour; it is written into the record and into
-- the group index (KEYS[4]) that grouped reads count and sample.
-- KEYS[1]: notification ids zset nt:{uid} (id -> id)
-- KEYS[2]: records hash ntr:{uid} (id -> JSON with at least "key")
-- KEYS[3]: index hash nti:{uid} (key -> "<operation id>:<notification id or 0>")
-- KEYS[4]: group index zset ntg:{uid}, all scored 0, members
--          "<prefix>\0<bucket, 10 digits>\0<id, 16 digits>\0<actor>"
-- KEYS[5]: done zset nti:{uid}:u (key -> operation id): index entries that
--          stand for no listed notification (undone, or dismissed by
--          notification_dismiss*.lua); past `kept` of them the oldest leave
--          the index (a repeat of that action long after may notify again)
-- KEYS[6]: the user's push subscriptions hash push:{uid} (only counted)
-- ARGV[1]: key
-- ARGV[2]: operation id (also the new notification's id)
-- ARGV[3]: '1' make, '0' undo
-- ARGV[4]: the record JSON (when making)
-- ARGV[5]: cap
-- ARGV[6]: group prefix ("favourite-<status>", "follow", ...) or '' (not grouped)
-- ARGV[7]: this hour (ms since the epoch / 3,600,000)
-- ARGV[8]: longest span of one group in hours
-- ARGV[9]: kept (KEYS[5])
-- returns: {notification id, record as stored, push subscriptions} when one
-- was made now, else 0
local key, op = ARGV[1], tonumber(ARGV[2])

-- the group index member of a record (nil when it has no group)
local function member(id, raw)
  local r = cjson.decode(raw)
  local gk = r['group_key']
  if type(gk) ~= 'string' then return nil end
  local sep = string.find(gk, '-[0-9]+$')
  if not sep then return nil end
  return string.sub(gk, 1, sep - 1) .. '\0' .. string.format('%010d', tonumber(string.sub(gk, sep + 1)))
    .. '\0' .. string.format('%016d', tonumber(id)) .. '\0' .. tostring(r['actor'])
end

local function forget(id)  -- a notification out of the list, records and group index
  local raw = redis.call('HGET', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  if raw then
    local m = member(id, raw)
    if m then redis.call('ZREM', KEYS[4], m) end
  end
  return raw
end

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
  local record = ARGV[4]
  local prefix = ARGV[6]
  if prefix ~= '' then
    local bucket = tonumber(ARGV[7])
    local newest = redis.call('ZREVRANGEBYLEX', KEYS[4], '(' .. prefix .. '\1', '[' .. prefix .. '\0',
                              'LIMIT', 0, 1)[1]
    if newest then
      local last = tonumber(string.sub(newest, #prefix + 2, #prefix + 11))
      if bucket < last + tonumber(ARGV[8]) then bucket = last end
    end
    -- spliced in, not re-encoded: cjson would round large numbers
    record = '{"group_key":"' .. prefix .. '-' .. bucket .. '",' .. string.sub(record, 2)
    redis.call('ZADD', KEYS[4], 0, prefix .. '\0' .. string.format('%010d', bucket) .. '\0'
               .. string.format('%016d', op) .. '\0' .. tostring(cjson.decode(record)['actor']))
  end
  redis.call('ZADD', KEYS[1], op, op)
  redis.call('HSET', KEYS[2], op, record)
  redis.call('HSET', KEYS[3], key, op .. ':' .. op)
  redis.call('ZREM', KEYS[5], key)
  local cap = tonumber(ARGV[5])
  while redis.call('ZCARD', KEYS[1]) > cap do
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
    local raw = forget(oldest)
    if raw then
      local okey = cjson.decode(raw)['key']
      local at = okey and redis.call('HGET', KEYS[3], okey)
      if at and string.sub(at, -(#oldest + 1)) == ':' .. oldest then redis.call('HDEL', KEYS[3], okey) end
    end
  end
  return {op, record, redis.call('HLEN', KEYS[6])}
end
if cn ~= '0' then forget(cn) end
redis.call('HSET', KEYS[3], key, op .. ':0')
redis.call('ZADD', KEYS[5], op, key)
local n, kept = redis.call('ZCARD', KEYS[5]), tonumber(ARGV[9])
if n > kept then
  for _, old in ipairs(redis.call('ZRANGE', KEYS[5], 0, n - kept - 1)) do
    local at = redis.call('HGET', KEYS[3], old)
    if at then
      local nid = string.sub(at, string.find(at, ':', 1, true) + 1)
      if nid == '0' or not redis.call('ZSCORE', KEYS[1], nid) then redis.call('HDEL', KEYS[3], old) end
    end
  end
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, n - kept - 1)
end
return 0
