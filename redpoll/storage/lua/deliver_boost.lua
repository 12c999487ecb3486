-- deliver_boost: put a boost's id into homes, as deliver.lua does, except
-- where the home does not want it: its owner hides the booster's boosts
-- (follow reblogs=false), or the original or another boost of it is among
-- the home's newest `window` entries (Mastodon's recent-window check), so a
-- home never shows the same status twice because of boosts. Idempotent.
-- The boosts it put into a home are remembered (original -> boost) for the
-- check, the newest `kept` of them (older ones are far below the window).
-- KEYS: triples per home, all in one hash slot: home:{u}, hrb:{u}, noreb:{u}
-- ARGV[1]: boost status id
-- ARGV[2]: cap
-- ARGV[3]: original status id
-- ARGV[4]: booster id
-- ARGV[5]: window
-- ARGV[6]: kept: boosts remembered per home
-- returns: number of homes the boost was inserted into
local call = redis.call
local sid, cap, orig, booster = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local window, kept = tonumber(ARGV[5]), tonumber(ARGV[6])
local id = tonumber(sid)
local added = 0
for i = 1, #KEYS, 3 do
  local home, seen, hidden = KEYS[i], KEYS[i + 1], KEYS[i + 2]
  local skip = call('SISMEMBER', hidden, booster) == 1
    or call('LPOS', home, sid) ~= false
    or call('LPOS', home, orig, 'MAXLEN', window) ~= false
  if not skip then
    local other = call('ZSCORE', seen, orig)
    skip = other and other ~= sid and call('LPOS', home, other, 'MAXLEN', window) ~= false
  end
  if not skip then
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
    call('ZADD', seen, sid, orig)
    local n = call('ZCARD', seen)
    if n > kept then call('ZREMRANGEBYRANK', seen, 0, n - kept - 1) end
    added = added + 1
  end
end
return added
