-- warning_appeal: appeal a strike once (Mastodon's Appeal), or decide its
-- appeal, in one step on the account's slot.
-- KEYS[1]: the account's warnings hash aw:{uid} (warning id -> JSON)
-- ARGV[1]: 'appeal' | 'approve' | 'reject'
-- ARGV[2]: warning id
-- ARGV[3]: now (ms)
-- ARGV[4]: appeal: its text; approve/reject: the deciding account id
-- ARGV[5]: appeal: the oldest creation time (ms) a strike may be appealed from
-- returns: {'', the warning's JSON as stored now}, or {why, ''} when
-- refused: 'NOTFOUND' (no such warning), 'APPEALED' (appealed already, or
-- overruled), 'TOOLATE' (the strike is older than the appeal window),
-- 'DECIDED' (no pending appeal)
local raw = redis.call('HGET', KEYS[1], ARGV[2])
if not raw then return {'NOTFOUND', ''} end
local w = cjson.decode(raw)
local now = tonumber(ARGV[3])
if ARGV[1] == 'appeal' then
  if type(w['appeal']) == 'table' or w['overruled_at'] then
    return {'APPEALED', ''}
  end
  if tonumber(w['at']) < tonumber(ARGV[5]) then return {'TOOLATE', ''} end
  w['appeal'] = {text = ARGV[4], at = now, state = 'pending'}
else
  local a = w['appeal']
  if type(a) ~= 'table' or a['state'] ~= 'pending' then
    return {'DECIDED', ''}
  end
  a['state'] = (ARGV[1] == 'approve') and 'approved' or 'rejected'
  a['by'] = ARGV[4]
  a['decided_at'] = now
  if ARGV[1] == 'approve' then w['overruled_at'] = now end
end
raw = cjson.encode(w)
redis.call('HSET', KEYS[1], ARGV[2], raw)
return {'', raw}
