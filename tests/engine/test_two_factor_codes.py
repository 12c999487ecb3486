"""Two-factor sign-in's domain functions on the embedded Valkey
(redpoll/accounts/two_factor.py): the window of one step either side, a
code usable once, recovery codes spent one by one, the secret sealed under
the operator's key (another key cannot open it), the settings checked."""

from __future__ import annotations

import time

import pyotp
import pytest

from redpoll import Redpoll, Settings
from redpoll.accounts import auth, two_factor
from redpoll.accounts import keys as tfa_keys
from redpoll.core import keys
from redpoll.core.errors import ConfigError

KEY = "k" * 40


async def member(rp: Redpoll, name: str) -> int:
    user = await auth.register(rp.store, rp.queue, name, f"{name}@example.com", "a long password")
    return user.id


async def set_up(rp: Redpoll, uid: int, key: str | None = KEY) -> tuple[str, list[str], int]:
    setup = await two_factor.begin_setup(rp.store, uid, "ann", "example.com", key)
    step = int(time.time() // 30)
    codes = await two_factor.confirm_setup(
        rp.store, uid, pyotp.TOTP(setup.secret).generate_otp(step), key
    )
    assert codes is not None
    return setup.secret, codes, step


def test_settings_check_the_key_and_the_rate():
    assert Settings.from_env({}).two_factor_key is None
    assert Settings.from_env({"REDPOLL_TWO_FACTOR_KEY": KEY}).two_factor_key == KEY
    assert KEY not in repr(Settings.from_env({"REDPOLL_TWO_FACTOR_KEY": KEY}))
    with pytest.raises(ConfigError, match="REDPOLL_TWO_FACTOR_KEY"):
        Settings.from_env({"REDPOLL_TWO_FACTOR_KEY": "short"})
    assert Settings.from_env({"REDPOLL_RATE_TWO_FACTOR": "3/60"}).rate_two_factor == (3, 60)
    assert Settings.from_env({}).rate_two_factor == (10, 300)


def test_a_code_matches_within_one_step_either_side():
    secret = pyotp.random_base32()
    totp = pyotp.TOTP(secret)
    now = 1_000_000 * 30 + 7
    step = now // 30
    for offset in (-1, 0, 1):
        assert two_factor.matching_step(secret, totp.generate_otp(step + offset), now) == (
            step + offset
        )
    for offset in (-2, 2):
        code = totp.generate_otp(step + offset)
        if code not in {totp.generate_otp(step + o) for o in (-1, 0, 1)}:
            assert two_factor.matching_step(secret, code, now) is None
    assert two_factor.matching_step(secret, "12345", now) is None
    assert two_factor.matching_step(secret, "abcdef", now) is None


async def test_each_code_and_each_recovery_code_works_once(settings):
    rp = await Redpoll.open(settings)
    try:
        uid = await member(rp, "ann")
        secret, codes, used = await set_up(rp, uid)
        totp = pyotp.TOTP(secret)
        # the set-up's own code is spent; so is every step before the last one used
        assert not await two_factor.use_code(rp.store, uid, totp.generate_otp(used), KEY)
        assert await two_factor.use_code(rp.store, uid, totp.generate_otp(used + 1), KEY)
        assert not await two_factor.use_code(rp.store, uid, totp.generate_otp(used + 1), KEY)
        # recovery codes, in any order, each once, down to none
        for code in reversed(codes):
            assert await two_factor.use_code(rp.store, uid, code, KEY)
            assert not await two_factor.use_code(rp.store, uid, code, KEY)
        assert await two_factor.status(rp.store, uid) == two_factor.Status(True, 0)
        stored = await rp.store.hget(keys.secrets(uid), two_factor.RECOVERY)
        assert stored == b""
        # new ones; then off: nothing of it is left
        fresh = await two_factor.new_recovery_codes(rp.store, uid)
        assert len(fresh) == 10 and not set(fresh) & set(codes)
        assert await two_factor.disable(rp.store, uid)
        assert not await two_factor.disable(rp.store, uid)
        left = await rp.store.hgetall(keys.secrets(uid))
        assert not {two_factor.SECRET, two_factor.STEP, two_factor.RECOVERY} & {
            k.decode() for k in left
        }
        assert not await two_factor.use_code(rp.store, uid, fresh[0], KEY)
        with pytest.raises(two_factor.TwoFactorError):
            await two_factor.new_recovery_codes(rp.store, uid)
    finally:
        await rp.close()


async def test_the_secret_is_sealed_and_another_key_cannot_open_it(settings):
    rp = await Redpoll.open(settings)
    try:
        uid = await member(rp, "bob")
        other = await member(rp, "cy")
        secret, _, used = await set_up(rp, uid)
        sealed = await rp.store.hget(keys.secrets(uid), two_factor.SECRET)
        assert secret.encode() not in sealed
        code = pyotp.TOTP(secret).generate_otp(used + 1)
        # another key, or the sealed secret moved to another account: no code works
        assert not await two_factor.use_code(rp.store, uid, code, "x" * 40)
        assert not await two_factor.use_code(rp.store, uid, code, None)
        await rp.store.hset(keys.secrets(other), two_factor.SECRET, sealed)
        assert not await two_factor.use_code(rp.store, other, code, KEY)
        assert await two_factor.use_code(rp.store, uid, code, KEY)  # nothing was spent

        # without an operator's key: the database's own, the same for every call
        dee = await member(rp, "dee")
        secret, _, used = await set_up(rp, dee, None)
        assert await two_factor.use_code(
            rp.store, dee, pyotp.TOTP(secret).generate_otp(used + 1), None
        )
    finally:
        await rp.close()


async def test_set_up_is_confirmed_once_and_refused_when_on(settings):
    rp = await Redpoll.open(settings)
    try:
        uid = await member(rp, "eve")
        setup = await two_factor.begin_setup(rp.store, uid, "eve", "example.com", KEY)
        assert await two_factor.confirm_setup(rp.store, uid, "000000x", KEY) is None
        assert not await two_factor.enabled(rp.store, uid)
        code = pyotp.TOTP(setup.secret).now()
        assert await two_factor.confirm_setup(rp.store, uid, code, KEY)
        with pytest.raises(two_factor.TwoFactorError, match="already enabled"):
            await two_factor.confirm_setup(rp.store, uid, code, KEY)
        with pytest.raises(two_factor.TwoFactorError, match="already enabled"):
            await two_factor.begin_setup(rp.store, uid, "eve", "example.com", KEY)
        assert await rp.store.get(tfa_keys.two_factor_setup(uid)) is None
    finally:
        await rp.close()
