"""Link preview cards (Mastodon's PreviewCard): the first link of a status
fetched once per URL, on the server's behalf, by a job; its page's
OpenGraph and meta tags made a card, its image kept here."""
