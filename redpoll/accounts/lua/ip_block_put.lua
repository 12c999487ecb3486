-- ip_block_put: add an IP block, or change one (its network too), so that
-- no two blocks hold one network: the check, the id and the write in one step.
-- KEYS[1]: keys.IP_BLOCKS (network -> JSON; field ARGV[3]: the last id)
-- ARGV[1]: 'create' or 'update'   ARGV[2]: the network   ARGV[3]: the sequence field
-- ARGV[4]: the block's JSON without its id
-- ARGV[5]: (optional: update only) the block's id   ARGV[6]: (optional) its network as it was
-- returns: the block's JSON as stored; error 'EXISTS' if another block holds
--          the network, 'MISSING' if the block to update is not there
local mode, net, seq = ARGV[1], ARGV[2], ARGV[3]
local body = cjson.decode(ARGV[4])
local taken = redis.call('HGET', KEYS[1], net)
local id
if mode == 'create' then
  if taken then return redis.error_reply('EXISTS ip block') end
  id = redis.call('HINCRBY', KEYS[1], seq, 1)
else
  local old = redis.call('HGET', KEYS[1], ARGV[6])
  if not old or tostring(cjson.decode(old)['id']) ~= ARGV[5] then
    return redis.error_reply('MISSING ip block')
  end
  if taken and net ~= ARGV[6] then return redis.error_reply('EXISTS ip block') end
  id = tonumber(ARGV[5])
  body['at'] = cjson.decode(old)['at']
  redis.call('HDEL', KEYS[1], ARGV[6])
end
body['id'] = id
local out = cjson.encode(body)
redis.call('HSET', KEYS[1], net, out)
return out
