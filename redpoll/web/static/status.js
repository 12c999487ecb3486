// One status as an <article>: author, relative time, text with links (behind
// "Show more" when it carries a content warning), and the Reply / Boost /
// Favourite / Bookmark buttons (toggles carry aria-pressed), Pin, Edit and
// Delete for one's own, Report for others'; an edited status says so, with its history a click away.
// A poll shows under the text: a Vote form (radio or checkboxes) until one
// has voted, then, and once it ended, bars with percentages. Images show
// as a gallery under the text (media.js), behind the warning with it; a
// link's preview card under the text when there are none.
import { api, session, emit } from './api.js';
import { has } from './features.js';
import { filterVerdict } from './filters.js';
import { renderMedia, mediaSummary } from './media.js';
import { putStatus, watchStatus } from './store.js';
import { reportStatusButton } from './report.js';
import { h, icon, timeEl, statusContent, toast, errorText, avatar, displayName, plural, fullDate } from './ui.js';

const TOGGLES = {
  Boost: { field: 'reblogged', count: 'reblogs_count', on: 'reblog', off: 'unreblog', icon: 'boost', noun: ['boost', 'boosts'] },
  Favourite: { field: 'favourited', count: 'favourites_count', on: 'favourite', off: 'unfavourite', icon: 'favourite', noun: ['favourite', 'favourites'] },
  Bookmark: { field: 'bookmarked', count: null, on: 'bookmark', off: 'unbookmark', icon: 'bookmark' },
  Pin: { field: 'pinned', count: null, on: 'pin', off: 'unpin', icon: 'pin' },
};

export function profilePath(account) { return '/@' + account.acct; }
export function statusPath(s) { return `/@${s.account.acct}/${s.id}`; }

function countText(n) { return n ? String(n) : ''; }
// an action's accessible name: its word, then the count it shows, if any
function named(word, n) { return n ? `${word} ${countText(n)}` : word; }

// The button paints from the status's one record (store.js): the answer of
// a click goes there, and every copy of the status on screen repaints.
function toggleButton(name, s, article, label = null) {
  const t = TOGGLES[name];
  const count = t.count ? h('span', { class: 'count', 'aria-hidden': 'true' }, countText(s[t.count])) : null;
  const btn = h('button', { type: 'button', class: 'action ' + name.toLowerCase(), 'aria-label': name,
    'aria-pressed': s[t.field] ? 'true' : 'false' }, icon(t.icon), count,
  label ? h('span', { 'aria-hidden': 'true' }, label) : null);
  const paint = () => {
    btn.setAttribute('aria-pressed', s[t.field] ? 'true' : 'false');
    if (count) count.textContent = countText(s[t.count]);
    // the visible count is part of the name (WCAG 2.5.3, label in name): "Favourite 3"
    if (count && !label) btn.setAttribute('aria-label', named(name, s[t.count]));
    if (t.count) btn.setAttribute('aria-description', plural(s[t.count] || 0, t.noun[0], t.noun[1]));
  };
  paint();
  watchStatus(s.id, article, paint);
  if (!has('POST', `/api/v1/statuses/{}/${t.on}`)) {
    btn.disabled = true;
    btn.title = `${name} is not available on this server`;
  }
  btn.addEventListener('click', async () => {
    const was = !!s[t.field];
    btn.setAttribute('aria-pressed', String(!was));
    btn.disabled = true;
    try {
      const fresh = await api(`/api/v1/statuses/${s.id}/${was ? t.off : t.on}`, { method: 'POST' });
      const inner = name === 'Boost' && fresh.reblog ? fresh.reblog : fresh;
      const patch = { ...inner, id: s.id, [t.field]: !was };
      if (t.count && typeof inner[t.count] !== 'number') patch[t.count] = Math.max(0, (s[t.count] || 0) + (was ? -1 : 1));
      delete patch.reblog;
      putStatus(patch);
    } catch (err) {
      toast(`${name}: ${errorText(err)}`, 'error');
    } finally {
      btn.disabled = false;
      paint();
    }
  });
  return btn;
}

