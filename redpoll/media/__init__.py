"""Media: image attachments of statuses, avatars and headers.

* ``processing``: Pillow, off the event loop: checks, orientation, stripping,
  bounds, preview, blurhash;
* ``storage``: where files are kept (the MediaStorage interface; the local
  directory backend);
* ``files``: how stored files are named;
* ``uploads``: attachments (upload, read, describe, attach, remove, sweep);
* ``profile_images``: avatars and headers;
* ``entity``: Mastodon's MediaAttachment entity;
* ``keys``: their Redis keys;
* ``routes``: the HTTP endpoints (the web layer; nothing below imports it).
"""
