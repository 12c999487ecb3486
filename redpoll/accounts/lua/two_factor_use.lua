-- two_factor_use: spend one code, at most once.
-- KEYS[1]: the account's secrets hash sec:{uid}
-- ARGV[1]: "step" (a TOTP code) or "recovery"
-- ARGV[2]: the sealed secret the code was checked against (a TOTP code)
-- ARGV[3]: the code's step (a TOTP code: it and every earlier one are spent),
--          or the recovery code's digest (it leaves the list)
-- returns 1 when spent now; 0 when spent already, unknown, or two-factor is off
local secret = redis.call('HGET', KEYS[1], 'otp_secret')
if not secret then return 0 end
if ARGV[1] == 'step' then
  if secret ~= ARGV[2] then return 0 end
  local last = tonumber(redis.call('HGET', KEYS[1], 'otp_step') or '-1')
  if tonumber(ARGV[3]) <= last then return 0 end
  redis.call('HSET', KEYS[1], 'otp_step', ARGV[3])
  return 1
end
local codes = ' ' .. (redis.call('HGET', KEYS[1], 'otp_recovery') or '') .. ' '
local at = string.find(codes, ' ' .. ARGV[3] .. ' ', 1, true)
if not at then return 0 end
local left = string.sub(codes, 1, at) .. string.sub(codes, at + #ARGV[3] + 2)
redis.call('HSET', KEYS[1], 'otp_recovery', string.match(left, '^%s*(.-)%s*$'))
return 1