function deleteButton(s, article) {
  let armed = null;
  const btn = h('button', { type: 'button', class: 'action delete' }, icon('trash'), h('span', {}, 'Delete'));
  btn.addEventListener('click', async () => {
    if (!armed) {
      btn.lastChild.textContent = 'Confirm delete';
      armed = setTimeout(() => { armed = null; btn.lastChild.textContent = 'Delete'; }, 5000);
      return;
    }
    clearTimeout(armed);
    btn.disabled = true;
    try {
      await api(`/api/v1/statuses/${s.id}`, { method: 'DELETE' });
      emit('status:deleted', s.id);
      toast('Post deleted');
    } catch (err) {
      btn.disabled = false;
      toast(`Delete: ${errorText(err)}`, 'error');
    }
  });
  return btn;
}

// Edit in place: the source text and content warning in a small form; saved,
// the article is rendered again from the answer.
function editButton(s, article, opts) {
  const btn = h('button', { type: 'button', class: 'action edit', 'aria-label': 'Edit' }, icon('pen'), h('span', {}, 'Edit'));
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    let source;
    try {
      source = await api(`/api/v1/statuses/${s.id}/source`);
    } catch (err) {
      btn.disabled = false;
      toast(`Edit: ${errorText(err)}`, 'error');
      return;
    }
    const cw = h('input', { type: 'text', class: 'edit-cw', 'aria-label': 'Content warning',
      placeholder: 'Content warning (optional)', maxlength: '64', value: source.spoiler_text || '' });
    const text = h('textarea', { class: 'edit-text', 'aria-label': 'Edit post', rows: '4' });
    text.value = source.text;
    const save = h('button', { type: 'submit', class: 'primary' }, 'Save');
    const cancel = h('button', { type: 'button' }, 'Cancel');
    const form = h('form', { class: 'edit-form', 'aria-label': 'Edit post' }, cw, text,
      h('div', { class: 'edit-buttons' }, save, ' ', cancel));
    cancel.addEventListener('click', () => { form.remove(); btn.disabled = false; });
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      save.disabled = true;
      try {
        const body = { status: text.value, spoiler_text: cw.value.trim() };
        if (s.language) body.language = s.language;
        if ((s.media_attachments || []).length) body.media_ids = s.media_attachments.map((m) => m.id);
        if (s.poll) {  // an edit without its poll would remove it (Mastodon): the same poll, its time left
          const left = Math.round((Date.parse(s.poll.expires_at) - Date.now()) / 1000);
          body.poll = { options: s.poll.options.map((o) => o.title), multiple: s.poll.multiple,
            expires_in: Math.max(left, 300) };
        }
        const updated = await api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body });
        article.replaceWith(renderStatus(updated, opts));
        toast('Post edited');
      } catch (err) {
        save.disabled = false;
        toast(`Edit: ${errorText(err)}`, 'error');
      }
    });
    article.querySelector('footer.actions').before(form);
    text.focus();
  });
  return btn;
}

// "More actions" (…): a small menu under the button; Esc, a click elsewhere
// or an item's action (but Delete's first press, which asks to confirm) closes it.
function postMenu(items) {
  const id = 'menu-' + Math.random().toString(36).slice(2, 10);
  const list = h('div', { class: 'post-menu-list', id, role: 'group', 'aria-label': 'More actions', hidden: true }, items);
  const btn = h('button', { type: 'button', class: 'action post-menu-button', 'aria-label': 'More actions',
    title: 'More actions', 'aria-expanded': 'false', 'aria-controls': id }, icon('more'));
  const box = h('div', { class: 'post-menu' }, btn, list);
  const set = (open) => {
    btn.setAttribute('aria-expanded', String(open));
    list.hidden = !open;
    if (open) document.addEventListener('click', outside, true);
    else document.removeEventListener('click', outside, true);
  };
  const outside = (e) => { if (!box.contains(e.target)) set(false); };
  btn.addEventListener('click', () => {
    const open = btn.getAttribute('aria-expanded') !== 'true';
    set(open);
    if (open) list.querySelector('button:not(:disabled)')?.focus();
  });
  list.addEventListener('click', (e) => {
    const item = e.target.closest('button');
    if (item && !item.classList.contains('delete')) set(false);  // Delete asks first: the menu stays
  });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !list.hidden) { e.preventDefault(); e.stopPropagation(); set(false); btn.focus(); }
  });
  return box;
}

