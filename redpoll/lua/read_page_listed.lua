-- read_page_listed: read_page.lua on a single server, with the log of
-- changed statuses (keys.CHANGED_STATUSES, id -> version; < 0 = deleted):
-- ids of deleted statuses (they stay in follower and list timelines until
-- their cleanup gets there) are skipped and the page reads on past them, in
-- its own direction, so a page of deleted ids is not empty; the others come
-- with their version from the log ('' = never changed: version 1), which is
-- what a kept record is checked against (redpoll.memo's rule). It also
-- reads what a page needs to be served from kept records in this one round
-- trip: the database epoch and the 'rev' of each status's author; and each
-- status's counts (favourites, reblogs, replies), which every page shows, so
-- that the request's next round trip need not ask for them one by one. For
-- that it reads keys it builds itself (each status's 'uid', then its
-- author's 'rev'; each status's counts hash), from the name parts in
-- ARGV[7..12] (redpoll.keys.key_parts): allowed on a single server only,
-- which is the only topology using it.
-- KEYS[1]: timeline list
-- KEYS[2]: hash whose field ARGV[5] proves the timeline's owner exists
--          (u:{uid} 'id' for a home, lists:{owner} '<lid>' for a list)
-- KEYS[3]: the log of changed statuses (< 0 = deleted)
-- KEYS[4]: the database epoch (keys.EPOCH)
-- ARGV[1]: max_id or ''
-- ARGV[2]: since_id or ''
-- ARGV[3]: min_id or ''
-- ARGV[4]: limit
-- ARGV[5]: field of KEYS[2] ('' = no owner: the global timeline)
-- ARGV[6]: the most ids looked at (bounds a page of deleted ids)
-- ARGV[7], ARGV[8]: a status key's text before and after its id
-- ARGV[9], ARGV[10]: a user key's text before and after its id
-- ARGV[11], ARGV[12]: a status counts key's text before and after its id
-- returns: {{id, version, id, version, ...} newest first, epoch or false,
--           {author id, rev, ...} for each distinct author, in page order,
--           {{favourites, reblogs, replies} for each id of the page, in order}}
--          or error 'NOOWNER'
if ARGV[5] ~= '' and redis.call('HEXISTS', KEYS[2], ARGV[5]) == 0 then return redis.error_reply('NOOWNER') end
local key = KEYS[1]
local limit = tonumber(ARGV[4])
local n = redis.call('LLEN', key)
-- first index whose id is < bound (the list is sorted descending)
local function first_below(bound)
  local lo, hi = 0, n
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if tonumber(redis.call('LINDEX', key, mid)) >= bound then lo = mid + 1 else hi = mid end
  end
  return lo
end
local start = 0           -- newest index in range
if ARGV[1] ~= '' then start = first_below(tonumber(ARGV[1])) end
local stop = n            -- exclusive: the range is [start, stop)
local lower = nil
if ARGV[3] ~= '' then lower = tonumber(ARGV[3]) elseif ARGV[2] ~= '' then lower = tonumber(ARGV[2]) end
if lower then stop = math.max(start, first_below(lower + 1)) end
local upward = ARGV[3] ~= ''  -- min_id: the oldest `limit` of the range

local budget = tonumber(ARGV[6])
local found = {}
-- keeps the live ones of `ids` in the order given; false once the page is
-- full or the budget spent
local versions = {}
local function take(ids)
  local changed = redis.call('ZMSCORE', KEYS[3], unpack(ids))
  for i = 1, #ids do
    if not changed[i] or tonumber(changed[i]) >= 0 then
      found[#found + 1] = ids[i]
      versions[#found] = changed[i] or ''
    end
    budget = budget - 1
    if #found >= limit or budget <= 0 then return false end
  end
  return true
end
-- the page with the epoch, its authors' revs and its statuses' counts
local function answer(page)
  local revs, seen, counts = {}, {}, {}
  for i = 1, #page, 2 do
    counts[#counts + 1] = redis.call('HMGET', ARGV[11] .. page[i] .. ARGV[12], 'f', 'r', 'p')
    local uid = redis.call('HGET', ARGV[7] .. page[i] .. ARGV[8], 'uid')
    if uid and not seen[uid] then
      seen[uid] = true
      revs[#revs + 1] = uid
      revs[#revs + 1] = redis.call('HGET', ARGV[9] .. uid .. ARGV[10], 'rev') or ''
    end
  end
  return {page, redis.call('GET', KEYS[4]), revs, counts}
end
if upward then
  -- from just above the cursor up towards the newest, in chunks of `limit`
  local hi = stop - 1
  while hi >= start do
    local lo = math.max(start, hi - limit + 1)
    local chunk = redis.call('LRANGE', key, lo, hi)
    local reversed = {}
    for i = #chunk, 1, -1 do reversed[#reversed + 1] = chunk[i] end
    if not take(reversed) then break end
    hi = lo - 1
  end
  -- found is oldest first: the page is newest first
  local page = {}
  for i = #found, 1, -1 do
    page[#page + 1] = found[i]
    page[#page + 1] = versions[i]
  end
  return answer(page)
end
local lo = start
while lo < stop do
  local hi = math.min(stop, lo + limit) - 1
  if not take(redis.call('LRANGE', key, lo, hi)) then break end
  lo = hi + 1
end
local page = {}
for i = 1, #found do
  page[#page + 1] = found[i]
  page[#page + 1] = versions[i]
end
return answer(page)
