"""E-mail through the engine and its worker against a real SMTP server
(aiosmtpd, tests/support/smtp.py): a sign-up's confirmation delivered and
followed, a server that is down and back (the mail is tried again later and
delivered), a permanent refusal (given up, nothing else held up), the reset
link's expiry and single use with nothing written when it is refused, the
moderators' mails, the bound per address, and nothing at all with e-mail
off."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from support.smtp import link_in, smtp, text_of, token_of  # noqa: F401

from redpoll import Redpoll
from redpoll.accounts import auth
from redpoll.core import keys, limits
from redpoll.engine.worker import HANDLERS
from redpoll.mail import outbox
from redpoll.mail.jobs import MailJob
from redpoll.render import admin as admin_render

PASSWORD = "correct horse battery"


@pytest.fixture
async def mrp(settings, smtp):  # noqa: F811
    engine = await Redpoll.open(
        settings.with_(
            smtp_host="127.0.0.1",
            smtp_port=smtp.port,
            smtp_security="none",
            smtp_from="notifications@redpoll.test",
            public_url="http://redpoll.test",
            instance_title="Test Poll",
        )
    )
    smtp.box.refuse.clear()
    smtp.box.defer.clear()
    yield engine
    await engine.close()


async def sign_up(rp, prefix: str = "m"):
    """(user, token, address) of a new account signed up through an app."""
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    app, _ = await rp.auth.create_app("mail tests", "urn:ietf:wg:oauth:2.0:oob", "read write")
    address = f"{name}@example.com"
    user, (token, _) = await rp.auth.register_with_token(
        app.client_id, ("read", "write"), auth.SignUp(name, address, PASSWORD)
    )
    return user, token, address


async def confirmed(rp, uid) -> bool:
    return admin_render.account(await rp.admin.account(None, uid), "http://x")["confirmed"]


async def test_a_sign_up_is_confirmed_by_the_link_it_is_mailed(mrp, smtp):  # noqa: F811
    user, token, address = await sign_up(mrp)
    assert await confirmed(mrp, user.id) is False
    found, _ = await mrp.auth.authenticate(token, None)
    assert found.check  # its requests read the account's standing
    await mrp.drain()
    msg = smtp.wait_for(address)
    assert msg["Subject"] == "Confirm your e-mail address for Test Poll"
    assert msg["From"] == "notifications@redpoll.test"
    link = link_in(msg)
    assert link.startswith("http://redpoll.test/auth/confirmation?confirmation_token=")
    assert f"@{user.login}" in text_of(msg)
    assert await mrp.accounts.follow_confirmation("1.x" * 10) is None  # a made-up link
    assert await confirmed(mrp, user.id) is False
    assert await mrp.accounts.follow_confirmation(token_of(link)) == address
    assert await confirmed(mrp, user.id) is True
    assert await mrp.accounts.follow_confirmation(token_of(link)) is None  # once
    assert await mrp.accounts.unconfirmed(user.id, found.digest) is False
    again, _ = await mrp.auth.authenticate(token, None)
    assert not again.check  # the mark went with the first read after it


async def test_a_server_down_gets_the_mail_later(mrp, smtp):  # noqa: F811
    smtp.stop()
    try:
        user, _, address = await sign_up(mrp, "down")
        await mrp.drain()
        retry = MailJob(user.id, "confirm", attempt=1)
        due = await mrp.queue.due_at(retry)
        assert due is not None  # tried again later, not lost
        assert due >= int(time.time() * 1000) + (limits.MAIL_RETRY_BASE_S - 5) * 1000
        assert smtp.to(address) == []
    finally:
        smtp.start()
    assert await mrp.queue.promote_due(due + 1) == 1
    await mrp.drain()
    msg = smtp.wait_for(address)
    assert await mrp.accounts.follow_confirmation(token_of(link_in(msg))) == address
    assert await mrp.queue.due_at(retry) is None


async def test_a_temporary_refusal_is_tried_again(mrp, smtp):  # noqa: F811
    user, _, address = await sign_up(mrp, "defer")
    smtp.box.defer.add(address)
    await mrp.drain()
    retry = MailJob(user.id, "confirm", attempt=1)
    due = await mrp.queue.due_at(retry)
    assert due is not None and smtp.to(address) == []
    smtp.box.defer.discard(address)
    await mrp.queue.promote_due(due + 1)
    await mrp.drain()
    smtp.wait_for(address)


async def test_a_permanent_refusal_is_given_up_and_holds_nothing_up(mrp, smtp, caplog):  # noqa: F811
    user, _, address = await sign_up(mrp, "refused")
    smtp.box.refuse.add(address)
    other, _, other_address = await sign_up(mrp, "fine")
    with caplog.at_level("WARNING", logger="redpoll.mail"):
        await mrp.drain()
    smtp.wait_for(other_address)
    assert smtp.to(address) == []
    assert await mrp.queue.due_at(MailJob(user.id, "confirm", attempt=1)) is None
    assert any("given up" in r.getMessage() for r in caplog.records)
    assert await mrp.queue.depth() == 0


async def test_a_reset_link_expires_and_works_once(mrp, smtp):  # noqa: F811
    user, token, address = await sign_up(mrp, "reset")
    await mrp.drain()
    await mrp.accounts.request_password_reset(address.upper())  # any case
    await mrp.accounts.request_password_reset("nobody-" + address)  # no account: nothing said
    await mrp.drain()
    msg = smtp.wait_for(address, 2)
    assert msg["Subject"] == "Reset your password on Test Poll"
    raw = token_of(link_in(msg))
    assert smtp.to("nobody-" + address) == []
    before = await mrp.store.hget(keys.secrets(user.id), "password")
    later = int(time.time() * 1000) + limits.PASSWORD_RESET_TTL_S * 1000 + 1000
    assert await mrp.accounts.reset_link_valid(raw)
    assert not await mrp.accounts.reset_link_valid(raw, now=later)
    # refused: expired, a password sign-up refuses, a made-up link
    assert await mrp.accounts.reset_password(raw, "a brand new secret", now=later) is False
    with pytest.raises(Exception, match="shorter than"):
        await mrp.accounts.reset_password(raw, "short")
    assert await mrp.accounts.reset_password(raw[:-2] + "zz", "a brand new secret") is False
    assert await mrp.store.hget(keys.secrets(user.id), "password") == before
    assert (await mrp.auth.authenticate(token, None))[0] is not None  # not signed out
    assert await mrp.accounts.reset_password(raw, "a brand new secret") is True
    assert (await mrp.auth.authenticate(token, None))[0] is None  # every token revoked
    assert await mrp.auth.password_grant_login(address, "a brand new secret") is not None
    assert await mrp.auth.password_grant_login(address, PASSWORD) is None
    assert await mrp.accounts.reset_password(raw, "another new secret") is False  # once
    assert await mrp.auth.password_grant_login(address, "a brand new secret") is not None


async def test_a_newer_reset_link_replaces_the_older(mrp, smtp):  # noqa: F811
    user, _, address = await sign_up(mrp, "twice")
    await mrp.accounts.request_password_reset(address)
    await mrp.accounts.request_password_reset(address)
    await mrp.drain()
    first = token_of(link_in(smtp.wait_for(address, 2)))
    second = token_of(link_in(smtp.wait_for(address, 3)))
    assert first != second
    assert not await mrp.accounts.reset_link_valid(first)
    assert await mrp.accounts.reset_password(second, "a brand new secret") is True


async def test_moderators_actions_are_mailed_unless_asked_not_to(mrp, smtp):  # noqa: F811
    user, _, address = await sign_up(mrp, "warned")
    await mrp.drain()
    await mrp.admin.act(None, user.id, "none", text="Please stop posting spam.")
    await mrp.admin.act(None, user.id, "silence", text="quiet", send_email=False)
    await mrp.admin.act(None, user.id, "suspend", text="Too much spam.")
    await mrp.drain()
    warning = smtp.wait_for(address, 2)
    assert warning["Subject"] == "A warning from the moderators of Test Poll"
    assert "> Please stop posting spam." in text_of(warning)
    suspended = smtp.wait_for(address, 3)
    assert suspended["Subject"] == "Your account on Test Poll was suspended"
    assert "> Too much spam." in text_of(suspended)
    assert len(smtp.to(address)) == 3  # the silence asked for no mail
    approved, _, approved_address = await sign_up(mrp, "approved")
    assert await mrp.accounts.send_account_approved(approved.id)
    await mrp.drain()
    msg = smtp.wait_for(approved_address, 2)
    assert msg["Subject"] == "Your account on Test Poll was approved"
    assert "http://redpoll.test/" in text_of(msg)


async def test_mails_to_one_address_are_bounded(mrp, smtp):  # noqa: F811
    user, _, address = await sign_up(mrp, "flood")
    count, _ = limits.MAIL_PER_ADDRESS
    sent = [
        await outbox.queue(mrp.store, mrp.settings, MailJob(user.id, "approved", address), address)
        for _ in range(count + 1)
    ]
    assert sent == [True] * (count - 1) + [False, False]  # (the sign-up's was the first)


async def test_with_e_mail_off_nothing_is_sent_and_accounts_are_confirmed(settings, smtp):  # noqa: F811
    async with await Redpoll.open(settings) as rp:
        user, token, address = await sign_up(rp, "off")
        assert await confirmed(rp, user.id) is True
        assert not (await rp.auth.authenticate(token, None))[0].check
        await rp.accounts.request_password_reset(address)
        assert await rp.queue.depth() == 0
        assert smtp.to(address) == []


async def test_an_address_change_waits_for_its_link_and_an_address_taken_meanwhile(mrp, smtp):  # noqa: F811
    user, _, address = await sign_up(mrp, "chg")
    await mrp.drain()
    first = token_of(link_in(smtp.wait_for(address)))
    assert await mrp.accounts.change_email(user.id, "wrong password", "x@example.com") is None
    wanted = f"wanted-{user.login}@example.com"
    assert await mrp.accounts.change_email(user.id, PASSWORD, wanted) == wanted
    assert await mrp.accounts.follow_confirmation(first) is None  # the sign-up's link was replaced
    await mrp.drain()
    link = token_of(link_in(smtp.wait_for(wanted)))
    assert "being changed" in smtp.wait_for(address, 2)["Subject"]
    # another account takes the address before the link is followed
    app, _ = await mrp.auth.create_app("t", "urn:ietf:wg:oauth:2.0:oob", "read write")
    await mrp.auth.register_with_token(
        app.client_id, ("read",), auth.SignUp("t" + user.login[:20], wanted, PASSWORD)
    )
    with pytest.raises(Exception, match="taken"):
        await mrp.accounts.follow_confirmation(link)
    assert await mrp.accounts.email_state(user.id) == (address, wanted, False)  # nothing written
    assert await mrp.auth.password_grant_login(address, PASSWORD) is not None
    # another change, followed: the address and the account's standing change together
    other = f"other-{user.login}@example.com"
    await mrp.accounts.change_email(user.id, PASSWORD, other)
    await mrp.drain()
    assert await mrp.accounts.follow_confirmation(token_of(link_in(smtp.wait_for(other)))) == other
    assert await mrp.accounts.email_state(user.id) == (other, None, True)
    assert await mrp.auth.password_grant_login(other, PASSWORD) is not None
    assert await mrp.auth.password_grant_login(address, PASSWORD) is None
    assert await mrp.store.get(keys.email(address.lower())) is None  # free again


async def test_a_mail_job_run_again_or_twice_at_once_is_sent_once(mrp, smtp):  # noqa: F811
    """Jobs are at-least-once: a run that outlived its claim is taken again by
    another worker while it still sends. The same queued job, run twice at
    once and once more after, sends its message once."""
    user, _, address = await sign_up(mrp, "once")
    await mrp.drain()
    smtp.wait_for(address)  # the confirmation
    before = len(smtp.to(address))
    job = MailJob(user.id, "warning", address, "none\nbe kind")
    handler = HANDLERS[MailJob]
    entry = b"1700000000000-7"
    await asyncio.gather(
        *(handler(mrp.store, mrp.settings, job, entry) for _ in range(2)), return_exceptions=True
    )
    await handler(mrp.store, mrp.settings, job, entry)
    time.sleep(0.5)
    assert len(smtp.to(address)) == before + 1
    # another queued job of the same message is another mail
    await handler(mrp.store, mrp.settings, job, b"1700000000000-8")
    smtp.wait_for(address, before + 2)
