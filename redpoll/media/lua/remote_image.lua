-- remote_image: a remote account's avatar or header on its user record
-- (redpoll/media/remote.py): ``<kind>_r`` its server's URL, ``<kind>`` and
-- ``<kind>_s`` what clients are given, ``<kind>_f`` the files kept here.
-- KEYS[1]: the user record u:{uid}
-- ARGV[1]: 'origin', 'point' or 'unpoint'   ARGV[2]: 'avatar' or 'header'
-- ARGV[3], ARGV[4]: 'origin': its server's URL ('' none) and what is shown
--          while no copy is kept (a copy kept of the same URL stays, one of
--          another goes: its files are the cache's to delete); 'point': the
--          URL fetched (the record must still name it) and the copy's URL;
--          'unpoint': the names the record must hold, what is shown instead
-- ARGV[5]: (optional, 'point') the copy's still URL
-- ARGV[6]: (optional, 'point') the copy's names
-- returns: -1 no such user; 'origin': 0 a copy is kept, 1 none is; else 1 changed, 0 left
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return -1 end
local call, mode, kind = redis.call, ARGV[1], ARGV[2]
local origin = call('HGET', KEYS[1], kind .. '_r') or ''
local files = call('HGET', KEYS[1], kind .. '_f') or ''
if mode == 'origin' then
  -- a copy of the same URL stays (unless the default is to be shown)
  if origin == ARGV[3] and files ~= '' and ARGV[4] ~= '' then return 0 end
  if origin == ARGV[3] and files == '' and (call('HGET', KEYS[1], kind) or '') == ARGV[4] then
    return 1  -- as it was: not kept
  end
  call('HSET', KEYS[1], kind .. '_r', ARGV[3], kind, ARGV[4], kind .. '_s', ARGV[4],
    kind .. '_f', '')
elseif mode == 'point' then
  if origin ~= ARGV[3] or ARGV[3] == '' then return 0 end
  call('HSET', KEYS[1], kind, ARGV[4], kind .. '_s', ARGV[5], kind .. '_f', ARGV[6])
else
  if files ~= ARGV[3] then return 0 end
  call('HSET', KEYS[1], kind, ARGV[4], kind .. '_s', ARGV[4], kind .. '_f', '')
end
call('HINCRBY', KEYS[1], 'rev', 1)  -- the user record changed (users.current)
return 1
