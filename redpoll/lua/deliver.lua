-- deliver: put one status id into many timelines, keeping each newest-first,
-- duplicate-free and at most `cap` long. Safe to run twice (a re-run skips
-- timelines that already hold the id), which is what makes fan-out jobs
-- idempotent.
--
-- Fast path (single server only, ARGV[3] = '1'): KEYS[1] is the delivery
-- watermark "<id>:<d|m>", the highest id ever delivered (d) or merged (m)
-- anywhere, and KEYS[2] the set of this status's batches already pushed. An
-- id at or above the watermark meets no newer id at any timeline's head; if
-- also no merge has put it anywhere (not 'm' at its own id) and this batch has
-- not been pushed before (SADD), it is in none of these timelines either, so
-- it goes on every head without looking: one command per timeline, as cheap
-- as a bare LPUSH. Anything else (a re-run, a fan-out overtaken by a newer
-- one, a follow that copied the id in first) takes the checked path. On a
-- cluster these keys would be slots of their own: always the checked path.
-- KEYS: timeline lists, all in one hash slot; with the fast path KEYS[1] is
--       the watermark, KEYS[2] the batch set, and the timelines follow
-- ARGV[1]: status id (decimal string)
-- ARGV[2]: cap
-- ARGV[3]: '1' for the fast path, else '0' or absent
-- ARGV[4]: (fast path) name of this batch, e.g. its cursor
-- ARGV[5]: (fast path) seconds to keep the batch set
-- returns: number of timelines the id was inserted into
local call = redis.call
local sid = ARGV[1]
local id = tonumber(sid)
local cap = tonumber(ARGV[2])
local added = 0
local first, blind = 1, false
if ARGV[3] == '1' then
  first = 3
  local mark = call('GET', KEYS[1]) or '0:d'
  local sep = string.find(mark, ':', 1, true)
  local wid, how = tonumber(string.sub(mark, 1, sep - 1)), string.sub(mark, sep + 1)
  if id > wid or (id == wid and how == 'd') then
    if call('SADD', KEYS[2], ARGV[4]) == 1 then
      call('EXPIRE', KEYS[2], ARGV[5])
      blind = true
    end
    if id > wid then call('SET', KEYS[1], sid .. ':d') end
  end
end
for i = first, #KEYS do
  local key = KEYS[i]
  if blind then
    if call('LPUSH', key, sid) > cap then call('RPOP', key) end
    added = added + 1
  else
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
end
return added
