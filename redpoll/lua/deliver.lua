-- deliver: put one status id into many timelines, keeping each newest-first,
-- duplicate-free and at most `cap` long. Safe to run twice (a re-run skips
-- timelines that already hold the id), which is what makes fan-out jobs
-- idempotent.
-- KEYS: timeline lists (home or list timelines), all in one hash slot
-- ARGV[1]: status id (decimal string)
-- ARGV[2]: cap
-- returns: number of timelines the id was inserted into
local sid = ARGV[1]
local id = tonumber(sid)
local cap = tonumber(ARGV[2])
local added = 0
for _, key in ipairs(KEYS) do
  local head = redis.call('LINDEX', key, 0)
  if not head or tonumber(head) < id then
    -- the common case: the newest status goes on top
    if redis.call('LPUSH', key, sid) > cap then redis.call('RPOP', key) end
    added = added + 1
  elseif tonumber(head) ~= id and not redis.call('LPOS', key, sid) then
    -- a newer status arrived first: find the first entry older than id
    local n = redis.call('LLEN', key)
    local lo, hi = 0, n
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if tonumber(redis.call('LINDEX', key, mid)) > id then lo = mid + 1 else hi = mid end
    end
    if lo < n then
      redis.call('LINSERT', key, 'BEFORE', redis.call('LINDEX', key, lo), sid)
      if n + 1 > cap then redis.call('RPOP', key) end
      added = added + 1
    elseif n < cap then
      redis.call('RPUSH', key, sid)
      added = added + 1
    end
  end
end
return added
