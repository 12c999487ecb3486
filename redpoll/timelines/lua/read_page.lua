-- read_page: one page of ids from a newest-first timeline list, by id cursors
-- as Mastodon pages: max_id (older than), since_id (newer than, newest page),
-- min_id (newer than, the page right above it). Ids of deleted statuses are
-- returned too (the caller reads on past them); read_page_listed.lua is the
-- single server's variant that skips them itself.
-- KEYS[1]: timeline list
-- KEYS[2]: hash whose field ARGV[5] proves the timeline's owner exists
--          (u:{uid} 'id' for a home, lists:{owner} '<lid>' for a list)
-- ARGV[1]: max_id or ''
-- ARGV[2]: since_id or ''
-- ARGV[3]: min_id or ''
-- ARGV[4]: limit
-- ARGV[5]: field of KEYS[2] ('' = no owner: the global timeline)
-- returns: ids newest first, or error 'NOOWNER'
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

if upward then start = math.max(start, stop - limit) end
stop = math.min(stop, start + limit)
if stop <= start then return {} end
return redis.call('LRANGE', key, start, stop - 1)
