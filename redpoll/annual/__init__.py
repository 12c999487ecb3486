"""Annual reports (Mastodon's "Wrapstodon"): a member's year in numbers,
made on request by a background job during the December campaign."""
