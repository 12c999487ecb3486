-- push_update: change the alerts and the policy of one token's push
-- subscription (the endpoint and keys stay: a new subscription changes them).
-- KEYS[1]: the user's subscriptions hash push:{uid} (token digest -> JSON)
-- ARGV[1]: token digest
-- ARGV[2]: JSON object of alerts to set (kind -> true/false), or ''
-- ARGV[3]: the new policy, or '' (as it is)
-- returns: the record as stored now, or false when the token has none
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local r = cjson.decode(raw)
if ARGV[2] ~= '' then
  for kind, on in pairs(cjson.decode(ARGV[2])) do r['alerts'][kind] = on end
end
if ARGV[3] ~= '' then r['policy'] = ARGV[3] end
local out = cjson.encode(r)
redis.call('HSET', KEYS[1], ARGV[1], out)
return out
