-- read_page_listed: read_page.lua on a single server, with the log of
-- changed statuses (keys.CHANGED_STATUSES, id -> version; < 0 = deleted):
-- ids of deleted statuses (they stay in follower and list timelines until
-- their cleanup gets there) are skipped and the page reads on past them, in
-- its own direction, so a page of deleted ids is not empty; the others come
-- with their version from the log ('' = never changed: version 1), which is
-- what a kept record is checked against (redpoll.core.memo's rule). It also
-- reads what a page needs to be served from kept records in this one round
-- trip: the database epoch and the 'rev' of each status's author; and each
-- status's counts (favourites, reblogs, replies), which every page shows, so
-- that the request's next round trip need not ask for them one by one. For
-- that it reads keys it builds itself (each status's 'uid', then its
-- author's 'rev'; each status's counts hash), from the name parts in
-- ARGV[7..12] (redpoll.core.keys.key_parts): allowed on a single server only,
-- which is the only topology using it. A chunk of the timeline is read with
-- its statuses' 'uid' and counts in one SORT_RO ... BY nosort GET call (the
-- list's order, LIMIT as LRANGE's range): one command instead of a LRANGE
-- and two per status, which measured ~50 us of a page's ~150 us here.
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
-- ARGV[13]: how far into the timeline a cursor is looked for by LPOS
--           (limits.CURSOR_SCAN_MAX) before the binary search takes over
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
-- first index whose id is <= the id `cursor` (a decimal string): where the
-- cursor sits when the list holds it (the usual case: the last page's last
-- id), found by one LPOS scan in C instead of a Lua binary search (the list
-- is duplicate-free, deliver.lua and merge.lua keep it so); else searched
-- (a cursor the list does not hold, e.g. a deleted status's id or one
-- from another timeline, would cost a scan of the whole list: MAXLEN
-- bounds it)
local function find(cursor)
  return redis.call('LPOS', key, cursor, 'MAXLEN', ARGV[13])
end
local function at_or_below(cursor)
  local at = find(cursor)
  if at then return at end
  return first_below(tonumber(cursor) + 1)
end
local start = 0           -- newest index in range
if ARGV[1] ~= '' then
  -- just below the cursor: past it when the list holds it
  local at = find(ARGV[1])
  start = at and at + 1 or first_below(tonumber(ARGV[1]))
end
local stop = n            -- exclusive: the range is [start, stop)
local lower = ARGV[3] ~= '' and ARGV[3] or ARGV[2]
if lower ~= '' then stop = math.max(start, at_or_below(lower)) end
local upward = ARGV[3] ~= ''  -- min_id: the oldest `limit` of the range
local uid_of = ARGV[7] .. '*' .. ARGV[8] .. '->uid'
local counts_of = ARGV[11] .. '*' .. ARGV[12] .. '->'
-- entries [lo, hi] of the list, in list order, each as 5 values: the id, its
-- status's 'uid', its counts 'f', 'r', 'p' (false where absent)
local function chunk(lo, hi)
  return redis.call('SORT_RO', key, 'BY', 'nosort', 'LIMIT', lo, hi - lo + 1,
                    'GET', '#', 'GET', uid_of, 'GET', counts_of .. 'f',
                    'GET', counts_of .. 'r', 'GET', counts_of .. 'p')
end

local budget = tonumber(ARGV[6])
local found = {}          -- row offsets (into rows) of the live ids, in page order
local rows = {}
-- keeps the live ones of the rows from offset `first` on, stepping `step`
-- rows (1 or -1), in that order; false once the page is full or the budget
-- spent
local function take(got, first, last, step)
  local ids = {}
  for r = first, last, step do ids[#ids + 1] = got[5 * r + 1] end
  local changed = redis.call('ZMSCORE', KEYS[3], unpack(ids))
  for i = 1, #ids do
    if not changed[i] or tonumber(changed[i]) >= 0 then
      local r = 5 * (first + (i - 1) * step)
      found[#found + 1] = {got, r, changed[i] or ''}
    end
    budget = budget - 1
    if #found >= limit or budget <= 0 then return false end
  end
  return true
end
-- the page with the epoch, its authors' revs and its statuses' counts
local function answer(order)
  local page, revs, seen, counts = {}, {}, {}, {}
  for k = order[1], order[2], order[3] do
    local got, r, version = found[k][1], found[k][2], found[k][3]
    page[#page + 1] = got[r + 1]
    page[#page + 1] = version
    counts[#counts + 1] = {got[r + 3], got[r + 4], got[r + 5]}
    local uid = got[r + 2]
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
    local got = chunk(lo, hi)
    if not take(got, hi - lo, 0, -1) then break end
    hi = lo - 1
  end
  -- found is oldest first: the page is newest first
  return answer({#found, 1, -1})
end
local lo = start
while lo < stop do
  local hi = math.min(stop, lo + limit) - 1
  if not take(chunk(lo, hi), 0, hi - lo, 1) then break end
  lo = hi + 1
end
return answer({1, #found, 1})
