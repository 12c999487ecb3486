// Direct messages: the reader's conversations (GET /api/v1/conversations),
// the one with the newest message first, each with its people and its last
// message, unread ones marked. A reply written here is direct and mentions
// the same people (compose.js), so it stays in the conversation, which comes
// back to the top with it (live from the "direct" stream). Opening a
// conversation, or "Mark read", marks it read; "Remove" takes it off the
// list until a new message comes. Direct messages still show in Home too.
import { api, bus } from './api.js';
import { h, toast, errorText, displayName } from './ui.js';
import { renderStatus, profilePath } from './status.js';
import { feed } from './feed.js';
import { has } from './features.js';
import { heading } from './views.js';

function people(c) {
  if (!c.accounts.length) return ['Only you'];
  const out = [];
  c.accounts.forEach((a, i) => {
    if (i) out.push(i === c.accounts.length - 1 ? ' and ' : ', ');
    out.push(h('a', { href: profilePath(a) }, displayName(a)));
  });
  return out;
}

function renderConversation(c, ctx) {
  const label = c.accounts.map((a) => '@' + a.acct).join(', ') || 'yourself';
  const row = h('section', { class: 'conversation' + (c.unread ? ' unread' : ''),
    'aria-label': `Conversation with ${label}` });
  const state = h('span', { class: 'conv-state' }, c.unread ? 'Unread' : '');
  const read = h('button', { type: 'button', hidden: !c.unread || !has('POST', '/api/v1/conversations/{}/read') }, 'Mark read');
  const markRead = async () => {
    if (!c.unread) return;
    read.disabled = true;
    try {
      const fresh = await api(`/api/v1/conversations/${c.id}/read`, { method: 'POST' });
      c.unread = !!fresh.unread;
      row.classList.toggle('unread', c.unread);
      state.textContent = c.unread ? 'Unread' : '';
      read.hidden = !c.unread;
    } catch (err) { toast(errorText(err), 'error'); } finally { read.disabled = false; }
  };
  read.addEventListener('click', markRead);
  const remove = h('button', { type: 'button', class: 'danger', hidden: !has('DELETE', '/api/v1/conversations/{}'),
    'aria-label': `Remove the conversation with ${label}` }, 'Remove');
  remove.addEventListener('click', async () => {
    try {
      await api(`/api/v1/conversations/${c.id}`, { method: 'DELETE' });
      row.remove();
      toast('Conversation removed');
    } catch (err) { toast(errorText(err), 'error'); }
  });
  row.append(h('div', { class: 'conv-head' }, h('p', { class: 'conv-people' }, 'With ', ...people(c), ' ', state),
    h('div', { class: 'conv-actions' }, read, remove)));
  if (c.last_status) {
    const article = renderStatus(c.last_status, { onReply: ctx.reply });
    // opening it (its time link) reads it
    article.querySelector('a.time')?.addEventListener('click', () => { markRead(); });
    row.append(article);
  } else row.append(h('p', { class: 'meta' }, 'The last message is no longer visible to you.'));
  return row;
}

export function conversations(ctx) {
  ctx.title('Direct messages');
  if (!has('GET', '/api/v1/conversations')) {
    return [heading('Direct messages'), h('p', { class: 'unavailable', role: 'status' }, 'Direct messages are not available on this server yet.')];
  }
  const f = feed({ path: '/api/v1/conversations', signal: ctx.signal, label: 'Conversations',
    empty: 'No direct messages yet. A post to "Mentioned people only" starts one.',
    keyOf: (c) => c.id, cursorOf: (c) => c.last_status?.id || c.id,
    replaces: (old, c) => old.last_status?.id !== c.last_status?.id || old.unread !== c.unread,
    render: (c) => renderConversation(c, ctx),
    live: { sub: { stream: 'direct' }, events: ['conversation'] } });
  // one's own reply: its conversation comes to the top (whether or not the stream says so)
  bus.addEventListener('posted', (e) => { if (e.detail?.visibility === 'direct') f.refreshTop(); }, { signal: ctx.signal });
  return [heading('Direct messages'), f.root];
}
