"""How accounts stand to each other: follows and follow requests, blocks and
mutes, the two-sided edges they are written as, and the one visibility decision
(visibility) every read path asks."""
