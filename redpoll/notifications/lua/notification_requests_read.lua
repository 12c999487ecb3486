-- notification_requests_read: a user's notification requests by request id,
-- newest first from the cursors (oldest first for min_id, the page then
-- turned newest first), or the one of one id. Read only.
-- KEYS[1]: notification requests zset nrq:{uid} (sender -> request id)
-- KEYS[2]: request fields hash nrqr:{uid} ("<sender>:at|upd|last|n")
-- ARGV[1]: max_id or ''    ARGV[2]: since_id or ''    ARGV[3]: min_id or ''
-- ARGV[4]: most requests
-- ARGV[5]: one request id ('' = the page the cursors say)
-- returns: flat {request id, sender, created ms, updated ms, last status id
--          or '', notifications held, ...} newest first
local rows
if ARGV[5] ~= '' then
  rows = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[5], ARGV[5], 'WITHSCORES', 'LIMIT', 0, 1)
elseif ARGV[3] ~= '' then
  local top = ARGV[1] ~= '' and ('(' .. ARGV[1]) or '+inf'
  local up = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[3], top, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
  rows = {}
  for i = #up - 1, 1, -2 do rows[#rows + 1] = up[i]; rows[#rows + 1] = up[i + 1] end
else
  local top = ARGV[1] ~= '' and ('(' .. ARGV[1]) or '+inf'
  local bottom = ARGV[2] ~= '' and ('(' .. ARGV[2]) or '-inf'
  rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], top, bottom, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
end
local out = {}
for i = 1, #rows, 2 do
  local actor = rows[i]
  local f = redis.call('HMGET', KEYS[2], actor .. ':at', actor .. ':upd', actor .. ':last', actor .. ':n')
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = actor
  out[#out + 1] = f[1] or '0'
  out[#out + 1] = f[2] or f[1] or '0'
  out[#out + 1] = f[3] or ''
  out[#out + 1] = f[4] or '0'
end
return out
