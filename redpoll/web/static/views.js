// The pages: home, explore, tags, lists, notifications, search, settings,
// profiles, threads, bookmarks, favourites, scheduled posts, and the signed-out pages.
import { api, request, session, bus, emit, ApiError } from './api.js';
import { h, icon, toast, errorText, timeEl, statusContent, displayName, avatar, plural, clear } from './ui.js';
import { renderStatus, renderAccountRow, profilePath, statusPath, authorLine, VISIBILITY_LABEL } from './status.js';
import { composer } from './compose.js';
import { feed } from './feed.js';
import * as auth from './auth.js';
import { has, choices } from './features.js';
import { filtersSection } from './filters.js';
import { exploreTabs } from './discover.js';
import { pushSection } from './push.js';
import { putAccount, patchAccount, watchAccount } from './store.js';
import { fieldsEditor, fieldsList, sessionsSection, passwordSection, deleteSection } from './settings.js';
import { twoFactorSection, exportSection, importSection } from './settings.js';
import { emailSection, confirmationText } from './email.js';
import { reportAccountButton } from './report.js';
import { profileFeatured, profileMenu, privateNote, taggedPosts, policySection, settingsLinks } from './member.js';

function unavailable(what) {
  return h('p', { class: 'unavailable', role: 'status' }, `${what} is not available on this server yet.`);
}

export function heading(text, extra) {
  return h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, text), extra || null);
}

function statusFeed(ctx, path, query, live, empty, label) {
  return feed({ path, query, signal: ctx.signal, empty, label,
    render: (s) => renderStatus(s, { onReply: ctx.reply }), live }).root;
}

// --- timelines ----------------------------------------------------------------------
export function home(ctx) {
  ctx.title('Home');
  const f = feed({ path: '/api/v1/timelines/home', signal: ctx.signal, label: 'Home timeline',
    empty: 'Your home timeline is empty: follow people from Explore or Search.',
    render: (s) => renderStatus(s, { onReply: ctx.reply }),
    live: { sub: { stream: 'user' }, events: ['update'] } });
  bus.addEventListener('posted', (e) => f.prepend(e.detail), { signal: ctx.signal });  // replies
  // on a phone the box stays one line high until tapped (style.css)
  return [heading('Home'), composer({ onPosted: (s) => f.prepend(s), collapsible: true }), f.root];
}

export function explore(ctx, local) {
  ctx.title(local ? 'Explore: this server' : 'Explore: everyone');
  const tabs = exploreTabs(local ? 'local' : 'public');
  const sub = { stream: local ? 'public:local' : 'public' };
  return [heading('Explore'), tabs,
    statusFeed(ctx, '/api/v1/timelines/public', local ? { local: 'true' } : {},
      session.token() ? { sub, events: ['update'] } : null, 'No public posts yet.', 'Public timeline')];
}

export function tag(ctx, name) {
  name = decodeURIComponent(name);
  ctx.title('#' + name);
  const head = heading('#' + name);
  if (!has('GET', '/api/v1/timelines/tag/{}')) return [heading('#' + name), unavailable('The hashtag timeline')];
  if (session.token() && has('GET', '/api/v1/tags/{}')) {
    const btn = h('button', { type: 'button', hidden: true }, 'Follow hashtag');
    head.append(btn);
    api(`/api/v1/tags/${encodeURIComponent(name)}`).then((t) => {
      const set = (on) => { btn.textContent = on ? 'Unfollow hashtag' : 'Follow hashtag'; btn.setAttribute('aria-pressed', String(on)); };
      let following = !!t.following;
      set(following);
      btn.hidden = false;
      btn.addEventListener('click', async () => {
        try {
          const r = await api(`/api/v1/tags/${encodeURIComponent(name)}/${following ? 'unfollow' : 'follow'}`, { method: 'POST' });
          following = !!r.following; set(following);
        } catch (err) { toast(errorText(err), 'error'); }
      });
    }).catch(() => {});
  }
  return [head, statusFeed(ctx, `/api/v1/timelines/tag/${encodeURIComponent(name)}`, {},
    session.token() ? { sub: { stream: 'hashtag', tag: name }, events: ['update'] } : null,
    'No posts with this hashtag yet.', `Posts tagged #${name}`)];
}

export function bookmarks(ctx) {
  ctx.title('Bookmarks');
  if (!has('GET', '/api/v1/bookmarks')) return [heading('Bookmarks'), unavailable('Bookmarking')];
  return [heading('Bookmarks'), statusFeed(ctx, '/api/v1/bookmarks', {}, null, 'No bookmarks yet.', 'Bookmarks')];
}

export function favourites(ctx) {
  ctx.title('Favourites');
  if (!has('GET', '/api/v1/favourites')) return [heading('Favourites'), unavailable('Favouriting')];
  return [heading('Favourites'), statusFeed(ctx, '/api/v1/favourites', {}, null, 'No favourites yet.', 'Favourites')];
}

