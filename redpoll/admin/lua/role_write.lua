-- role_write: create, change or delete one defined role (redpoll.admin.roles),
-- in one step: a name is taken by one role only (any case), a change or a
-- deletion applies only to the definition it was decided on.
-- KEYS[1]: the definitions hash keys.ROLES; KEYS[2]: its sequence keys.ROLE_SEQ
-- ARGV[1]: 'create', 'update' or 'delete'
-- ARGV[2]: create: the first id; update, delete: the role's id
-- ARGV[3]: create: the most roles; update, delete: the JSON read before
--   (the expected one)
-- ARGV[4]: (optional: not for delete) create: the name in lower case;
--   update: the new name in lower case ('' for the everyone role)
-- ARGV[5]: (optional: not for delete) create: the JSON with id 0 (the id
--   is set here); update: the new JSON
-- returns: the role's id; errors 'EXISTS name' (another role has that name),
-- 'FULL' (create: the most roles are defined), 'MISSING' (no such role),
-- 'CHANGED' (the definition changed since it was read)
local op = ARGV[1]
local function taken(name, except)
  if name == '' then return false end
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if all[i] ~= except then
      local role = cjson.decode(all[i + 1])
      if string.lower(role.name or '') == name then return true end
    end
  end
  return false
end
if op == 'create' then
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return redis.error_reply('FULL roles') end
  if taken(ARGV[4], nil) then return redis.error_reply('EXISTS name') end
  local id = tonumber(ARGV[2]) + redis.call('INCR', KEYS[2]) - 1
  local role = cjson.decode(ARGV[5])
  role.id = id
  redis.call('HSET', KEYS[1], tostring(id), cjson.encode(role))
  return id
end
local id = ARGV[2]
local now = redis.call('HGET', KEYS[1], id)
if op == 'update' then
  -- the everyone role has no stored definition until it is first changed
  if ARGV[3] ~= '' and now ~= ARGV[3] then
    if not now then return redis.error_reply('MISSING role') end
    return redis.error_reply('CHANGED role')
  end
  if ARGV[3] == '' and now then return redis.error_reply('CHANGED role') end
  if taken(ARGV[4], id) then return redis.error_reply('EXISTS name') end
  redis.call('HSET', KEYS[1], id, ARGV[5])
  return tonumber(id)
end
if op == 'delete' then
  if not now then return redis.error_reply('MISSING role') end
  if now ~= ARGV[3] then return redis.error_reply('CHANGED role') end
  redis.call('HDEL', KEYS[1], id)
  return tonumber(id)
end
return redis.error_reply('ERR unknown op')
