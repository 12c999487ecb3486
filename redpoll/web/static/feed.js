// A paged list (timeline, notifications, accounts) with infinite scroll by id
// cursors (the Link header's next page, else max_id of the last item), and
// live items from the streaming API: prepended at once when the reader is at
// the top, else held behind a "new posts" indicator (and while the feed is
// kept off screen for Back, so its place does not move).
import { request, bus } from './api.js';
import { h, errorText } from './ui.js';
import { subscribe, matches } from './stream.js';

// opts: {path, query, render(item) -> Element, live: {sub, event, accept(payload)->item|null},
//        empty: text, label: text, signal, keyOf(item)}
export function feed(opts) {
  const { path, query = {}, render, signal, empty = 'Nothing here yet.' } = opts;
  const keyOf = opts.keyOf || ((item) => item.id);
  const seen = new Set();
  const list = h('div', { class: 'feed', role: 'feed', 'aria-label': opts.label || 'Posts', 'aria-busy': 'true' });
  const status = h('p', { class: 'feed-status', role: 'status' });
  const more = h('button', { type: 'button', class: 'load-more', hidden: true }, 'Load more');
  const pending = [];
  const indicator = h('button', { type: 'button', class: 'new-posts', hidden: true });
  const root = h('section', { class: 'feed-wrap' }, indicator, list, status, more);
  let next = null, loading = false, done = false, lastId = null;

  function add(items, where) {
    const nodes = [];
    for (const item of items) {
      const k = keyOf(item);
      if (seen.has(k)) continue;
      seen.add(k);
      const node = render(item);
      if (node) { node.dataset.key = k; nodes.push(node); }
    }
    if (where === 'top') list.prepend(...nodes); else list.append(...nodes);
    return nodes.length;
  }

  async function load() {
    if (loading || done) return;
    loading = true;
    list.setAttribute('aria-busy', 'true');
    status.textContent = 'Loading…';
    try {
      const page = next
        ? await request(next)
        : await request(path, { query: { limit: 20, ...query, ...(lastId ? { max_id: lastId } : {}) } });
      if (signal.aborted) return;
      const items = Array.isArray(page.data) ? page.data : [];
      add(items, 'bottom');
      if (items.length) lastId = keyOf(items[items.length - 1]);
      next = page.link.next || null;
      if (!items.length || (!next && items.length < (query.limit || 20))) done = true;
      status.textContent = done ? (seen.size ? 'You have reached the end.' : empty) : '';
    } catch (err) {
      status.textContent = errorText(err);
      done = true;
      if (opts.onError) opts.onError(err);
    } finally {
      loading = false;
      list.setAttribute('aria-busy', 'false');
      more.hidden = done;
    }
    // still at the bottom (a short page): the observer sees no change, so ask again
    requestAnimationFrame(() => {
      if (!done && !signal.aborted && more.isConnected &&
          more.getBoundingClientRect().top < window.innerHeight + 600) load();
    });
  }
  more.addEventListener('click', load);
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) load();
  }, { rootMargin: '600px 0px' });
  io.observe(more);
  signal.addEventListener('abort', () => io.disconnect());

  function atTop() { return list.isConnected && window.scrollY < 120; }
  function showPending() {
    indicator.textContent = pending.length === 1 ? '1 new post' : `${pending.length} new posts`;
    indicator.hidden = !pending.length;
  }
  indicator.addEventListener('click', () => {
    add(pending.splice(0).reverse(), 'top');
    showPending();
    window.scrollTo({ top: 0 });
    const first = list.querySelector('article');
    if (first) first.focus({ preventScroll: true });
  });
  const onScroll = () => { if (atTop() && pending.length) { add(pending.splice(0).reverse(), 'top'); showPending(); } };
  window.addEventListener('scroll', onScroll, { passive: true, signal });

  function arrived(item) {
    if (!item || seen.has(keyOf(item)) || pending.some((p) => keyOf(p) === keyOf(item))) return;
    if (atTop()) { add([item], 'top'); status.textContent = ''; } else { pending.push(item); showPending(); }
  }
  if (opts.live) {
    const { sub, events, accept } = opts.live;
    if (sub) subscribe(sub, signal);
    const onEvent = (e) => {
      const { stream, event, payload } = e.detail;
      if (!events.includes(event) || (sub && !matches(stream, sub))) return;
      arrived(accept ? accept(payload, event) : payload);
    };
    bus.addEventListener('stream', onEvent, { signal });
  }
  if (opts.pollMs) {
    // for lists the streaming API does not carry: ask for what is newer than the top
    const timer = setInterval(async () => {
      const newest = pending.length ? keyOf(pending[pending.length - 1]) : list.firstElementChild?.dataset.key;
      if (document.hidden || loading || !newest || !list.isConnected) return;
      try {
        const page = await request(path, { query: { ...query, min_id: newest, limit: 40 } });
        if (!signal.aborted && Array.isArray(page.data)) {
          [...page.data].sort((a, b) => (BigInt(keyOf(a)) < BigInt(keyOf(b)) ? -1 : 1)).forEach(arrived);
        }
      } catch { /* the next tick tries again */ }
    }, opts.pollMs);
    signal.addEventListener('abort', () => clearInterval(timer));
  }
  const onDelete = (e) => {
    for (const node of list.querySelectorAll(`article[data-status-id="${CSS.escape(String(e.detail))}"]`)) node.remove();
  };
  bus.addEventListener('status:deleted', onDelete, { signal });
  bus.addEventListener('stream', (e) => {
    if (e.detail.event === 'delete') onDelete({ detail: e.detail.payload });
  }, { signal });

  load();
  return { root, list, prepend: (item) => add([item], 'top') };
}