// --- scheduled posts -------------------------------------------------------------------
function localInput(iso) {  // an ISO time as a datetime-local input's value
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function scheduled(ctx) {
  ctx.title('Scheduled posts');
  if (!has('GET', '/api/v1/scheduled_statuses')) return [heading('Scheduled posts'), unavailable('Scheduling')];
  const box = h('ul', { class: 'scheduled', 'aria-label': 'Scheduled posts' });
  const load = async () => {
    try {
      const all = await api('/api/v1/scheduled_statuses', { query: { limit: 40 } });
      if (ctx.signal.aborted) return;
      box.replaceChildren(...(all.length ? all.map((s) => {
        const text = s.params.text || '(attachments only)';
        const at = h('input', { type: 'datetime-local', 'aria-label': `New time for ${text}`, value: localInput(s.scheduled_at) });
        const move = h('button', { type: 'button' }, 'Reschedule');
        move.addEventListener('click', async () => {
          try {
            await api(`/api/v1/scheduled_statuses/${s.id}`, { method: 'PUT', form: { scheduled_at: new Date(at.value).toISOString() } });
            toast('Rescheduled');
            load();
          } catch (err) { toast(errorText(err), 'error'); }
        });
        const cancel = h('button', { type: 'button', class: 'danger', 'aria-label': `Cancel scheduled post ${text}` }, 'Cancel');
        cancel.addEventListener('click', async () => {
          try { await api(`/api/v1/scheduled_statuses/${s.id}`, { method: 'DELETE' }); toast('Cancelled'); load(); } catch (err) { toast(errorText(err), 'error'); }
        });
        return h('li', { class: 'scheduled-post' },
          h('p', { class: 'scheduled-text' }, text),
          h('p', { class: 'scheduled-when' }, 'Posts at ', h('time', { datetime: s.scheduled_at }, new Date(s.scheduled_at).toLocaleString())),
          h('div', { class: 'compose-row' }, at, move, cancel));
      }) : [h('li', { class: 'empty' }, 'No scheduled posts.')]));
    } catch (err) { box.replaceChildren(h('li', { class: 'error' }, errorText(err))); }
  };
  load();
  return [heading('Scheduled posts'), box];
}

// --- thread ---------------------------------------------------------------------------
// The replies as branches (as Elk and Phanpy show them): each under its
// parent, depth first, oldest first among siblings; [status, depth] with
// depth 1 for a direct reply to the focused post. Indented by depth (held
// at THREAD_INDENT_MAX on screen: style.css), a line down the left.
const THREAD_INDENT_MAX = 4;
function replyTree(rootId, descendants) {
  const children = new Map();
  const ids = new Set(descendants.map((d) => d.id));
  for (const d of descendants) {
    const parent = ids.has(d.in_reply_to_id) ? d.in_reply_to_id : rootId;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(d);
  }
  const out = [];
  const walk = (id, depth) => {
    for (const c of children.get(id) || []) { out.push([c, depth]); walk(c.id, depth + 1); }
  };
  walk(rootId, 1);
  return out;
}

function branch(node, depth) {
  node.dataset.depth = String(depth);
  node.classList.add('branch');
  node.style.setProperty('--depth', String(Math.min(depth, THREAD_INDENT_MAX)));
}

export function thread(ctx, acct, id) {
  ctx.title('Post');
  const box = h('div', { class: 'thread' }, h('p', { role: 'status' }, 'Loading…'));
  (async () => {
    try {
      const [s, context] = await Promise.all([api(`/api/v1/statuses/${id}`),
        has('GET', '/api/v1/statuses/{}/context') ? api(`/api/v1/statuses/${id}/context`)
          : { ancestors: [], descendants: [] }]);
      if (ctx.signal.aborted) return;
      const render = (x, focused, depth = 0) => {
        const node = renderStatus(x, { onReply: ctx.reply, focused });
        if (depth) branch(node, depth);
        return node;
      };
      box.replaceChildren(...context.ancestors.map((x) => render(x)), render(s, true),
        ...replyTree(s.id, context.descendants).map(([x, depth]) => render(x, false, depth)));
      ctx.title(`${displayName(s.account)}: post`);
      bus.addEventListener('posted', (e) => {  // a reply written here goes under its parent
        const parent = box.querySelector(`article[data-status-id="${CSS.escape(String(e.detail.in_reply_to_id))}"]`);
        if (!parent) return;
        const depth = Number(parent.dataset.depth || 0) + 1;
        let after = parent;  // after the parent's own replies
        while (after.nextElementSibling && Number(after.nextElementSibling.dataset.depth || 0) >= depth) after = after.nextElementSibling;
        after.after(render(e.detail, false, depth));
      }, { signal: ctx.signal });
      bus.addEventListener('status:deleted', (e) => {
        for (const n of box.querySelectorAll(`article[data-status-id="${CSS.escape(String(e.detail))}"]`)) n.remove();
      }, { signal: ctx.signal });
    } catch (err) {
      box.replaceChildren(h('p', { class: 'error', role: 'alert' }, err.status === 404 ? 'This post does not exist or is not visible to you.' : errorText(err)));
    }
  })();
  const head = heading('Post');
  head.classList.add('with-back');
  head.prepend(h('button', { type: 'button', class: 'back', 'aria-label': 'Back', title: 'Back',
    onclick: () => ctx.back() }, icon('back')));
  return [head, box];
}

// --- notifications ---------------------------------------------------------------------
const NOTE_TEXT = {
  favourite: 'favourited your post', reblog: 'boosted your post', follow: 'followed you',
  follow_request: 'asked to follow you', mention: 'mentioned you', status: 'posted',
  update: 'edited a post', poll: 'ran a poll that has ended',
};

export function renderNotification(n, ctx) {
  const who = n.account;
  const item = h('div', { class: 'notification ' + n.type, role: 'article', dataset: { id: n.id } });
  if (n.type !== 'mention') {
    item.append(h('p', { class: 'note-head' }, avatar(who, 'small'), ' ',
      h('a', { href: profilePath(who) }, displayName(who)), ' ', NOTE_TEXT[n.type] || n.type, ' ',
      timeEl(n.created_at)));
  }
  if (n.type === 'follow_request') {
    const accept = h('button', { type: 'button', class: 'primary', disabled: !has('POST', '/api/v1/follow_requests/{}/authorize') }, 'Accept');
    const reject = h('button', { type: 'button', disabled: !has('POST', '/api/v1/follow_requests/{}/reject') }, 'Reject');
    const act = async (verb) => {
      try {
        await api(`/api/v1/follow_requests/${who.id}/${verb}`, { method: 'POST' });
        item.querySelector('.choices').replaceChildren(verb === 'authorize' ? 'Accepted' : 'Rejected');
      } catch (err) { toast(errorText(err), 'error'); }
    };
    accept.addEventListener('click', () => act('authorize'));
    reject.addEventListener('click', () => act('reject'));
    item.append(h('div', { class: 'choices' }, accept, reject));
  }
  if (n.status) item.append(renderStatus(n.status, { onReply: ctx.reply }));
  return item;
}

// --- profiles -----------------------------------------------------------------------------
function relationButtons(account, rel) {
  const box = h('div', { class: 'relation' });
  const follow = h('button', { type: 'button', class: 'primary' });
  const mute = h('button', { type: 'button' });
  const block = h('button', { type: 'button', class: 'danger' });
  const note = h('p', { class: 'rel-note' });
  // lists hold only accounts one follows (as Mastodon's)
  const lists = has('GET', '/api/v1/lists') ? listPicker(account) : null;
  function paint() {
    if (lists) {
      lists.button.hidden = !rel.following;
      if (!rel.following) { lists.panel.hidden = true; lists.button.setAttribute('aria-expanded', 'false'); }
    }
    follow.textContent = rel.following ? 'Unfollow' : rel.requested ? 'Requested' : 'Follow';
    follow.classList.toggle('primary', !rel.following && !rel.requested);
    follow.hidden = !!rel.blocking;
    mute.textContent = rel.muting ? 'Unmute' : 'Mute';
    block.textContent = rel.blocking ? 'Unblock' : 'Block';
    note.textContent = [rel.followed_by ? 'Follows you' : '', rel.blocking ? 'Blocked' : '',
      rel.muting ? 'Muted' : ''].filter(Boolean).join(' · ');
  }
  async function act(path, btn) {
    btn.disabled = true;
    try {
      const was = !!rel.following;
      rel = await api(`/api/v1/accounts/${account.id}/${path}`, { method: 'POST' });
      if (was !== !!rel.following) {  // the counts on screen follow the answer (store.js)
        const d = rel.following ? 1 : -1;
        patchAccount(account.id, (a) => { a.followers_count = Math.max(0, (a.followers_count || 0) + d); });
        const me = session.me();
        if (me) patchAccount(me.id, (a) => { a.following_count = Math.max(0, (a.following_count || 0) + d); });
      }
      emit('relationship', rel);
    } catch (err) {
      toast(errorText(err), 'error');
    } finally {
      btn.disabled = false;
      paint();
    }
  }
  if (!has('POST', '/api/v1/accounts/{}/mute')) mute.hidden = true;
  if (!has('POST', '/api/v1/accounts/{}/block')) block.hidden = true;
  follow.addEventListener('click', () => act(rel.following || rel.requested ? 'unfollow' : 'follow', follow));
  mute.addEventListener('click', () => act(rel.muting ? 'unmute' : 'mute', mute));
  block.addEventListener('click', () => act(rel.blocking ? 'unblock' : 'block', block));
  // a change made elsewhere on the page (the … menu's Mute for…)
  box.addEventListener('relationship', (e) => { rel = { ...rel, ...e.detail }; paint(); });
  paint();
  box.append(follow, mute, block, reportAccountButton(account), lists ? lists.button : '', note,
    lists ? lists.panel : '');
  return box;
}

// posts, following, followers: painted from the account's one record (store.js)
function profileStats(account, base, tab) {
  const stat = (href, key, count, one, many) => {
    const n = h('strong', {}), word = document.createTextNode('');
    const paint = () => { n.textContent = account[count] ?? 0; word.textContent = ' ' + (account[count] === 1 ? one : many); };
    paint();
    return [h('a', { href, 'aria-current': tab === key ? 'page' : null }, n, word), paint];
  };
  const parts = [stat(base, 'posts', 'statuses_count', 'Post', 'Posts'),
    stat(base + '/following', 'following', 'following_count', 'Following', 'Following'),
    stat(base + '/followers', 'followers', 'followers_count', 'Follower', 'Followers')];
  const line = h('p', { class: 'profile-stats' }, ...parts.map(([a]) => a));
  watchAccount(account.id, line, () => parts.forEach(([, paint]) => paint()));
  return line;
}

// "Add to list" on the profile of someone one follows: one's lists, each a checkbox
function listPicker(account) {
  const button = h('button', { type: 'button', 'aria-expanded': 'false', hidden: true }, 'Add to list');
  const panel = h('div', { class: 'list-picker', role: 'group', 'aria-label': 'Lists', hidden: true });
  button.addEventListener('click', async () => {
    const open = button.getAttribute('aria-expanded') !== 'true';
    button.setAttribute('aria-expanded', String(open));
    panel.hidden = !open;
    if (!open) return;
    panel.replaceChildren(h('p', { role: 'status' }, 'Loading…'));
    try {
      const all = await api('/api/v1/lists');
      const members = await Promise.all(all.slice(0, 40).map((l) =>
        api(`/api/v1/lists/${l.id}/accounts`, { query: { limit: 0 } }).then((as) => as.some((a) => a.id === account.id))));
      if (!all.length) {
        panel.replaceChildren(h('p', {}, 'No lists yet. ', h('a', { href: '/lists' }, 'Make one')));
        return;
      }
      panel.replaceChildren(...all.slice(0, 40).map((l, i) => {
        const box = h('input', { type: 'checkbox' });
        box.checked = members[i];
        box.addEventListener('change', async () => {
          box.disabled = true;
          try {
            if (box.checked) await api(`/api/v1/lists/${l.id}/accounts`, { method: 'POST', form: { 'account_ids[]': account.id } });
            else await api(`/api/v1/lists/${l.id}/accounts`, { method: 'DELETE', query: { account_ids: [account.id] } });
            emit('list:members', String(l.id));
            toast(box.checked ? `Added to ${l.title}` : `Removed from ${l.title}`);
          } catch (err) {
            box.checked = !box.checked;
            toast(errorText(err), 'error');
          } finally { box.disabled = false; }
        });
        return h('label', {}, box, ' ', l.title);
      }));
    } catch (err) { panel.replaceChildren(h('p', { class: 'error' }, errorText(err))); }
  });
  return { button, panel };
}

// an account in a feed: a feed holds articles (ARIA), each account one
function accountItem(a) {
  return h('div', { role: 'article', class: 'account-item', 'aria-label': displayName(a) }, renderAccountRow(a));
}

// a profile's posts in three tabs (as Mastodon's): its posts (replies to others left out),
// posts and replies, and the posts with media
const POST_TABS = {
  posts: ['Posts', { exclude_replies: 'true' }, 'No posts yet.'],
  with_replies: ['Posts and replies', {}, 'No posts yet.'],
  media: ['Media', { only_media: 'true' }, 'No posts with media yet.'],
};
function postTabs(base, tab) {
  const link = (key, href) => h('a', { href, 'aria-current': key === tab ? 'page' : null }, POST_TABS[key][0]);
  return h('nav', { class: 'tabs tabs-profile', 'aria-label': 'Profile posts' },
    link('posts', base), link('with_replies', base + '/with_replies'), link('media', base + '/media'));
}

// who boosted or favourited a post (GET /api/v1/statuses/:id/reblogged_by, favourited_by)
export function statusAccounts(ctx, acct, id, which) {
  const boosts = which === 'reblogs';
  const title = boosts ? 'Boosted by' : 'Favourited by';
  ctx.title(title);
  const head = heading(title);
  head.classList.add('with-back');
  head.prepend(h('button', { type: 'button', class: 'back', 'aria-label': 'Back', title: 'Back',
    onclick: () => ctx.back() }, icon('back')));
  const path = `/api/v1/statuses/${id}/${boosts ? 'reblogged_by' : 'favourited_by'}`;
  if (!has('GET', path.replace(id, '{}'))) return [head, unavailable(title)];
  return [head, h('p', {}, h('a', { href: `/@${acct}/${id}` }, 'The post')),
    feed({ path, signal: ctx.signal, label: title,
      empty: boosts ? 'Nobody has boosted this post yet.' : 'Nobody has favourited this post yet.',
      render: accountItem }).root];
}

// tagged: only the posts with that hashtag (a featured hashtag's link)
export function profile(ctx, acct, tab = 'posts', tagged = null) {
  acct = decodeURIComponent(acct);
  if (tagged) tagged = decodeURIComponent(tagged);
  ctx.title('@' + acct);
  const head = h('div', { class: 'profile' }, h('p', { role: 'status' }, 'Loading…'));
  const body = h('div', {});
  (async () => {
    let account;
    try {
      account = await api('/api/v1/accounts/lookup', { query: { acct } });
    } catch (err) {
      head.replaceChildren(h('h1', { tabindex: '-1' }, '@' + acct),
        h('p', { class: 'error', role: 'alert' }, err.status === 404 ? 'No such account.' : errorText(err)));
      return;
    }
    if (ctx.signal.aborted) return;
    ctx.title(`${displayName(account)} (@${account.acct})`);
    const me = session.me();
    account = putAccount(account);
    const base = profilePath(account);
    const header = account.header_static || account.header;
    const card = h('div', { class: 'profile-card' },
      header && !/\/missing\.png$/.test(header)
        ? h('div', { class: 'profile-header' }, h('img', { src: header, alt: '' })) : null,
      avatar(account, 'large'),
      h('div', { class: 'profile-names' },
        h('h1', { tabindex: '-1' }, displayName(account)),
        h('p', { class: 'acct' }, '@' + account.acct, account.locked ? ' 🔒' : '')),
      account.note ? statusContent(account.note) : null,
      fieldsList(account),
      profileStats(account, base, tab));
    if (me && me.id === account.id) {
      card.append(h('p', { class: 'own-links' }, h('a', { href: '/settings' }, 'Edit profile'), ' · ',
        h('a', { href: '/bookmarks' }, 'Bookmarks'), ' · ', h('a', { href: '/favourites' }, 'Favourites')));
    } else if (me) {
      try {
        const [rel] = await api('/api/v1/accounts/relationships', { query: { id: [account.id] } });
        if (rel) {
          let now = rel;
          const box = relationButtons(account, rel);
          const menu = profileMenu(account, () => now, (r) => {
            now = r;
            box.dispatchEvent(new CustomEvent('relationship', { detail: r }));
            emit('relationship', r);
          });
          bus.addEventListener('relationship', (e) => {
            if (e.detail && e.detail.id === account.id) { now = { ...now, ...e.detail }; menu.paint(); }
          }, { signal: ctx.signal });
          box.querySelector('.rel-note').before(menu.node);
          card.append(box, privateNote(account, rel));
        }
      } catch (err) { toast(errorText(err), 'error'); }
    }
    head.replaceChildren(card, profileFeatured(ctx, account, tagged));
    if (tagged) {
      body.replaceChildren(taggedPosts(ctx, account, tagged, (s) => renderStatus(s, { onReply: ctx.reply })));
    } else if (POST_TABS[tab]) {
      const [, query, empty] = POST_TABS[tab];
      const pinned = h('section', { class: 'pinned-section', 'aria-label': 'Pinned posts', hidden: true });
      body.replaceChildren(postTabs(base, tab), pinned, statusFeed(ctx, `/api/v1/accounts/${account.id}/statuses`, query, null,
        empty, `${POST_TABS[tab][0]} by ${displayName(account)}`));
      if (tab !== 'posts') return;
      try {
        const pins = await api(`/api/v1/accounts/${account.id}/statuses`, { query: { pinned: 'true' } });
        if (pins.length && !ctx.signal.aborted) {
          pinned.replaceChildren(...pins.map((s) => renderStatus(s, { onReply: ctx.reply, pinned: true })));
          pinned.hidden = false;
        }
      } catch (err) { /* the posts below still show */ }
    } else {
      body.replaceChildren(h('h2', {}, tab === 'followers' ? 'Followers' : 'Following'),
        feed({ path: `/api/v1/accounts/${account.id}/${tab}`, signal: ctx.signal,
          label: tab === 'followers' ? 'Followers' : 'Following', empty: 'Nobody yet.',
          render: accountItem }).root);
    }
  })();
  return [head, body];
}

// --- search -------------------------------------------------------------------------------
export function search(ctx) {
  ctx.title('Search');
  const q = new URLSearchParams(location.search).get('q') || '';
  const input = h('input', { type: 'search', name: 'q', value: q, 'aria-label': 'Search terms',
    placeholder: 'People, #hashtags, posts', autocomplete: 'off' });
  const results = h('div', { class: 'results', 'aria-live': 'polite' });
  const form = h('form', { role: 'search', class: 'search-form', onsubmit: (e) => {
    e.preventDefault();
    ctx.go('/search?q=' + encodeURIComponent(input.value.trim()), { replace: true });
  } }, input, h('button', { type: 'submit', class: 'primary' }, 'Search'));
  // what posts a search reads, and the operators it understands (Mastodon's)
  const hint = h('details', { class: 'search-hint' },
    h('summary', {}, 'Posts are searched among your own, those you favourited, boosted, bookmarked, replied to, voted in or were mentioned in, and the public posts of accounts that allow it.'),
    h('ul', {}, ...[
      ['"exact phrase"', 'the words one after another'], ['-word', 'leave out posts with it (also -from:, -has:, …)'],
      ['from:name', 'by that account (from:me: yours)'], ['has:media, has:poll, has:link', 'with attachments, a poll, a link'],
      ['is:reply, is:sensitive', 'replies, posts with a content warning'], ['language:en', 'in that language'],
      ['before:, after:, during:2025-01-31', 'by the day posted'], ['in:library, in:public', 'only your library, only public posts'],
    ].map(([op, what]) => h('li', {}, h('code', {}, op), ' ' + what))));
  if (!has('GET', '/api/v2/search')) results.append(unavailable('Search'));
  else if (q) {
    results.append(h('p', { role: 'status' }, 'Searching…'));
    // name@host: looked up on its server (a signed-in search only, as Mastodon)
    const remote = session.token() && /^@?[\w.-]+@[\w.-]+(:\d+)?$/.test(q);
    api('/api/v2/search', { query: { q, resolve: remote ? 'true' : 'false', limit: 20 } }).then((r) => {
      const parts = [];
      parts.push(h('h2', {}, 'People'), r.accounts?.length
        ? h('div', { class: 'accounts' }, r.accounts.map((a) => renderAccountRow(a))) : h('p', {}, 'No people found.'));
      parts.push(h('h2', {}, 'Hashtags'), r.hashtags?.length
        ? h('ul', { class: 'tags' }, r.hashtags.map((t) => h('li', {}, h('a', { href: '/tags/' + encodeURIComponent(t.name) }, '#' + t.name))))
        : h('p', {}, 'No hashtags found.'));
      parts.push(h('h2', {}, 'Posts'), r.statuses?.length
        ? h('div', { class: 'feed' }, r.statuses.map((s) => renderStatus(s, { onReply: ctx.reply }))) : h('p', {}, 'No posts found.'));
      results.replaceChildren(...parts);
    }).catch((err) => results.replaceChildren(h('p', { class: 'error', role: 'alert' }, errorText(err))));
  }
  if (!q) requestAnimationFrame(() => input.focus());
  return [heading('Search'), form, hint, results];
}

// --- lists ----------------------------------------------------------------------------------
export function lists(ctx) {
  ctx.title('Lists');
  const box = h('ul', { class: 'lists' });
  const title = h('input', { name: 'title', 'aria-label': 'New list title', placeholder: 'New list title', required: true, maxlength: '100' });
  const load = async () => {
    try {
      const all = await api('/api/v1/lists');
      box.replaceChildren(...(all.length ? all.map((l) => {
        const del = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete list ${l.title}` }, 'Delete');
        del.addEventListener('click', async () => {
          try { await api(`/api/v1/lists/${l.id}`, { method: 'DELETE' }); load(); } catch (err) { toast(errorText(err), 'error'); }
        });
        return h('li', {}, h('a', { href: `/lists/${l.id}` }, l.title), del);
      }) : [h('li', { class: 'empty' }, 'No lists yet.')]));
    } catch (err) { box.replaceChildren(h('li', { class: 'error' }, errorText(err))); }
  };
  const form = h('form', { class: 'inline-form', onsubmit: async (e) => {
    e.preventDefault();
    try { await api('/api/v1/lists', { method: 'POST', form: { title: title.value } }); title.value = ''; load(); }
    catch (err) { toast(errorText(err), 'error'); }
  } }, title, h('button', { type: 'submit', class: 'primary' }, 'Create list'));
  load();
  return [heading('Lists'), form, box];
}

// A list: its timeline, and its members. Only accounts one follows can be
// added (as Mastodon's): the people offered are those one follows, and a
// name typed in is checked against one's follows first. The timeline is
// read again when the members change (the server fills it from theirs).
export function listView(ctx, id) {
  ctx.title('List');
  const head = heading('List');
  const members = h('ul', { class: 'members' });
  const offers = h('ul', { class: 'members', 'aria-label': 'People you follow' });
  const offersLabel = h('p', { class: 'meta', hidden: true }, 'People you follow');
  const who = h('input', { name: 'acct', 'aria-label': 'Username to add', placeholder: 'username', required: true, autocomplete: 'off' });
  const me = session.me();
  let memberIds = new Set();
  let followed = [];
  const timeline = feed({ path: `/api/v1/timelines/list/${id}`, signal: ctx.signal, label: 'List timeline',
    empty: 'No posts in this list yet.', render: (s) => renderStatus(s, { onReply: ctx.reply }),
    live: { sub: { stream: 'list', list: String(id) }, events: ['update'] } });
  const changed = () => { emit('list:members', String(id)); loadMembers(); timeline.reload(); };
  const addMember = async (a) => {
    await api(`/api/v1/lists/${id}/accounts`, { method: 'POST', form: { 'account_ids[]': a.id } });
    toast(`Added @${a.acct}`);
    changed();
  };
  const paintOffers = () => {
    const q = who.value.trim().replace(/^@/, '').toLowerCase();
    const shown = followed.filter((a) => !memberIds.has(a.id) &&
      (!q || a.acct.toLowerCase().includes(q) || (a.display_name || '').toLowerCase().includes(q))).slice(0, 8);
    offers.replaceChildren(...shown.map((a) => {
      const add = h('button', { type: 'button', 'aria-label': `Add @${a.acct} to the list` }, 'Add');
      add.addEventListener('click', async () => {
        add.disabled = true;
        try { await addMember(a); } catch (err) { add.disabled = false; toast(errorText(err), 'error'); }
      });
      return h('li', {}, renderAccountRow(a, add));
    }));
    offersLabel.hidden = !shown.length;
  };
  const loadFollowed = async () => {
    if (!me) return;
    try {
      followed = await api(`/api/v1/accounts/${me.id}/following`, { query: { limit: 80 } });
      paintOffers();
    } catch { /* the form still takes a name */ }
  };
  const loadMembers = async () => {
    try {
      const accounts = await api(`/api/v1/lists/${id}/accounts`, { query: { limit: 0 } });
      memberIds = new Set(accounts.map((a) => a.id));
      paintOffers();
      members.replaceChildren(...accounts.map((a) => {
        const rm = h('button', { type: 'button', 'aria-label': `Remove @${a.acct} from the list` }, 'Remove');
        rm.addEventListener('click', async () => {
          try { await api(`/api/v1/lists/${id}/accounts`, { method: 'DELETE', query: { account_ids: [a.id] } }); changed(); }
          catch (err) { toast(errorText(err), 'error'); }
        });
        return h('li', {}, renderAccountRow(a, rm));
      }));
    } catch (err) { members.replaceChildren(h('li', { class: 'error' }, errorText(err))); }
  };
  who.addEventListener('input', paintOffers);
  const add = h('form', { class: 'inline-form', onsubmit: async (e) => {
    e.preventDefault();
    try {
      const a = await api('/api/v1/accounts/lookup', { query: { acct: who.value.trim().replace(/^@/, '') } });
      const [rel] = await api('/api/v1/accounts/relationships', { query: { id: [a.id] } });
      if (!rel || !rel.following) { toast(`Follow @${a.acct} first: a list holds people you follow.`, 'error'); return; }
      await addMember(a);
      who.value = '';
    } catch (err) { toast(err.status === 404 ? 'No such account' : errorText(err), 'error'); }
  } }, who, h('button', { type: 'submit' }, 'Add to list'));
  api(`/api/v1/lists/${id}`).then((l) => {
    head.querySelector('h1').textContent = l.title;
    ctx.title(l.title);
  }).catch((err) => toast(errorText(err), 'error'));
  loadMembers();
  loadFollowed();
  const details = h('details', { class: 'list-members' }, h('summary', {}, 'Members'), add,
    offersLabel, offers, h('p', { class: 'meta' }, 'In this list'), members);
  return [head, details, timeline.root];
}

// --- settings ---------------------------------------------------------------------------
export function settings(ctx) {
  ctx.title('Settings');
  const me = session.me() || {};
  const field = (label, el) => h('label', { class: 'field' }, h('span', {}, label), el);
  const name = h('input', { name: 'display_name', value: me.display_name || '', maxlength: '30' });
  const bio = h('textarea', { name: 'note', rows: '4', maxlength: '500' });
  bio.value = me.source?.note ?? '';
  const locked = h('input', { type: 'checkbox', name: 'locked' });
  locked.checked = !!me.locked;
  // offered only where the server takes them (its OpenAPI document): a
  // server that cannot lock accounts pins `locked` to false
  const lockable = choices('PATCH', '/api/v1/accounts/update_credentials', 'locked');
  const canLock = lockable === null || lockable.includes(true);
  const privacies = choices('PATCH', '/api/v1/accounts/update_credentials', 'source[privacy]');
  const privacy = h('select', { name: 'privacy' },
    Object.entries(VISIBILITY_LABEL).filter(([v]) => v !== 'direct' && (!privacies || privacies.includes(v)))
      .map(([v, l]) => h('option', { value: v }, l)));
  privacy.value = me.source?.privacy || 'public';
  // the avatar and header: a file each, shown before it is saved
  const pictures = {};
  const picture = (name, label) => {
    const input = h('input', { type: 'file', name, accept: 'image/jpeg,image/png,image/webp,image/gif' });
    const preview = name === 'avatar' ? avatar(me, 'large')
      : h('div', { class: 'header-preview', 'aria-hidden': 'true' });
    const current = name === 'header' && me.header && !/\/missing\.png$/.test(me.header) ? me.header : null;
    if (current) preview.append(h('img', { src: current, alt: '' }));
    input.addEventListener('change', () => {
      const file = input.files[0];
      if (!file) return;
      const reader = new FileReader();
      reader.addEventListener('load', () => {
        const img = h('img', { src: reader.result, alt: '', class: 'preview' });
        preview.querySelector('img')?.remove();
        preview.append(img);
      });
      reader.readAsDataURL(file);
    });
    pictures[name] = input;
    return { preview, field: field(label, input) };
  };
  const av = picture('avatar', 'Avatar'), hd = picture('header', 'Header');
  const fields = fieldsEditor(me);
  const canUpload = has('PATCH', '/api/v1/accounts/update_credentials');
  const form = h('form', { class: 'settings', onsubmit: async (e) => {
    e.preventDefault();
    // only what changed: a server may not support every field (locked, privacy)
    const now = session.me() || {};
    const changes = {};
    if (name.value !== (now.display_name || '')) changes.display_name = name.value;
    if (bio.value !== (now.source?.note ?? '')) changes.note = bio.value;
    if (locked.checked !== !!now.locked) changes.locked = locked.checked ? 'true' : 'false';
    if (privacy.value !== (now.source?.privacy || 'public')) changes['source[privacy]'] = privacy.value;
    Object.assign(changes, fields.changes(now));
    const files = Object.entries(pictures).filter(([, input]) => input.files.length);
    if (!Object.keys(changes).length && !files.length) { toast('Nothing to save'); return; }
    const save = form.querySelector('button[type=submit]');
    save.disabled = true;
    try {
      let updated;
      if (files.length) {  // pictures go as multipart form data, with the rest
        const body = new FormData();
        for (const [k, v] of Object.entries(changes)) body.append(k, v);
        for (const [k, input] of files) body.append(k, input.files[0]);
        updated = await api('/api/v1/accounts/update_credentials', { method: 'PATCH', body });
        for (const [, input] of files) input.value = '';
      } else updated = await api('/api/v1/accounts/update_credentials', { method: 'PATCH', form: changes });
      session.set({ ...session.get(), me: updated });
      av.preview.replaceWith(av.preview = avatar(updated, 'large'));
      toast('Settings saved');
    } catch (err) {
      toast(err.status === 413 ? `The picture is too large. ${errorText(err)}` : errorText(err), 'error');
    } finally { save.disabled = false; }
  } },
  canUpload ? h('div', { class: 'profile-images' }, hd.preview, av.preview, av.field, hd.field) : null,
  field('Display name', name), field('Bio', bio), fields.node,
  canLock ? h('label', { class: 'check' }, locked, ' Locked account (approve each follower)') : null,
  privacies === null || privacies.length ? field('Default visibility', privacy) : null,
  h('button', { type: 'submit', class: 'primary' }, 'Save'));
  const out = h('button', { type: 'button', onclick: () => ctx.signOut() }, 'Sign out');
  const editable = has('PATCH', '/api/v1/accounts/update_credentials');
  for (const el of form.elements) el.disabled = !editable;
  return [heading('Settings'), editable ? null : unavailable('Changing the profile'), form,
    ...settingsLinks(), ...policySection(), ...filtersSection(), ...pushSection(), ...sessionsSection(ctx), ...emailSection(), ...passwordSection(), ...twoFactorSection(), ...exportSection(), ...importSection(),
    has('POST', '/api/v1/redpoll/invites') ? h('p', {}, h('a', { href: '/settings/invites' }, 'Invite people')) : null,
    has('GET', '/api/v1/redpoll/warnings') ? h('p', {}, h('a', { href: '/settings/warnings' }, 'Warnings about your account')) : null,
    h('h2', {}, 'Session'), h('p', {}, 'Signed in as @' + (me.acct || '?')), out, ...deleteSection(ctx)];
}

// --- signed out ------------------------------------------------------------------------------
export function landing(ctx) {
  ctx.title('Welcome');
  const go = h('button', { type: 'button', class: 'primary big', onclick: async () => {
    try { await auth.signIn(ctx.back || '/'); } catch (err) { toast(errorText(err), 'error'); }
  } }, 'Sign in');
  return [h('div', { class: 'welcome' },
    h('h1', { tabindex: '-1' }, 'Redpoll'),
    h('p', {}, 'A small social network. Post, follow people, talk.'),
    go,
    h('p', {}, 'New here? ', h('a', { href: '/signup' }, 'Create an account')),
    h('p', {}, h('a', { href: '/explore' }, 'See what people post here')),
    h('p', {}, h('a', { href: '/about' }, 'About this server')))];
}

// About this server: its title, description, extended description and rules
// (redpoll admin describe / rules-add), GET /api/v2/instance and
// /api/v1/instance/extended_description; signed in or not.
export function about(ctx) {
  ctx.title('About');
  const box = h('div', { class: 'about' }, h('p', { role: 'status' }, 'Loading…'));
  (async () => {
    try {
      const [info, extended] = await Promise.all([api('/api/v2/instance', { token: null }),
        has('GET', '/api/v1/instance/extended_description')
          ? api('/api/v1/instance/extended_description', { token: null }).catch(() => null) : null]);
      if (ctx.signal.aborted) return;
      const rules = info.rules || [];
      const contact = info.contact?.email;
      box.replaceChildren(
        h('section', { class: 'about-head', 'aria-label': 'Server' },
          h('h2', {}, info.title || info.domain || 'Redpoll'),
          info.domain ? h('p', { class: 'acct' }, info.domain) : null,
          info.description ? h('p', { class: 'about-description' }, info.description) : null),
        extended && extended.content ? h('section', { class: 'about-extended', 'aria-label': 'About this server' },
          statusContent(extended.content)) : null,
        h('section', { class: 'about-rules-section', 'aria-labelledby': 'about-rules-head' },
          h('h2', { id: 'about-rules-head' }, 'Server rules'),
          rules.length ? h('ol', { class: 'about-rules' }, ...rules.map((r) => h('li', {},
            h('strong', {}, r.text), r.hint ? h('span', { class: 'hint' }, ' ', r.hint) : null)))
            : h('p', {}, 'This server has no rules listed.')),
        contact ? h('p', {}, 'Contact: ', h('a', { href: 'mailto:' + contact }, contact)) : null);
    } catch (err) { box.replaceChildren(h('p', { class: 'error', role: 'alert' }, errorText(err))); }
  })();
  return [heading('About'), box];
}

// Each invalid field of a refused sign-up, by name (Mastodon's details).
function signUpErrors(err) {
  const details = err instanceof ApiError && err.body && err.body.details;
  if (!details) return [errorText(err)];
  const NAMES = { username: 'Username', email: 'E-mail', password: 'Password', agreement: 'Agreement',
    reason: 'Reason', invite_code: 'Invite' };
  return Object.entries(details).map(([field, found]) =>
    `${NAMES[field] || field}: ${found.map((f) => f.description).join(', ')}`);
}

// Sign-up: the server's rules to agree to, a reason when accounts wait for
// approval, an invite's code from /invite/:code (which lets one in while
// registrations are closed or need approval).
export function signup(ctx, code = null) {
  ctx.title(code ? 'Invited' : 'Sign up');
  const box = h('div', { class: 'welcome' }, h('h1', { tabindex: '-1' }, code ? 'You are invited' : 'Create an account'),
    h('p', { role: 'status' }, 'Loading…'));
  const show = (...nodes) => { box.replaceChildren(box.firstChild, ...nodes.filter(Boolean)); };
  const invite = code ? api('/api/v1/redpoll/invites/' + encodeURIComponent(code), { token: null })
    .catch(() => ({ valid: false })) : Promise.resolve(null);
  Promise.all([auth.signUpTerms(), invite]).then(([terms, inv]) => {
    const reg = terms.registrations;
    const invited = Boolean(inv && inv.valid);
    const notes = [];
    if (code && !invited) notes.push(h('p', { class: 'error', role: 'alert' }, 'This invite is not valid any more (expired or used up).'));
    if (!reg.enabled && !invited) {
      const closed = h('div', { class: 'closed-message' });
      if (reg.message) closed.append(statusContent(reg.message));
      show(...notes, h('p', { role: 'status' }, 'This server is not taking sign-ups now.'), closed,
        h('p', {}, 'Have an account? ', h('a', { href: '/signin' }, 'Sign in')));
      return;
    }
    const asksApproval = reg.approval_required && !invited;
    const err = h('div', { class: 'error', role: 'alert' });
    const input = (label, attrs) => h('label', { class: 'field' }, h('span', {}, label), h('input', { required: true, ...attrs }));
    const rules = terms.rules.length ? h('section', { class: 'signup-rules', 'aria-labelledby': 'rules-head' },
      h('h2', { id: 'rules-head' }, 'Server rules'),
      h('ol', {}, ...terms.rules.map((r) => h('li', {}, h('strong', {}, r.text), r.hint ? h('p', { class: 'hint' }, r.hint) : null)))) : null;
    const agree = h('input', { type: 'checkbox', name: 'agreement', required: true });
    const reason = asksApproval ? h('textarea', { name: 'reason', rows: '3', maxlength: '1000', required: Boolean(reg.reason_required) }) : null;
    const form = h('form', { class: 'signup', onsubmit: async (e) => {
      e.preventDefault();
      err.replaceChildren();
      const data = Object.fromEntries(new FormData(form));
      data.agreement = agree.checked;
      if (invited) data.invite_code = code;
      const btn = form.querySelector('button[type=submit]');
      btn.disabled = true;
      try {
        const done = await auth.signUp(data);
        if (done.pending) {
          show(h('p', { role: 'status', class: 'pending' }, 'Your account is waiting for a moderator\'s approval. ' +
            'You can sign in once it is approved.'), h('p', {}, h('a', { href: '/explore' }, 'See what people post here')));
          return;
        }
        ctx.started();
        ctx.go('/', { replace: true });
      } catch (e2) {
        const mailed = confirmationText(e2);  // e-mail on: the account is made, its address awaits the link
        if (mailed) {
          show(h('p', { role: 'status', class: 'pending' }, mailed), h('p', {}, h('a', { href: '/explore' }, 'See what people post here')));
          return;
        }
        err.replaceChildren(...signUpErrors(e2).map((t) => h('p', {}, t)));
        btn.disabled = false;
      }
    } },
    input('Username', { name: 'username', autocomplete: 'username', pattern: '[A-Za-z0-9_]{1,30}', maxlength: '30' }),
    input('E-mail', { name: 'email', type: 'email', autocomplete: 'email' }),
    input('Password', { name: 'password', type: 'password', autocomplete: 'new-password', minlength: '8' }),
    asksApproval ? h('p', { class: 'hint' }, 'A moderator approves each new account on this server.') : null,
    reason ? h('label', { class: 'field' }, h('span', {}, reg.reason_required ? 'Why do you want to join?' : 'Why do you want to join? (optional)'), reason) : null,
    rules,
    h('label', { class: 'check' }, agree, rules ? ' I agree to the server rules' : ' I agree to the terms of this server'),
    err, h('button', { type: 'submit', class: 'primary' }, 'Sign up'));
    show(...notes, invited ? h('p', { class: 'hint' }, 'Your invite lets you join this server.') : null, form,
      h('p', {}, 'Have an account? ', h('a', { href: '/signin' }, 'Sign in')));
  }).catch((e) => show(h('p', { class: 'error', role: 'alert' }, errorText(e))));
  return [box];
}

export function callback(ctx) {
  ctx.title('Signing in');
  const msg = h('p', { role: 'status' }, 'Signing in…');
  auth.finishSignIn().then((back) => { ctx.started(); ctx.go(back, { replace: true }); })
    .catch((err) => {
      msg.setAttribute('role', 'alert');
      msg.replaceChildren(confirmationText(err) || errorText(err), ' ', h('a', { href: '/signin' }, 'Try again'));
    });
  return [h('div', { class: 'welcome' }, h('h1', { tabindex: '-1' }, 'Signing in'), msg)];
}
