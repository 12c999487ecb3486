-- notification_groups: one page of a user's notifications grouped as
-- Mastodon 4.3's GET /api/v2/notifications does: walking newest first from
-- the cursors (oldest first for min_id), the first notification met of each
-- group stands for it, until `limit` groups (or the scan bound); then, for
-- each group, what the group index knows up to the page's newest notification:
-- how many, the newest (most_recent), the newest actors (sample) and the
-- oldest within the page (page_min). A page with fewer groups than asked
-- for is the last one its way: its range reaches to since_id (down) or to
-- max_id (up), as Mastodon's. Notifications of types not in
-- ARGV[9] are groups of their own ("ungrouped-<id>"). Read only.
-- KEYS[1]: notification ids zset nt:{uid} (id -> id)
-- KEYS[2]: records hash ntr:{uid} (id -> JSON {type, actor, group_key?, ...})
-- KEYS[3]: group index zset ntg:{uid} (see notify.lua)
-- ARGV[1]: max_id or ''    ARGV[2]: since_id or ''    ARGV[3]: min_id or ''
-- ARGV[4]: most groups
-- ARGV[5]: types to keep, comma-separated ('' = all)
-- ARGV[6]: types to leave out, comma-separated
-- ARGV[7]: only those caused by this account id ('' = any)
-- ARGV[8]: most notifications looked at
-- ARGV[9]: types that may be grouped, comma-separated
-- ARGV[10]: sample size (accounts per group)
-- ARGV[11]: '1' to keep filtered ones too (their records start '{"filtered":1,'), else ''
-- returns: {reps, groups}:
--   reps   flat {id, record, group key, ...} newest first
--   groups flat {group key, count, most recent id, page min id, "actor,actor,...",
--          ms of the most recent or ''}
--          for each grouped group key among reps
local limit, budget = tonumber(ARGV[4]), tonumber(ARGV[8])
local function set_of(csv)
  local s, any = {}, false
  for t in string.gmatch(csv, '[^,]+') do s[t] = true; any = true end
  return s, any
end
local keep, filtered = set_of(ARGV[5])
local drop = set_of(ARGV[6])
local groupable = set_of(ARGV[9])
local account = ARGV[7]
local top = ARGV[1] ~= '' and ('(' .. ARGV[1]) or '+inf'
local upward = ARGV[3] ~= ''
local bottom = upward and ('(' .. ARGV[3]) or (ARGV[2] ~= '' and ('(' .. ARGV[2]) or '-inf')
local reps, seen, count = {}, {}, 0
local offset = 0
while count < limit and budget > 0 do
  local n = math.min(limit + 20, budget)
  local ids
  if upward then
    ids = redis.call('ZRANGEBYSCORE', KEYS[1], bottom, top, 'LIMIT', offset, n)
  else
    ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], top, bottom, 'LIMIT', offset, n)
  end
  if #ids == 0 then break end
  offset = offset + #ids
  budget = budget - #ids
  local records = redis.call('HMGET', KEYS[2], unpack(ids))
  for i = 1, #ids do
    local raw = records[i]
    if raw and (ARGV[11] == '1' or string.sub(raw, 1, 14) ~= '{"filtered":1,') then
      local r = cjson.decode(raw)
      if (not filtered or keep[r['type']]) and not drop[r['type']]
          and (account == '' or tostring(r['actor']) == account) then
        local gk = r['group_key']
        if type(gk) ~= 'string' or not groupable[r['type']] then gk = 'ungrouped-' .. ids[i] end
        if not seen[gk] then
          seen[gk] = true
          count = count + 1
          reps[#reps + 1] = {ids[i], raw, gk}
          if count >= limit then break end
        end
      end
    end
  end
  if #ids < n then break end
end
if upward then  -- found oldest first: the page is newest first
  local back = {}
  for i = #reps, 1, -1 do back[#back + 1] = reps[i] end
  reps = back
end
local flat, groups = {}, {}
if #reps == 0 then return {flat, groups} end
local page_max, page_min = reps[1][1], reps[#reps][1]
if count < limit then  -- the last page: to the far cursor (Mastodon's incomplete page)
  if upward then page_max = ARGV[1] ~= '' and tostring(tonumber(ARGV[1]) - 1) or nil
  else page_min = ARGV[2] ~= '' and tostring(tonumber(ARGV[2]) + 1) or '0' end
end
local sample = tonumber(ARGV[10])
for _, rep in ipairs(reps) do
  flat[#flat + 1] = rep[1]; flat[#flat + 1] = rep[2]; flat[#flat + 1] = rep[3]
  local gk = rep[3]
  if string.sub(gk, 1, 10) ~= 'ungrouped-' then
    local sep = string.find(gk, '-[0-9]+$')
    local base = string.sub(gk, 1, sep - 1) .. '\0'
      .. string.format('%010d', tonumber(string.sub(gk, sep + 1))) .. '\0'
    local lo = '[' .. base
    local hi = page_max and ('(' .. base .. string.format('%016d', tonumber(page_max)) .. '\1')
      or ('(' .. base .. '\255')
    local n = redis.call('ZLEXCOUNT', KEYS[3], lo, hi)
    local newest = redis.call('ZREVRANGEBYLEX', KEYS[3], hi, lo, 'LIMIT', 0, sample)
    local actors = {}
    for _, m in ipairs(newest) do actors[#actors + 1] = string.sub(m, #base + 18) end
    local oldest = redis.call('ZRANGEBYLEX', KEYS[3], '[' .. base .. string.format('%016d', tonumber(page_min)),
                              hi, 'LIMIT', 0, 1)[1]
    local recent = newest[1] and tostring(tonumber(string.sub(newest[1], #base + 1, #base + 16))) or rep[1]
    local low = oldest and tostring(tonumber(string.sub(oldest, #base + 1, #base + 16))) or rep[1]
    groups[#groups + 1] = gk
    groups[#groups + 1] = n
    groups[#groups + 1] = recent
    groups[#groups + 1] = low
    groups[#groups + 1] = table.concat(actors, ',')
    local rraw = redis.call('HGET', KEYS[2], recent)
    groups[#groups + 1] = rraw and tostring(cjson.decode(rraw)['at']) or ''
  end
end
return {flat, groups}