// "Edited": shows the status's versions, oldest first, below it
function editedButton(s, article) {
  const btn = h('button', { type: 'button', class: 'edited-label', 'aria-expanded': 'false' }, 'Edited');
  let list = null;
  btn.addEventListener('click', async () => {
    if (list) {
      list.remove();
      list = null;
      btn.setAttribute('aria-expanded', 'false');
      return;
    }
    try {
      const versions = await api(`/api/v1/statuses/${s.id}/history`);
      list = h('ol', { class: 'edit-history', 'aria-label': 'Edit history' },
        ...versions.map((v, i) => h('li', {},
          h('p', { class: 'meta' }, i === 0 ? 'Original · ' : 'Edited · ', timeEl(v.created_at)),
          v.spoiler_text ? h('p', { class: 'spoiler' }, v.spoiler_text) : null,
          statusContent(v.content))));
      btn.after(list);
      btn.setAttribute('aria-expanded', 'true');
    } catch (err) {
      toast(`History: ${errorText(err)}`, 'error');
    }
  });
  return btn;
}

// "ends in 3 hours", from an ISO time still ahead
function endsIn(iso, now = Date.now()) {
  const s = Math.max(0, (Date.parse(iso) - now) / 1000);
  const minutes = Math.max(1, Math.round(s / 60)), hours = Math.round(s / 3600);
  const [n, unit] = minutes < 60 ? [minutes, 'minute']
    : hours < 24 ? [hours, 'hour'] : [Math.round(s / 86400), 'day'];
  return 'ends in ' + plural(n, unit, unit + 's');
}

// The poll of a status: the Vote form, or its results (voted, ended, the
// author's own, signed out); voting renders it again from the answer.
export function renderPoll(s) {
  const poll = s.poll;
  const me = session.me();
  const box = h('div', { class: 'poll', role: 'group', 'aria-label': 'Poll' });
  const people = poll.voters_count ?? poll.votes_count;
  const summary = () => h('p', { class: 'poll-meta' }, plural(people || 0, 'person', 'people'), ' · ',
    poll.expired ? 'Closed' : endsIn(poll.expires_at));
  const canVote = me && !poll.voted && !poll.expired && s.account.id !== me.id;
  if (!canVote) {
    // Mastodon's web app divides by the voters in a multiple-choice poll
    const total = poll.multiple ? (poll.voters_count || 0) : (poll.votes_count || 0);
    const own = new Set(poll.own_votes || []);
    box.append(h('ul', { class: 'poll-results' }, ...poll.options.map((o, i) => {
      const pct = o.votes_count === null || o.votes_count === undefined ? null
        : (total ? Math.round((o.votes_count / total) * 100) : 0);
      const bar = h('span', { class: 'poll-bar' + (own.has(i) ? ' own' : ''), 'aria-hidden': 'true' });
      bar.style.width = `${pct || 0}%`;
      return h('li', { class: 'poll-option' }, bar,
        h('span', { class: 'poll-pct' }, pct === null ? '' : `${pct}%`), ' ',
        h('span', { class: 'poll-title' }, o.title), own.has(i) ? h('span', { class: 'poll-own', 'aria-label': 'your choice' }, ' ✓') : null);
    })));
    if (poll.options.some((o) => o.votes_count === null || o.votes_count === undefined)) {
      box.append(h('p', { class: 'poll-meta' }, 'Results are shown when the poll ends'));
    }
    box.append(summary());
    return box;
  }
  const name = `poll-${s.id}-${Math.random().toString(36).slice(2, 8)}`;
  const inputs = poll.options.map((o, i) => h('input', { type: poll.multiple ? 'checkbox' : 'radio',
    name, value: String(i) }));
  const vote = h('button', { type: 'submit', class: 'primary', disabled: true }, 'Vote');
  const form = h('form', { class: 'poll-form', 'aria-label': 'Vote' },
    ...poll.options.map((o, i) => h('label', { class: 'poll-choice' }, inputs[i], ' ', o.title)),
    h('div', { class: 'poll-buttons' }, vote));
  form.addEventListener('change', () => { vote.disabled = !inputs.some((x) => x.checked); });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const choices = inputs.filter((x) => x.checked).map((x) => Number(x.value));
    if (!choices.length) return;
    vote.disabled = true;
    try {
      s.poll = await api(`/api/v1/polls/${poll.id}/votes`, { method: 'POST', body: { choices } });
      box.replaceWith(renderPoll(s));
      toast('Vote counted');
    } catch (err) {
      vote.disabled = false;
      toast(`Vote: ${errorText(err)}`, 'error');
    }
  });
  box.append(form, summary());
  return box;
}

