"""An approval and its mail are one step: the approval's journal is held
before its first write and released in one step with the member's mail
queued, so an approval cut short anywhere (here: right after its journal
was held, or after its writes, before the release) is finished, mail and
all, by a worker; and a whole approval queues its mail exactly once.
Against a real SMTP server, on one server and on the cluster."""

from __future__ import annotations

import uuid

import pytest
from support.smtp import smtp  # noqa: F401

from redpoll import Redpoll
from redpoll.accounts import auth
from redpoll.moderation import admin_accounts
from redpoll.moderation.jobs import ApprovalJob

pytestmark = pytest.mark.topology

PASSWORD = "correct horse battery"
SUBJECT = "Your account on Test Poll was approved"


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
    await engine.instance.set_registrations(None, "approval")
    yield engine
    # the database outlives the module: the modules after it sign up as usual
    await engine.instance.set_registrations(None, "open")
    await engine.close()


async def waiting(rp):
    """A new account waiting for approval, its sign-up mail delivered."""
    name = f"w{uuid.uuid4().hex[:8]}"
    app, _ = await rp.auth.create_app("journal tests", "urn:ietf:wg:oauth:2.0:oob", "read")
    address = f"{name}@example.com"
    user, _ = await rp.auth.register_with_token(
        app.client_id, ("read",), auth.SignUp(name, address, PASSWORD, reason="hello")
    )
    assert (await rp.accounts.lookup(name)).pending
    await rp.drain()
    return user, address


async def test_an_approval_cut_short_is_finished_with_its_mail(mrp, smtp):  # noqa: F811
    # cut short right after its journal was held: nothing else done
    user, address = await waiting(mrp)
    await mrp.queue.hold(ApprovalJob(user.id, 0))
    await mrp.drain()  # a worker takes the journal over after job_claim_ms
    assert not (await mrp.accounts.lookup(user.login)).pending
    assert smtp.wait_for(address, 2)["Subject"] == SUBJECT

    # cut short after the approval's writes, before the release: the member
    # is approved but not mailed yet; the replay mails it
    user, address = await waiting(mrp)
    job = ApprovalJob(user.id, 0)
    await mrp.queue.hold(job)
    assert await admin_accounts.finish_approval(mrp.store, None, job) is None
    assert not (await mrp.accounts.lookup(user.login)).pending
    await mrp.drain()
    assert smtp.wait_for(address, 2)["Subject"] == SUBJECT
    # approving again is refused, as before (the account is not pending)
    with pytest.raises(Exception, match="not allowed"):
        await mrp.admin.approve(None, user.id)


async def test_a_whole_approval_queues_its_mail_once(mrp, smtp):  # noqa: F811
    user, address = await waiting(mrp)
    await mrp.admin.approve(None, user.id)
    # the journal is gone and its mail is queued, in the one step that released it
    assert await mrp.queue.depth() == 1
    await mrp.drain()
    assert smtp.wait_for(address, 2)["Subject"] == SUBJECT
    assert [m["Subject"] for m in smtp.to(address)].count(SUBJECT) == 1
    log = await mrp.admin.audit_log()
    assert [(e.action, e.target) for e in log][:1] == [("approve", str(user.id))]
