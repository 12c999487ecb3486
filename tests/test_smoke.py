async def test_post_reaches_follower(rp):
    alice = await rp.sign_up("alice")
    bob = await rp.sign_up("bob")
    assert await rp.follow(bob.id, alice.id)
    status = await rp.post(alice.id, "hello")
    home = await rp.home_timeline(bob.id)
    assert [s.id for s in home] == [status.id]
