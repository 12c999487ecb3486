-- deliver: put one status id into many timelines, keeping each newest-first,
-- duplicate-free and at most `cap` long. Safe to run twice (a re-run skips
-- timelines that already hold the id), which is what makes fan-out jobs
-- idempotent. The checked path, on either topology; deliver_fast.lua is the
-- single server's blind push, which hands over to this when it cannot prove
-- the blind push safe.
-- KEYS: timeline lists, all in one hash slot
-- ARGV[1]: status id (decimal string)
-- ARGV[2]: cap
-- returns: number of timelines the id was inserted into
local call = redis.call
local sid = ARGV[1]
local id = tonumber(sid)
local cap = tonumber(ARGV[2])
local added = 0
for i = 1, #KEYS do
  local key = KEYS[i]
  local head = call('LINDEX', key, 0)
  local h = head and tonumber(head)
  if not h or h < id then
    -- the common case: the newest status goes on top
    if call('LPUSH', key, sid) > cap then call('RPOP', key) end
    added = added + 1
  elseif h ~= id and not call('LPOS', key, sid) then
    -- a newer status arrived first: find the first entry older than id
    local n = call('LLEN', key)
    local lo, hi = 0, n
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if tonumber(call('LINDEX', key, mid)) > id then lo = mid + 1 else hi = mid end
    end
    if lo < n then
      call('LINSERT', key, 'BEFORE', call('LINDEX', key, lo), sid)
      if n + 1 > cap then call('RPOP', key) end
      added = added + 1
    elseif n < cap then
      call('RPUSH', key, sid)
      added = added + 1
    end
  end
end
return added
