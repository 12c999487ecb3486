// Discovery: the Explore tabs (trending posts, hashtags, links; the public
// timelines live in views.js) and "Who to follow" with Follow buttons.
import { api, session } from './api.js';
import { h, toast, errorText } from './ui.js';
import { renderStatus, renderAccountRow } from './status.js';
import { feed } from './feed.js';
import { has } from './features.js';

// The Explore tabs: [href, label, route key]; a tab the server lacks is left out.
const TABS = [
  ['/explore', 'This server', 'local', null],
  ['/public', 'Everyone', 'public', null],
  ['/explore/posts', 'Posts', 'posts', '/api/v1/trends/statuses'],
  ['/explore/tags', 'Hashtags', 'tags', '/api/v1/trends/tags'],
  ['/explore/links', 'Links', 'links', '/api/v1/trends/links'],
  ['/explore/people', 'People', 'people', '/api/v2/suggestions'],
];

function head() { return h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Explore')); }

export function exploreTabs(current) {
  const tabs = TABS.filter(([, , key, path]) => !path || (has('GET', path) && (key !== 'people' || session.token())));
  return h('nav', { class: 'tabs', 'aria-label': 'Explore' },
    ...tabs.map(([href, label, key]) => h('a', { href, 'aria-current': key === current ? 'page' : null }, label)));
}

// "12 people in the last 2 days": a Tag or link history's accounts of today and yesterday.
function talking(history) {
  const days = (history || []).slice(0, 2);
  const people = days.reduce((n, d) => n + Number(d.accounts || 0), 0);
  return `${people} ${people === 1 ? 'person' : 'people'} in the last 2 days`;
}

// A small bar chart of the week's uses, oldest first (decorative: the text says it).
function spark(history) {
  const days = (history || []).slice().reverse();
  const top = Math.max(1, ...days.map((d) => Number(d.uses || 0)));
  return h('span', { class: 'spark', 'aria-hidden': 'true' }, ...days.map((d) => {
    const bar = h('span', {});
    bar.style.height = `${Math.max(2, Math.round(20 * Number(d.uses || 0) / top))}px`;  // CSSOM: allowed by the CSP
    return bar;
  }));
}

function trendList(ctx, path, label, empty, row) {
  const list = h('ol', { class: 'trends', 'aria-label': label });
  const status = h('p', { class: 'feed-status', role: 'status' }, 'Loading…');
  (async () => {
    try {
      const items = await api(path, { query: { limit: 20 } });
      if (ctx.signal.aborted) return;
      list.replaceChildren(...items.map(row));
      status.textContent = items.length ? '' : empty;
    } catch (err) { status.textContent = errorText(err); }
  })();
  return h('section', { class: 'feed-wrap' }, list, status);
}

export function trendingPosts(ctx) {
  ctx.title('Explore: trending posts');
  return [head(), exploreTabs('posts'), feed({ path: '/api/v1/trends/statuses', signal: ctx.signal,
    label: 'Trending posts', empty: 'Nothing is trending yet: posts favourited and boosted in the last two days show here.',
    render: (s) => renderStatus(s, { onReply: ctx.reply }) }).root];
}

export function trendingTags(ctx) {
  ctx.title('Explore: hashtags');
  return [head(), exploreTabs('tags'), trendList(ctx, '/api/v1/trends/tags', 'Trending hashtags',
    'No hashtag is trending yet.', (t) => h('li', { class: 'trend' },
      h('div', {}, h('a', { href: `/tags/${encodeURIComponent(t.name)}`, class: 'trend-name' }, '#' + t.name),
        h('p', { class: 'trend-note' }, talking(t.history))), spark(t.history)))];
}

export function trendingLinks(ctx) {
  ctx.title('Explore: links');
  return [head(), exploreTabs('links'), trendList(ctx, '/api/v1/trends/links', 'Trending links',
    'No link is trending yet.', (l) => h('li', { class: 'trend' },
      h('div', {}, h('a', { href: l.url, class: 'trend-name', rel: 'noopener noreferrer nofollow', target: '_blank' }, l.title || l.url),
        h('p', { class: 'trend-note' }, `${l.provider_name || ''} · ${talking(l.history)}`)), spark(l.history)))];
}

// One suggestion: the account, why, Follow and Dismiss.
function suggestionRow(s, onGone) {
  const account = s.account || s;
  const why = (s.sources || []).includes('friends_of_friends') ? 'Followed by people you follow' : 'Popular on this server';
  const follow = h('button', { type: 'button', class: 'primary', 'aria-label': `Follow ${account.acct}` }, 'Follow');
  const dismiss = h('button', { type: 'button', 'aria-label': `Dismiss ${account.acct}` }, 'Dismiss');
  const row = h('li', { class: 'suggestion' }, renderAccountRow(account,
    h('div', { class: 'choices' }, follow, dismiss)), h('p', { class: 'trend-note why' }, why));
  follow.addEventListener('click', async () => {
    follow.disabled = true;
    try {
      const rel = await api(`/api/v1/accounts/${account.id}/follow`, { method: 'POST' });
      follow.textContent = rel.requested && !rel.following ? 'Requested' : 'Following';
      follow.classList.remove('primary');
      follow.setAttribute('aria-pressed', 'true');
      dismiss.hidden = true;
    } catch (err) { follow.disabled = false; toast(errorText(err), 'error'); }
  });
  dismiss.addEventListener('click', async () => {
    try {
      await api(`/api/v1/suggestions/${account.id}`, { method: 'DELETE' });
      row.remove();
      if (onGone) onGone();
    } catch (err) { toast(errorText(err), 'error'); }
  });
  return row;
}

export function whoToFollow(ctx, limit = 40) {
  const list = h('ul', { class: 'suggestions-list', 'aria-label': 'Who to follow' });
  const status = h('p', { class: 'feed-status', role: 'status' }, 'Loading…');
  const none = () => { if (!list.children.length) status.textContent = 'No suggestions for now: follow a few people first.'; };
  (async () => {
    try {
      const found = await api('/api/v2/suggestions', { query: { limit } });
      if (ctx.signal.aborted) return;
      list.replaceChildren(...found.map((s) => suggestionRow(s, none)));
      status.textContent = '';
      none();
    } catch (err) { status.textContent = errorText(err); }
  })();
  return h('section', { class: 'feed-wrap' }, list, status);
}

export function people(ctx) {
  ctx.title('Explore: who to follow');
  return [head(), exploreTabs('people'), h('h2', { class: 'section-head' }, 'Who to follow'), whoToFollow(ctx)];
}