export function authorLine(account, extra) {
  // the avatar is a link too (a tap on it opens the profile), kept out of
  // the Tab order and the accessibility tree: the name beside it is the same link
  return h('div', { class: 'author' },
    h('a', { href: profilePath(account), class: 'avatar-link', tabindex: '-1', 'aria-hidden': 'true' }, avatar(account)),
    h('a', { href: profilePath(account), class: 'names' },
      h('strong', { class: 'display-name' }, displayName(account)), ' ',
      h('span', { class: 'acct' }, '@' + account.acct)),
    extra);
}

// what a quote's state says when it shows no quoted post (Mastodon 4.5's states)
const QUOTE_GONE = {
  revoked: 'The author removed this quote',
  deleted: 'The quoted post was deleted',
  unauthorized: 'You cannot see the quoted post',
  pending: 'The quote awaits approval',
  rejected: 'The author declined this quote',
};

// the quoted post inside a card (its own quote is not drawn again)
export function renderQuote(quote) {
  const q = quote.state === 'accepted' ? quote.quoted_status : null;
  if (!q) return h('p', { class: 'quote-card quote-gone' }, QUOTE_GONE[quote.state] || 'The quoted post is not available');
  const card = h('blockquote', { class: 'quote-card', dataset: { quotedId: q.id } },
    authorLine(q.account, h('a', { href: statusPath(q), class: 'time' }, timeEl(q.created_at))));
  if (q.spoiler_text) card.append(h('p', { class: 'spoiler' }, q.spoiler_text));
  else card.append(statusContent(q.content));
  return card;
}

