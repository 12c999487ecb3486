-- media_update: change an upload's description or focus (PUT
-- /api/v1/media/:id) while it is not attached to a status; as Mastodon,
-- an attached one is not found here (what a status shows was fixed when
-- it was posted: media_attach checks 'v').
-- KEYS[1]: the record med:{uid}:<mid>
-- ARGV: field/value pairs (none: only read it)
-- returns: the record's field/value pairs after the change; an empty list
--          if there is no such upload, or it is attached or gone; for an
--          upload given up with a reason (media_drop.lua 'void'), only
--          state 'gone' and the reason 'err'
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'gone' then
  local err = redis.call('HGET', KEYS[1], 'err')
  if err then return {'state', 'gone', 'err', err} end
  return {}
end
if not state or redis.call('HEXISTS', KEYS[1], 'sid') == 1 then
  return {}
end
if #ARGV > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
  redis.call('HINCRBY', KEYS[1], 'v', 1)
end
return redis.call('HGETALL', KEYS[1])
