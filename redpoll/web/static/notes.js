// Notifications, grouped as Mastodon's v2 API groups them: favourites,
// boosts and follows of one post or of you read "bob and 3 others
// favourited your post", a mention comes with a header, and an All /
// Mentions filter. What is newer than the notifications marker (GET
// /api/v1/markers, shared with the reader's other apps) shows as unread;
// the All tab moves the marker up to the newest it shows (the badge goes),
// and "Mark all as read" moves it to the newest there is, from either tab.
import { api, bus, emit } from './api.js';
import { h, icon, avatar, displayName, timeEl, toast, errorText, plural } from './ui.js';
import { renderStatus, profilePath } from './status.js';
import { feed } from './feed.js';
import { has } from './features.js';
import { heading, renderNotification } from './views.js';
import { filteredEntry } from './member.js';

const TEXT = {
  favourite: 'favourited your post', reblog: 'boosted your post', follow: 'followed you',
  follow_request: 'asked to follow you', mention: 'mentioned you', status: 'posted',
  update: 'edited a post', poll: 'ran a poll that has ended',
};
const SAMPLE_SHOWN = 6;
const COMPACT = new Set(['favourite', 'reblog', 'poll', 'update']);

function newer(a, b) { return b === null || b === undefined || BigInt(a) > BigInt(b); }

// GroupedNotificationsResults -> groups, each with its accounts and status
function groupsOf(data) {
  if (!data || !Array.isArray(data.notification_groups)) return [];
  const accounts = new Map((data.accounts || []).map((a) => [a.id, a]));
  const statuses = new Map((data.statuses || []).map((s) => [s.id, s]));
  return data.notification_groups.map((g) => ({ ...g,
    accounts: (g.sample_account_ids || []).map((id) => accounts.get(id)).filter(Boolean),
    status: g.status_id ? statuses.get(g.status_id) || null : null }));
}

// "bob", "bob and 1 other", "bob and 3 others"
function who(g) {
  const first = g.accounts[0];
  const link = h('a', { href: profilePath(first) }, displayName(first));
  const others = Math.max(0, (g.notifications_count || 1) - 1);
  return others ? [link, ' and ', plural(others, 'other', 'others')] : [link];
}

function followRequestChoices(account, item) {
  const accept = h('button', { type: 'button', class: 'primary', disabled: !has('POST', '/api/v1/follow_requests/{}/authorize') }, 'Accept');
  const reject = h('button', { type: 'button', disabled: !has('POST', '/api/v1/follow_requests/{}/reject') }, 'Reject');
  const act = async (verb) => {
    try {
      await api(`/api/v1/follow_requests/${account.id}/${verb}`, { method: 'POST' });
      item.querySelector('.choices').replaceChildren(verb === 'authorize' ? 'Accepted' : 'Rejected');
    } catch (err) { toast(errorText(err), 'error'); }
  };
  accept.addEventListener('click', () => act('authorize'));
  reject.addEventListener('click', () => act('reject'));
  return h('div', { class: 'choices' }, accept, reject);
}

// each kind of notification its icon, so a list of them scans at a glance (as Mastodon's)
const ICON = { favourite: 'favourite', reblog: 'boost', follow: 'user', follow_request: 'user',
  mention: 'reply', status: 'bell', update: 'pen', poll: 'poll' };

// "Follow back" on a follow from someone one does not follow (shown once the relationship says so)
function followBack(account) {
  const button = h('button', { type: 'button', class: 'primary follow-back', hidden: true }, 'Follow back');
  const box = h('div', { class: 'choices' }, button);
  if (!has('POST', '/api/v1/accounts/{}/follow')) return box;
  api('/api/v1/accounts/relationships', { query: { id: [account.id] } }).then(([rel]) => {
    if (rel && !rel.following && !rel.requested && !rel.blocking) button.hidden = false;
  }).catch(() => {});
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const rel = await api(`/api/v1/accounts/${account.id}/follow`, { method: 'POST' });
      emit('relationship', rel);
      box.replaceChildren(h('span', { class: 'hint' }, rel.following ? 'Following' : 'Requested'));
    } catch (err) {
      button.disabled = false;
      toast(errorText(err), 'error');
    }
  });
  return box;
}

