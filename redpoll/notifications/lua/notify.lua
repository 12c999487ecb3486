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
-- KEYS[7]: the user's notification policy hash npol:{uid} (field -> accept/filter/drop)
-- KEYS[8]: accepted senders set nperm:{uid} (never filtered)
-- KEYS[9]: filtered notifications by sender zset ntfl:{uid}, all scored 0,
--          members "<actor, 20 digits>\0<id, 16 digits>"
-- KEYS[10]: notification requests zset nrq:{uid} (sender -> request id)
-- KEYS[11]: request fields hash nrqr:{uid} ("<sender>:at|upd|last|n")
-- KEYS[12]: the user's following zset fing:{uid}
-- KEYS[13]: the user's followers zset fers:{uid} (follower -> since, microseconds)
-- ARGV[1]: key
-- ARGV[2]: operation id (also the new notification's id)
-- ARGV[3]: '1' make, '0' undo
-- ARGV[4]: the record JSON (when making)
-- ARGV[5]: cap
-- ARGV[6]: group prefix ("favourite-<status>", "follow", ...) or '' (not grouped)
-- ARGV[7]: this hour (ms since the epoch / 3,600,000)
-- ARGV[8]: longest span of one group in hours
-- ARGV[9]: kept (KEYS[5])
-- ARGV[10]: '1' when the kind may be filtered (Mastodon 4.3's filterable types)
-- ARGV[11]: facts about the sender read elsewhere, comma-separated, of
--           new_account, limited, private_mention
-- ARGV[12]: the policy's defaults, comma-separated, in the order
--           for_not_following, for_not_followers, for_new_accounts,
--           for_private_mentions, for_limited_accounts
-- ARGV[13]: '1' when a filtered one of this kind goes into the sender's
--           notification request (mentions)
-- ARGV[14]: now (ms)
-- ARGV[15]: followers since after this (microseconds) are not followers yet
-- ARGV[16]: the status it is about (the request's last status) or ''
-- A notification to be made is decided by the policy first (Mastodon 4.3's
-- drop and filter conditions, strictest wins, none for a sender in KEYS[8]):
-- dropped, nothing is made; filtered, it is listed with its record marked
-- (it starts '{"filtered":1,'), ungrouped, in KEYS[9] and, for a mention,
-- counted in the sender's request (made now if none).
-- returns: {notification id, record as stored, push subscriptions, 1 when
-- filtered else 0} when one was made now, else 0
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

local FLAG = '{"filtered":1,'
local function pad(v, n) v = tostring(v); return string.rep('0', n - #v) .. v end

local function forget(id)  -- a notification out of the list, records and group index
  local raw = redis.call('HGET', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  if raw then
    local m = member(id, raw)
    if m then redis.call('ZREM', KEYS[4], m) end
    if string.sub(raw, 1, #FLAG) == FLAG then  -- out of its sender's filtered ones and request
      local r = cjson.decode(raw)
      local actor = tostring(r['actor'])
      redis.call('ZREM', KEYS[9], pad(actor, 20) .. '\0' .. pad(id, 16))
      if r['type'] == 'mention' and redis.call('HINCRBY', KEYS[11], actor .. ':n', -1) <= 0 then
        redis.call('ZREM', KEYS[10], actor)
        redis.call('HDEL', KEYS[11], actor .. ':at', actor .. ':upd', actor .. ':last', actor .. ':n')
      end
    end
  end
  return raw
end

-- the policy's answer for this sender: 'accept', 'filter' or 'drop'
local function decided(actor)
  if ARGV[10] ~= '1' or redis.call('SISMEMBER', KEYS[8], actor) == 1 then return 'accept' end
  local facts = {}
  for f in string.gmatch(ARGV[11], '[^,]+') do facts[f] = true end
  local defaults = {}
  for d in string.gmatch(ARGV[12], '[^,]+') do defaults[#defaults + 1] = d end
  local not_following = not redis.call('ZSCORE', KEYS[12], actor)
  local since = redis.call('ZSCORE', KEYS[13], actor)
  local not_follower = (not since) or tonumber(since) > tonumber(ARGV[15])
  local tripped = {
    {'for_not_following', not_following},
    {'for_not_followers', not_follower},
    {'for_new_accounts', facts['new_account'] and not_following},
    {'for_private_mentions', facts['private_mention'] and not_following},
    {'for_limited_accounts', facts['limited'] and not_following},
  }
  local out = 'accept'
  for i, t in ipairs(tripped) do
    if t[2] then
      local v = redis.call('HGET', KEYS[7], t[1]) or defaults[i]
      if v == 'drop' then return 'drop' end
      if v == 'filter' then out = 'filter' end
    end
  end
  return out
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
  local actor = tostring(cjson.decode(record)['actor'])
  local decision = decided(actor)
  if decision == 'drop' then return 0 end
  local filtered = decision == 'filter'
  local prefix = filtered and '' or ARGV[6]
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
  if filtered then
    record = FLAG .. string.sub(record, 2)
    redis.call('ZADD', KEYS[9], 0, pad(actor, 20) .. '\0' .. pad(ARGV[2], 16))
    if ARGV[13] == '1' then
      if redis.call('ZSCORE', KEYS[10], actor) == false then
        redis.call('ZADD', KEYS[10], op, actor)
        redis.call('HSET', KEYS[11], actor .. ':at', ARGV[14])
      end
      redis.call('HSET', KEYS[11], actor .. ':upd', ARGV[14], actor .. ':last', ARGV[16])
      redis.call('HINCRBY', KEYS[11], actor .. ':n', 1)
    end
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
  return {op, record, redis.call('HLEN', KEYS[6]), filtered and 1 or 0}
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
