-- account_flags: set or clear fields of a user record that a moderator
-- changes (its role, silenced, sensitized, disabled) and bump its revision,
-- in one step, only if the record exists (a missing account is refused,
-- never made into a stray hash).
-- KEYS[1]: the user record keys.user(uid)
-- ARGV: field, value pairs; an empty value clears the field
-- returns: 1; error 'NOUSER' when the record is missing
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('NOUSER account') end
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1
