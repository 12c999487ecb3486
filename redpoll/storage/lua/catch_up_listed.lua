-- catch_up_listed: on a single server, a home catches up with the large
-- accounts it merges (redpoll.timelines.hybrid) in the home page's own round trip,
-- sent just before read_page_listed.lua, which then reads the caught-up
-- home. An account has news when its profile sequence (the user record's
-- 'pseq', bumped by record_post.lua for every status it records, boosts
-- included) differs from the one keys.large_marks(uid) holds for it; then
-- its newest ids are read: as many as were posted since, plus ARGV[3] more
-- (a status recorded after a newer one of the same author: ids are taken
-- before the profile write), at most ARGV[2] (no mark yet: ARGV[2]), less
-- those the top ARGV[8] entries of the home hold and, below the news, those
-- older than all of them; of all accounts' news, the newest ARGV[14] (the
-- home's cap: no older one could stay in it). A page whose accounts have no news reads no
-- profile and writes nothing.
-- The news pass the rules fan-out delivers by (home_rule.accepted and
-- left_out_boosts do the same on a cluster, where a script cannot build
-- keys): no deleted or direct status, no boost by a booster the user hides,
-- a reply only if the user follows the account replied to; the statuses go
-- into the home (newest first, once each, at most ARGV[14]), then each boost
-- by age, left out when its original or another boost of it is among the
-- ARGV[15] entries below it (Mastodon's recent-window check); a boost the
-- home held whose original just came in within that window below it is
-- taken out (fan-out would not have delivered it). A boost put in is
-- remembered in KEYS[7] as deliver_boost.lua remembers its own, so that a
-- later boost of the same status is left out. The marks move to the
-- sequences read; the delivery watermark is raised to the newest id put in
-- (mark_merged.lua's rule: no blind push of an older id lands above it).
-- Atomic, and idempotent (what is there stays once): cut short, it left
-- nothing, and the next page catches up.
-- Single server only: it reads keys it builds itself (user records,
-- profiles, statuses, boosts) from the name parts in ARGV (redpoll.core.keys.key_parts).
-- An entry left behind by an unfollow or a block cut short is not returned
-- (the follow set decides), as in large_followees.lua.
-- KEYS[1]: keys.large_following(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.hidden_reblogs(uid); KEYS[4]: keys.large_marks(uid);
-- KEYS[5]: keys.home(uid); KEYS[6]: keys.FANOUT_WATERMARK;
-- KEYS[7]: keys.home_reblogs(uid)
-- ARGV[1]: at most this many large accounts (limits.MERGED_ACCOUNTS_MAX)
-- ARGV[2]: at most this many ids read of one account (limits.CATCH_UP_PER_ACCOUNT)
-- ARGV[3]: ids read below the news (limits.CATCH_UP_OVERLAP)
-- ARGV[4], ARGV[5]: a user key's text before and after the user id
-- ARGV[6], ARGV[7]: a profile key's text before and after the user id
-- ARGV[8]: entries of the home checked (limits.CATCH_UP_HOME_CHECK)
-- ARGV[9], ARGV[10]: a status key's text before and after the status id
-- ARGV[11], ARGV[12]: the same for keys.reblogged_by
-- ARGV[13]: boosts of a status read (limits.CATCH_UP_BOOSTS_READ)
-- ARGV[14]: the home's cap; ARGV[15]: the boost window (limits.REBLOG_WINDOW)
-- ARGV[16], ARGV[17], ARGV[18]: the status fields of the visibility, the
--           account replied to and the original of a boost
-- ARGV[19]: boosts remembered per home (limits.HOME_REBLOGS_KEPT)
-- returns: {large account ids, how many entries of the home changed}
local call = redis.call
local home = KEYS[5]
-- the members with each one's pseq, in one call
local found = call('SORT_RO', KEYS[1], 'BY', 'nosort', 'GET', '#',
                   'GET', ARGV[4] .. '*' .. ARGV[5] .. '->pseq')
if #found == 0 then return {{}, 0} end
local members, seqs = {}, {}
for i = 1, #found, 2 do
  members[#members + 1] = found[i]
  seqs[#seqs + 1] = found[i + 1]
end
local scores = call('ZMSCORE', KEYS[2], unpack(members))
local large, seq_of, cap = {}, {}, tonumber(ARGV[1])
for i, uid in ipairs(members) do
  if scores[i] then
    large[#large + 1] = uid
    seq_of[#large] = seqs[i]
    if #large >= cap then break end
  end
end
if #large == 0 then return {{}, 0} end
local marks = call('HMGET', KEYS[4], unpack(large))
local most, overlap, check = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[8])

-- the news, less what the home's top holds
local news, moved, held, floor = {}, {}, nil, 0
for i, uid in ipairs(large) do
  local seq = seq_of[i]
  if seq and seq ~= marks[i] then
    local count, posted = most, most
    if marks[i] then
      posted = tonumber(seq) - tonumber(marks[i])
      if posted > 0 then count = math.min(most, posted + overlap) else posted = most end
    end
    local ids = call('ZRANGE', ARGV[6] .. uid .. ARGV[7], 0, count - 1, 'REV')
    if not held then
      local top = call('LRANGE', home, 0, check - 1)
      held = {}
      for _, v in ipairs(top) do held[v] = true end
      -- below the top's last entry, only a full top rules out a late one
      floor = #top == check and top[#top] + 0 or 0
    end
    for k, v in ipairs(ids) do
      if not held[v] and (k <= posted or v + 0 > floor) then news[#news + 1] = v end
    end
    moved[#moved + 1] = uid
    moved[#moved + 1] = seq
  end
end
if #moved == 0 then return {large, 0} end
local home_cap = tonumber(ARGV[14])
if #news > home_cap then
  -- the home keeps its newest `cap`: no older id can stay in it, so none is
  -- checked (bounds the work of a home with many accounts and no marks)
  table.sort(news, function(a, b) return a + 0 > b + 0 end)
  for k = #news, home_cap + 1, -1 do news[k] = nil end
end

-- the rules fan-out delivers by
local hidden = {}
for _, b in ipairs(call('SMEMBERS', KEYS[3])) do hidden[b] = true end
local originals, boosts, seen = {}, {}, {}
for _, v in ipairs(news) do
  if not seen[v] then
    seen[v] = true
    local f = call('HMGET', ARGV[9] .. v .. ARGV[10], 'uid', 'deleted', ARGV[16], ARGV[17],
                   ARGV[18])
    local author, reply_to, original = f[1], f[4], f[5]
    if author and not f[2] and f[3] ~= 'direct' then
      if original then
        if not hidden[author] then boosts[#boosts + 1] = {v + 0, original} end
      elseif not reply_to or reply_to == author or call('ZSCORE', KEYS[2], reply_to) then
        originals[#originals + 1] = v + 0
      end
    end
  end
end

-- the statuses into the home: only its head down to the first entry below
-- every one is written again (news go near the top)
local changed, window = 0, tonumber(ARGV[15])
local newest = 0
if #originals > 0 then
  table.sort(originals, function(a, b) return a > b end)
  newest = originals[1]
  local lowest = originals[#originals]
  local size, head = 64, nil
  while true do
    head = call('LRANGE', home, 0, size - 1)
    if #head < size or head[#head] + 0 < lowest then break end
    size = size * 4
  end
  local merged, i, j = {}, 1, 1
  while (i <= #head or j <= #originals) and #merged < home_cap do
    local o = head[i] and head[i] + 0 or -1
    local v = originals[j] or -1
    if o > v then
      merged[#merged + 1] = head[i]; i = i + 1
    elseif v > o then
      merged[#merged + 1] = string.format('%d', v); j = j + 1; changed = changed + 1
    else
      merged[#merged + 1] = head[i]; i = i + 1; j = j + 1
    end
  end
  call('LTRIM', home, #head, -1)
  for k = #merged, 1, -500 do
    local part = {}
    for x = k, math.max(1, k - 499), -1 do part[#part + 1] = merged[x] end
    call('LPUSH', home, unpack(part))
  end
  call('LTRIM', home, 0, home_cap - 1)
end

-- the boosts of an original: their ids above it, by boosters not hidden
local function boosts_of(original)
  local rows = call('ZRANGE', ARGV[11] .. original .. ARGV[12], '(' .. original, '+inf',
                    'BYSCORE', 'LIMIT', 0, ARGV[13], 'WITHSCORES')
  local out = {}
  for k = 1, #rows, 2 do
    if not hidden[rows[k]] then out[#out + 1] = rows[k + 1] end
  end
  return out
end

-- each boost by age: left out when its original or another boost of it is
-- among the `window` entries below it
table.sort(boosts, function(a, b) return a[1] < b[1] end)
for _, pair in ipairs(boosts) do
  local id, original = pair[1], pair[2]
  local sid = string.format('%d', id)
  -- the head down to `window` entries below the boost
  local size, head, at = 64, nil, nil
  while true do
    head = call('LRANGE', home, 0, size - 1)
    at = nil
    for k, v in ipairs(head) do
      if v + 0 <= id then at = k; break end
    end
    if #head < size or (at and #head - at >= window) then break end
    size = size * 4
  end
  at = at or #head + 1
  if head[at] ~= sid then
    local below = {}
    for k = at, math.min(#head, at + window - 1) do below[head[k]] = true end
    local out = below[original]
    if not out then
      for _, other in ipairs(boosts_of(original)) do
        if below[other] then out = true; break end
      end
    end
    if not out then
      if head[at] then call('LINSERT', home, 'BEFORE', head[at], sid)
      else call('RPUSH', home, sid) end
      call('LTRIM', home, 0, home_cap - 1)
      call('ZADD', KEYS[7], sid, original)  -- deliver_boost.lua's record
      local kept, n = tonumber(ARGV[19]), call('ZCARD', KEYS[7])
      if n > kept then call('ZREMRANGEBYRANK', KEYS[7], 0, n - kept - 1) end
      changed = changed + 1
      if id > newest then newest = id end
    end
  end
end

-- a boost the home held whose original just came in within the window
-- below it: out
for _, original in ipairs(originals) do
  local o = string.format('%d', original)
  for _, other in ipairs(boosts_of(o)) do
    local pos = call('LPOS', home, other)
    if pos then
      for _, v in ipairs(call('LRANGE', home, pos + 1, pos + window)) do
        if v == o then
          changed = changed + call('LREM', home, 1, other)
          break
        end
      end
    end
  end
end

call('HSET', KEYS[4], unpack(moved))
if newest > 0 then  -- mark_merged.lua's rule
  local mark = call('GET', KEYS[6]) or '0:d'
  local wid = tonumber(string.sub(mark, 1, string.find(mark, ':', 1, true) - 1))
  if newest >= wid then call('SET', KEYS[6], string.format('%d', newest) .. ':m') end
end
return {large, changed}