// A link's preview card under the text (the status's `card`: its image is
// this server's copy), the whole card one link to the page in a new tab; not
// drawn when the status has media or a quote (as Mastodon's web app).
export function renderCard(s) {
  const card = s.card;
  if (!card || !/^https?:\/\//i.test(card.url || '') || (s.media_attachments || []).length || s.quote) return null;
  let host = '';
  try { host = new URL(card.url).hostname.replace(/^www\./, ''); } catch { /* shown without it */ }
  const image = card.image ? h('img', { class: 'link-card-image', src: card.image, alt: card.image_description || '',
    loading: 'lazy', decoding: 'async', width: card.width || null, height: card.height || null }) : null;
  // an image dropped from the cache since: the card without it
  if (image) image.addEventListener('error', () => { image.remove(); image.closest('.link-card')?.classList.add('no-image'); });
  return h('a', { class: 'link-card' + (image ? '' : ' no-image'), href: card.url, target: '_blank',
    rel: 'noopener noreferrer nofollow' },
  image,
  h('span', { class: 'link-card-text' },
    h('span', { class: 'link-card-provider' }, card.provider_name || host),
    h('strong', { class: 'link-card-title' }, card.title),
    card.description ? h('span', { class: 'link-card-description' }, card.description) : null));
}

// opts: {onReply(status, article), focused}
export function renderStatus(entry, opts = {}) {
  entry = putStatus(entry);
  const s = entry.reblog || entry;
  const me = session.me();
  const article = h('article', { class: 'status' + (opts.focused ? ' focused' : ''),
    dataset: { id: entry.id, statusId: s.id }, tabindex: '-1',
    'aria-label': `${displayName(s.account)}: ${s.spoiler_text || textOf(s.content).slice(0, 80) ||
      mediaSummary(s.media_attachments || [])}` });
  if (opts.pinned) article.append(h('p', { class: 'boosted-by pinned-label' }, icon('pin'), ' Pinned'));
  if (s.visibility === 'direct') {  // a direct message among the posts: said plainly, as Mastodon's
    article.classList.add('direct');
    article.append(h('p', { class: 'boosted-by direct-label' }, icon('mail'), ' Direct message'));
  }
  if (entry.reblog) {
    article.append(h('p', { class: 'boosted-by' }, icon('boost'), ' ',
      h('a', { href: profilePath(entry.account) }, displayName(entry.account)), ' boosted'));
  }
  article.append(h('header', {}, authorLine(s.account,
    h('a', { href: statusPath(s), class: 'time' }, timeEl(s.created_at)))));
  if (s.in_reply_to_id) {
    const target = (s.mentions || []).find((m) => m.id === s.in_reply_to_account_id);
    article.append(h('p', { class: 'reply-to' }, 'Replying to ',
      target ? h('a', { href: '/@' + target.acct }, '@' + target.acct) :
        h('a', { href: `/@${s.account.acct}/${s.in_reply_to_id}` }, 'a post')));
  }
  if (s.spoiler_text) {
    // a content warning hides the text until asked (Mastodon's "Show more")
    const body = h('div', { class: 'behind-warning', id: `cw-${entry.id}-${s.id}`, hidden: true },
      statusContent(s.content), s.poll ? renderPoll(s) : null, renderMedia(s), renderCard(s));
    const more = h('button', { type: 'button', class: 'show-more', 'aria-expanded': 'false',
      'aria-controls': body.id }, 'Show more');
    more.addEventListener('click', () => {
      const open = more.getAttribute('aria-expanded') !== 'true';
      body.hidden = !open;
      more.setAttribute('aria-expanded', String(open));
      more.textContent = open ? 'Show less' : 'Show more';
    });
    article.append(h('p', { class: 'spoiler' }, s.spoiler_text, ' ', more), body);
  } else {
    article.append(statusContent(s.content));
    if (s.poll) article.append(renderPoll(s));
    const media = renderMedia(s);
    if (media) article.append(media);
    const card = renderCard(s);
    if (card) article.append(card);
  }
  if (s.quote) article.append(renderQuote(s.quote));
  const meta = [];
  if (opts.focused) meta.push(fullDate(s.created_at));
  if (s.visibility && (s.visibility !== 'public' || opts.focused)) meta.push(VISIBILITY_LABEL[s.visibility] || s.visibility);
  if (meta.length || s.edited_at) {
    const line = h('p', { class: 'meta' }, meta.join(' · '));
    if (s.edited_at) line.append(meta.length ? ' · ' : '', editedButton(s, article));
    article.append(line);
  }
  // the focused post: who boosted and favourited it, each a link to the list (as Mastodon's)
  if (opts.focused && (has('GET', '/api/v1/statuses/{}/reblogged_by') || has('GET', '/api/v1/statuses/{}/favourited_by'))) {
    const boosts = h('a', { href: statusPath(s) + '/reblogs', class: 'boosted-list' });
    const favs = h('a', { href: statusPath(s) + '/favourites', class: 'favourited-list' });
    const paint = () => {
      boosts.textContent = plural(s.reblogs_count || 0, 'boost', 'boosts');
      favs.textContent = plural(s.favourites_count || 0, 'favourite', 'favourites');
    };
    paint();
    const line = h('p', { class: 'engaged' }, boosts, favs);
    watchStatus(s.id, line, paint);
    article.append(line);
  }
  if (opts.compact) {
    article.classList.add('compact');  // the post a favourite or boost is about: no actions (as Mastodon's)
  } else if (me) {
    const reply = h('button', { type: 'button', class: 'action reply', 'aria-label': named('Reply', s.replies_count),
      'aria-description': plural(s.replies_count || 0, 'reply', 'replies') },
    icon('reply'), h('span', { class: 'count', 'aria-hidden': 'true' }, countText(s.replies_count)));
    watchStatus(s.id, article, () => {
      reply.lastChild.textContent = countText(s.replies_count);
      reply.setAttribute('aria-label', named('Reply', s.replies_count));
      reply.setAttribute('aria-description', plural(s.replies_count || 0, 'reply', 'replies'));
    });
    reply.addEventListener('click', () => opts.onReply ? opts.onReply(s, article) : emit('reply', { status: s, article }));
    const bar = h('footer', { class: 'actions' }, reply, toggleButton('Boost', s, article),
      toggleButton('Favourite', s, article), toggleButton('Bookmark', s, article));
    if (s.visibility === 'private' || s.visibility === 'direct') {
      bar.children[1].disabled = true;
      bar.children[1].title = 'This post cannot be boosted';
    }
    // the rest behind "More actions", so the bar stays one row on a phone (as Mastodon's "…")
    const items = [];
    const own = s.account.id === me.id;
    if (own && !entry.reblog && s.visibility !== 'direct') items.push(toggleButton('Pin', s, article, 'Pin on profile'));
    if (own && !entry.reblog && has('PUT', '/api/v1/statuses/{}')) items.push(editButton(s, article, opts));
    if (own) items.push(deleteButton(s, article));
    else items.push(reportStatusButton(s, 'Report'));
    bar.append(postMenu(items));
    article.append(bar);
  } else {
    article.append(h('footer', { class: 'actions counts' },
      h('span', {}, plural(s.replies_count || 0, 'reply', 'replies')),
      opts.focused ? null : h('span', {}, plural(s.reblogs_count || 0, 'boost', 'boosts')),
      opts.focused ? null : h('span', {}, plural(s.favourites_count || 0, 'favourite', 'favourites'))));
  }
  if (!opts.focused) opensThread(article, s);
  // the viewer's filters (the server leaves out what they hide in a timeline)
  const verdict = filterVerdict(entry.filtered?.length ? entry.filtered : s.filtered,
    me && s.account.id === me.id);
  if (verdict === 'hide' && !opts.focused) {
    article.hidden = true;
  } else if (verdict) {
    const kids = [...article.children].map((el) => [el, el.hidden]);
    kids.forEach(([el]) => { el.hidden = true; });
    const label = article.getAttribute('aria-label');
    article.setAttribute('aria-label', 'Filtered: ' + (verdict === 'hide' ? 'hidden' : verdict));
    const show = h('button', { type: 'button', class: 'show-anyway' }, 'Show anyway');
    const note = h('p', { class: 'filtered-note' }, 'Filtered: ',
      h('strong', {}, verdict === 'hide' ? 'hidden' : verdict), ' ', show);
    show.addEventListener('click', () => {
      note.remove();
      kids.forEach(([el, was]) => { el.hidden = was; });
      article.setAttribute('aria-label', label);
    });
    article.prepend(note);
  }
  return article;
}

// A tap on a post (its text, the gaps of its action bar) opens its thread, as
// Mastodon's web app, Elk and Phanpy do; not a tap on a link, a button, a
// form, its media or a poll, nor the end of selecting its text. Ctrl/Cmd or
// the middle button open it in a new tab.
const INTERACTIVE = 'a, button, input, textarea, select, label, summary, video, audio, form, dialog, ' +
  '.media-gallery, .poll, .edit-history, .post-menu';
function opensThread(article, s) {
  article.classList.add('tappable');
  const open = (e) => {
    if (e.defaultPrevented || (e.button !== 0 && e.button !== 1) || !(e.target instanceof Element)) return;
    if (e.target.closest(INTERACTIVE) || e.target.closest('article') !== article) return;
    const sel = window.getSelection();
    if (sel && sel.type === 'Range' && article.contains(sel.anchorNode)) return;
    if (e.button === 1 || e.ctrlKey || e.metaKey) { window.open(statusPath(s), '_blank', 'noopener'); return; }
    if (e.shiftKey || e.altKey) return;
    emit('navigate', statusPath(s));
  };
  article.addEventListener('click', open);
  article.addEventListener('auxclick', open);
}

export const VISIBILITY_LABEL = { public: 'Public', unlisted: 'Unlisted', private: 'Followers only', direct: 'Mentioned people only' };

function textOf(html) {
  const tpl = document.createElement('template');
  tpl.innerHTML = html;
  return (tpl.content.textContent || '').trim();
}

export function renderAccountRow(account, extra) {
  return h('div', { class: 'account-row' }, authorLine(account), extra || null);
}
