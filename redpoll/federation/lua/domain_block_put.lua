-- domain_block_put: write a domain block, giving a new one the next id, in
-- one step with the checks that decide whether it may be written.
-- KEYS[1]: keys.DOMAIN_BLOCKS (host -> JSON; field ARGV[3]: the last id)
-- ARGV[1]: 'create' (refused if the host or a parent domain is blocked:
--          ARGV[5..] are those hosts), 'update' (only the block ARGV[4]
--          of this host) or 'upsert' (create, or change keeping its id)
-- ARGV[2]: the host   ARGV[3]: the sequence field
-- ARGV[4]: the block's JSON without its id (create, upsert) or its id (update)
-- ARGV[5]: for update: the new JSON without its id
-- returns: the block's JSON as stored; error 'EXISTS <host>' for a create
--          under a block, 'MISSING' for an update of a block not there
local mode, host, seq = ARGV[1], ARGV[2], ARGV[3]
local old = redis.call('HGET', KEYS[1], host)
local body, id
if mode == 'create' then
  for i = 5, #ARGV do
    if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
      return redis.error_reply('EXISTS ' .. ARGV[i])
    end
  end
  if old then return redis.error_reply('EXISTS ' .. host) end
  body = cjson.decode(ARGV[4])
elseif mode == 'update' then
  if not old then return redis.error_reply('MISSING domain block') end
  local was = cjson.decode(old)
  if tostring(was['id']) ~= ARGV[4] then return redis.error_reply('MISSING domain block') end
  body = cjson.decode(ARGV[5])
  id = was['id']
  body['at'] = was['at']
else
  body = cjson.decode(ARGV[4])
  if old then
    local was = cjson.decode(old)
    id = was['id']
    body['at'] = was['at'] or body['at']
  end
end
if not id then id = redis.call('HINCRBY', KEYS[1], seq, 1) end
body['id'] = id
local out = cjson.encode(body)
redis.call('HSET', KEYS[1], host, out)
return out
