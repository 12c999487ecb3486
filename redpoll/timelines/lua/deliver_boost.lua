-- deliver_boost: put a boost's id into the homes that take it, keeping each
-- newest-first, duplicate-free and at most `cap` long, and record it
-- (original -> boost) in the home's boost record, the newest `kept` of them.
-- Whether a home takes the boost is decided before, in Python, by the home
-- rule (redpoll.timelines.home_rule), from facts read before: among them the
-- boost of the same original the home had recorded, given here per home.
-- This script decides nothing; its one check guards the write:
-- - a home that holds the boost already is left alone (a replayed step:
--   idempotent);
-- - a home whose record names another boost of the same original than the
--   one the facts saw got that boost meanwhile, from a delivery running
--   at the same time, on top of the home: the decision was taken on facts
--   that no longer hold, so the write is dropped (the newer one stands).
--   This keeps two concurrent boosts of one status from both landing on
--   top of a home; it is the write's race guard, not the rule's window
--   (which the rule checked, reading the home's newest entries).
-- KEYS: pairs per home, all in one hash slot: home:{u}, hrb:{u}
-- ARGV[1]: boost status id
-- ARGV[2]: cap
-- ARGV[3]: original status id
-- ARGV[4]: kept: boosts recorded per home
-- ARGV[4 + i]: for the i-th home, the boost of the original its record held
--              when the facts were read ('' = none)
-- returns: number of homes the boost was inserted into
local call = redis.call
local sid, cap, orig, kept = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local id = tonumber(sid)
local added = 0
for i = 1, #KEYS, 2 do
  local home, record = KEYS[i], KEYS[i + 1]
  local seen = ARGV[4 + (i + 1) / 2]
  local now = call('ZSCORE', record, orig)
  local moved = now and now ~= sid and now ~= seen
  if not moved and not call('LPOS', home, sid) then
    local head = call('LINDEX', home, 0)
    if not head or tonumber(head) < id then
      if call('LPUSH', home, sid) > cap then call('RPOP', home) end
    else  -- a newer status arrived first: keep the list newest-first
      local n = call('LLEN', home)
      local lo, hi = 0, n
      while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if tonumber(call('LINDEX', home, mid)) > id then lo = mid + 1 else hi = mid end
      end
      if lo < n then
        call('LINSERT', home, 'BEFORE', call('LINDEX', home, lo), sid)
        if n + 1 > cap then call('RPOP', home) end
      elseif n < cap then
        call('RPUSH', home, sid)
      end
    end
    call('ZADD', record, sid, orig)
    local count = call('ZCARD', record)
    if count > kept then call('ZREMRANGEBYRANK', record, 0, count - kept - 1) end
    added = added + 1
  end
end
return added
