-- catch_up_plain: on a single server, a home page's catch-up with its
-- large accounts (redpoll.timelines.hybrid) as far as it needs no rule, in
-- the page's own round trip (a fast-path variant of large_followees.lua,
-- the news reads and catch_up.lua; single server only: the accounts'
-- records and profiles are slots of their own). The caller names the large
-- accounts it expects (what the user's last page found); if the user's set
-- (KEYS[6]) holds others, nothing is done and {0} returned.
-- For each account still followed (the follow set decides, as in
-- large_followees.lua) whose profile sequence ('pseq' of its record) moved
-- past the home's mark for it: its newest ids (as many as it posted since,
-- plus `overlap`, at most `most`), less those the home's top `check`
-- entries hold and, past the ones posted since, those below the top's last
-- entry (as hybrid catches up on a cluster). Those not among the account's
-- ruled statuses (keys.ruled_posts: the statuses the home rule must look
-- at) are its plain ones, which the caller asked the rule about before
-- sending this (home_rule.plain_taken): they go into the home, newest
-- first, once each, at most `cap`. An account with no ruled news has its
-- mark moved to the sequence read; one with ruled news keeps its mark, and
-- its sequence and ruled members are returned: the caller decides them,
-- and catch_up.lua writes them and moves the mark. Also returned: the
-- plain ids put in of which the home recorded a boost (KEYS[4]), whose
-- window the caller checks, and the hidden boosters (only when there are
-- ruled news). It decides nothing about a status. The delivery watermark
-- is raised to the newest id put in (mark_merged.lua's rule). Atomic and
-- idempotent: cut short, nothing moved; run again, what is there stays once.
-- KEYS[1]: keys.home(uid); KEYS[2]: keys.following(uid);
-- KEYS[3]: keys.large_marks(uid); KEYS[4]: keys.home_reblogs(uid);
-- KEYS[5]: keys.FANOUT_WATERMARK; KEYS[6]: keys.large_following(uid);
-- KEYS[7]: keys.hidden_reblogs(uid); then for each account named: its
--          record (keys.user), profile (keys.profile) and ruled statuses
--          (keys.ruled_posts)
-- ARGV[1]: the home's cap; ARGV[2]: entries of the home checked
--          (limits.CATCH_UP_HOME_CHECK); ARGV[3]: most ids read of one
--          account (limits.CATCH_UP_PER_ACCOUNT); ARGV[4]: ids read below
--          the news (limits.CATCH_UP_OVERLAP); then the accounts' ids
-- returns: {0} if the user's large accounts are not those named, else
--          {1, the large accounts followed, {account id, sequence, ruled
--          member, ...} per account with ruled news, {id, boost id, ...}
--          plain ids put in with a recorded boost, the hidden boosters,
--          how many ids were put in}
local call = redis.call
local home, cap, check = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local most, overlap = tonumber(ARGV[3]), tonumber(ARGV[4])
local named = {}
for x = 5, #ARGV do named[ARGV[x]] = true end
local members = call('SMEMBERS', KEYS[6])
if #members ~= #ARGV - 4 then return {0} end
for _, m in ipairs(members) do
  if not named[m] then return {0} end
end
local top, held, floor = nil, {}, 0
local plain, seen, ruled_news, moved, large = {}, {}, {}, {}, {}
for a = 5, #ARGV do
  local uid, k = ARGV[a], 8 + 3 * (a - 5)
  if call('ZSCORE', KEYS[2], uid) then
    large[#large + 1] = uid
    local seq, mark = call('HGET', KEYS[k], 'pseq'), call('HGET', KEYS[3], uid)
    if seq and seq ~= mark then
      local posted = mark and tonumber(seq) - tonumber(mark) or 0
      if posted <= 0 then posted = most end
      local count = math.min(most, posted + overlap)
      if not top then
        top = call('LRANGE', home, 0, check - 1)
        for _, v in ipairs(top) do held[v] = true end
        -- below the top's last entry, only a full top rules out a late one
        floor = #top == check and top[#top] + 0 or 0
      end
      local ids = call('ZRANGE', KEYS[k + 1], 0, count - 1, 'REV')
      local ruled, found = {}, {}
      if #ids > 0 then
        local rows = call('ZRANGE', KEYS[k + 2], '+inf', ids[#ids], 'BYSCORE', 'REV',
                          'WITHSCORES')
        for r = 1, #rows, 2 do ruled[rows[r + 1]] = rows[r] end
      end
      for n, v in ipairs(ids) do
        if not held[v] and (n <= posted or v + 0 > floor) then
          if ruled[v] then
            found[#found + 1] = ruled[v]
          elseif not seen[v] then
            seen[v] = true
            plain[#plain + 1] = v + 0
          end
        end
      end
      if #found > 0 then
        ruled_news[#ruled_news + 1] = {uid, seq, unpack(found)}
      else
        moved[#moved + 1] = uid
        moved[#moved + 1] = seq
      end
    end
  end
end
local added, hits = 0, {}
if #plain > 0 then
  table.sort(plain, function(x, y) return x > y end)
  for k = #plain, cap + 1, -1 do plain[k] = nil end
  -- the head of the home down to the first entry below every id: only it
  -- is written again (new statuses go near the top)
  local lowest = plain[#plain]
  local size, head = 64, nil
  while true do
    head = call('LRANGE', home, 0, size - 1)
    if #head < size or head[#head] + 0 < lowest then break end
    size = size * 4
  end
  local merged, i, j = {}, 1, 1
  while (i <= #head or j <= #plain) and #merged < cap do
    local o = head[i] and head[i] + 0 or -1
    local v = plain[j] or -1
    if o > v then
      merged[#merged + 1] = head[i]; i = i + 1
    elseif v > o then
      merged[#merged + 1] = string.format('%d', v); j = j + 1; added = added + 1
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
  call('LTRIM', home, 0, cap - 1)
  local ids = {}
  for k, v in ipairs(plain) do ids[k] = string.format('%d', v) end
  local boosts = call('ZMSCORE', KEYS[4], unpack(ids))
  for k, b in ipairs(boosts) do
    if b then hits[#hits + 1] = ids[k]; hits[#hits + 1] = b end
  end
  -- mark_merged.lua's rule: no blind push of an older id lands above these
  local mark = call('GET', KEYS[5]) or '0:d'
  local wid = tonumber(string.sub(mark, 1, string.find(mark, ':', 1, true) - 1))
  if plain[1] >= wid then call('SET', KEYS[5], string.format('%d', plain[1]) .. ':m') end
end
if #moved > 0 then call('HSET', KEYS[3], unpack(moved)) end
local hidden = #ruled_news > 0 and call('SMEMBERS', KEYS[7]) or {}
return {1, large, ruled_news, hits, hidden, added}