export function renderGroup(g, ctx, unread) {
  // role article: what a feed holds (ARIA), each notification one
  const item = h('div', { class: 'notification ' + g.type + (unread ? ' unread' : ''), role: 'article',
    dataset: { id: g.most_recent_notification_id } });
  const text = TEXT[g.type] || g.type;
  const when = g.latest_page_notification_at ? timeEl(g.latest_page_notification_at) : null;
  if (g.accounts.length > 1) {
    item.append(h('p', { class: 'note-avatars', 'aria-hidden': 'true' },
      ...g.accounts.slice(0, SAMPLE_SHOWN).map((a) => avatar(a, 'small'))));
    item.append(h('p', { class: 'note-head' }, ...who(g), ' ', text, ' ', when));
  } else {
    item.append(h('p', { class: 'note-head' }, avatar(g.accounts[0], 'small'), ' ', ...who(g), ' ',
      text, ' ', when));
  }
  const kind = ICON[g.type];
  if (kind) item.querySelector('.note-head').prepend(h('span', { class: 'note-icon', 'aria-hidden': 'true' }, icon(kind)));
  if (unread) item.querySelector('.note-head').prepend(h('span', { class: 'visually-hidden' }, 'Unread: '));
  if (g.type === 'follow_request') item.append(followRequestChoices(g.accounts[0], item));
  if (g.type === 'follow' && g.accounts.length) item.append(followBack(g.accounts[0]));
  // a favourite, boost, poll or edit of one's post shows that post small, without actions;
  // a mention or a new post of someone's, whole (one answers those)
  if (g.status) item.append(renderStatus(g.status, { onReply: ctx.reply, compact: COMPACT.has(g.type) }));
  return item;
}

function tabs(mentions) {
  const tab = (href, label, on) => h('a', { href, class: 'tab', 'aria-current': on ? 'page' : null }, label);
  return h('nav', { class: 'tabs', 'aria-label': 'Notifications filter' },
    tab('/notifications', 'All', !mentions), tab('/notifications/mentions', 'Mentions', mentions));
}

async function readMarker() {
  if (!has('GET', '/api/v1/markers')) return localStorage.getItem('redpoll.lastRead');
  try {
    const m = await api('/api/v1/markers', { query: { timeline: ['notifications'] } });
    return m?.notifications?.last_read_id || null;
  } catch { return null; }
}

export function notifications(ctx, mentions = false) {
  ctx.title(mentions ? 'Mentions' : 'Notifications');
  const head = heading('Notifications');
  if (!has('GET', '/api/v1/notifications')) {
    return [head, h('p', { class: 'unavailable', role: 'status' }, 'Notifications is not available on this server yet.')];
  }
  const grouped = has('GET', '/api/v2/notifications');
  const body = h('div', { class: 'notes-body' }, h('p', { role: 'status' }, 'Loading…'));
  let top = null;   // the newest notification id shown
  let marker;       // the marker when the page opened: newer is unread
  const markRead = (id) => {
    if (!id) return;
    if (!top || BigInt(id) > BigInt(top)) top = id;
    if (!mentions) emit('notifications:read', top);  // the All tab reads what it shows
  };

  const markAll = h('button', { type: 'button', class: 'mark-read' }, 'Mark all as read');
  markAll.addEventListener('click', async () => {
    markAll.disabled = true;
    try {
      let newest = top;
      if (mentions || !newest) {
        const [n] = await api('/api/v1/notifications', { query: { limit: 1 } });
        if (n && newer(n.id, newest)) newest = n.id;
      }
      if (newest) emit('notifications:read', newest);
      for (const el of body.querySelectorAll('.notification.unread')) el.classList.remove('unread');
      for (const el of body.querySelectorAll('.notification .visually-hidden')) el.remove();
      toast('All notifications read');
    } catch (err) {
      toast(errorText(err), 'error');
    } finally { markAll.disabled = false; }
  });
  head.append(markAll);

  (async () => {
    marker = await readMarker();
    if (ctx.signal.aborted) return;
    const query = mentions ? { types: ['mention'] } : {};
    let f;
    if (grouped) {
      f = feed({ path: '/api/v2/notifications', query, signal: ctx.signal, label: mentions ? 'Mentions' : 'Notifications',
        empty: mentions ? 'No mentions yet.' : 'No notifications yet.',
        itemsOf: groupsOf, keyOf: (g) => g.group_key, cursorOf: (g) => g.page_min_id,
        replaces: (old, g) => newer(g.most_recent_notification_id, old.most_recent_notification_id) ||
          g.notifications_count !== old.notifications_count,
        render: (g) => {
          markRead(g.most_recent_notification_id);
          return renderGroup(g, ctx, newer(g.most_recent_notification_id, marker));
        },
        pollMs: 5000, pollTop: true });
      bus.addEventListener('stream', (e) => {
        if (e.detail.event === 'notification') f.refreshTop();
      }, { signal: ctx.signal });
    } else {
      f = feed({ path: '/api/v1/notifications', query, signal: ctx.signal, label: 'Notifications',
        empty: 'No notifications yet.', keyOf: (n) => n.id,
        render: (n) => {
          markRead(n.id);
          const item = renderNotification(n, ctx);
          if (newer(n.id, marker)) item.classList.add('unread');
          return item;
        },
        live: { sub: null, events: ['notification'],
          accept: (n) => (!mentions || n.type === 'mention' ? n : null) }, pollMs: 5000 });
    }
    body.replaceChildren(f.root);
  })();
  return [head, tabs(mentions), filteredEntry(ctx), body];
}
