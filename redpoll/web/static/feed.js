// A paged list (timeline, notifications, accounts) with infinite scroll by id
// cursors (the Link header's next page, else max_id of the last item), and
// live items from the streaming API: prepended at once when the reader is at
// the top, else held behind a "new posts" indicator (and while the feed is
// kept off screen for Back, so its place does not move).
import { request, bus, madeHere } from './api.js';
import { h, errorText } from './ui.js';
import { subscribe, matches } from './stream.js';

// opts: {path, query, render(item) -> Element, live: {sub, event, accept(payload)->item|null},
//        empty: text, label: text, signal, keyOf(item),
//        itemsOf(data) -> items (a page's items, default: the array answered),
//        cursorOf(item) -> the max_id after it (default keyOf),
//        replaces(old, item) -> whether an item arriving again, changed, goes
//          back to the top in place of the old (a notification group, a conversation),
//        pollTop: the poll asks for the first page again, not for what is newer}
// Returns {root, list, prepend(item), reload(), refreshTop()}.
export function feed(opts) {
  const { path, query = {}, render, signal, empty = 'Nothing here yet.' } = opts;
  const keyOf = opts.keyOf || ((item) => item.id);
  const cursorOf = opts.cursorOf || keyOf;
  const itemsOf = opts.itemsOf || ((data) => (Array.isArray(data) ? data : []));
  const seen = new Set();
  const shown = new Map();  // key -> item, for opts.replaces
  const list = h('div', { class: 'feed', role: 'feed', 'aria-label': opts.label || 'Posts', 'aria-busy': 'true' });
  const status = h('p', { class: 'feed-status', role: 'status' });
  const more = h('button', { type: 'button', class: 'load-more', hidden: true }, 'Load more');
  const pending = [];
  const indicator = h('button', { type: 'button', class: 'new-posts', hidden: true });
  const root = h('section', { class: 'feed-wrap' }, indicator, list, status, more);
  let next = null, loading = false, done = false, lastId = null, gen = 0;

  function add(items, where) {
    const nodes = [];
    for (const item of items) {
      const k = keyOf(item);
      if (seen.has(k)) continue;
      seen.add(k);
      if (opts.replaces) shown.set(k, item);
      const node = render(item);
      if (node) { node.dataset.key = k; nodes.push(node); }
    }
    if (where === 'top') list.prepend(...nodes); else list.append(...nodes);
    // the first item under "nothing here yet": the message goes
    if (nodes.length && status.textContent === empty) status.textContent = '';
    return nodes.length;
  }

  async function load() {
    if (loading || done) return;
    loading = true;
    const mine = gen;
    list.setAttribute('aria-busy', 'true');
    status.textContent = 'Loading…';
    try {
      const page = next
        ? await request(next)
        : await request(path, { query: { limit: 20, ...query, ...(lastId ? { max_id: lastId } : {}) } });
      if (signal.aborted || mine !== gen) return;
      const items = itemsOf(page.data);
      add(items, 'bottom');
      if (items.length) lastId = cursorOf(items[items.length - 1]);
      next = page.link.next || null;
      if (!items.length || (!next && items.length < (query.limit || 20))) done = true;
      status.textContent = done ? (seen.size ? 'You have reached the end.' : empty) : '';
    } catch (err) {
      status.textContent = errorText(err);
      done = true;
      if (opts.onError) opts.onError(err);
    } finally {
      if (mine === gen) {
        loading = false;
        list.setAttribute('aria-busy', 'false');
        more.hidden = done;
      }
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
    if (!item) return;
    const k = keyOf(item);
    if (opts.replaces && seen.has(k)) {
      if (!opts.replaces(shown.get(k), item)) return;
      for (const node of list.querySelectorAll(`[data-key="${CSS.escape(String(k))}"]`)) node.remove();
      seen.delete(k);
      shown.delete(k);
    }
    if (opts.replaces) {
      const at = pending.findIndex((p) => keyOf(p) === k);
      if (at >= 0) {
        if (!opts.replaces(pending[at], item)) return;
        pending.splice(at, 1);
      }
    }
    if (seen.has(k) || pending.some((p) => keyOf(p) === k)) return;
    if (atTop()) { add([item], 'top'); status.textContent = ''; }
    // what the reader just did here (a boost, a reply written below): in at once, the place kept, no pill
    else if (madeHere.has(String(k))) keepPlace(() => add([item], 'top'));
    else { pending.push(item); showPending(); }
  }
  bus.addEventListener('made', (e) => {  // it came before the answer: out of "new posts"
    const at = pending.findIndex((p) => String(keyOf(p)) === e.detail);
    if (at < 0) return;
    const [item] = pending.splice(at, 1);
    showPending();
    keepPlace(() => add([item], 'top'));
  }, { signal });
  // what goes in above the first post in sight does not move it
  function keepPlace(change) {
    const anchor = [...list.querySelectorAll('article')].find((a) => a.getBoundingClientRect().bottom > 0);
    const top = anchor ? anchor.getBoundingClientRect().top : 0;
    change();
    if (anchor && anchor.isConnected && !atTop()) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
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
  // the first page again: what changed comes to the top (opts.replaces)
  async function refreshTop() {
    if (loading) return;
    try {
      const page = await request(path, { query: { limit: 20, ...query } });
      if (!signal.aborted) [...itemsOf(page.data)].reverse().forEach(arrived);
    } catch { /* the next time tries again */ }
  }
  // what is newer than the top (for lists the streaming API does not carry,
  // and for what a live feed missed while its stream was cut off)
  async function newer() {
    const newest = pending.length ? keyOf(pending[pending.length - 1]) : list.firstElementChild?.dataset.key;
    if (loading || !newest || !list.isConnected) return;
    try {
      const page = await request(path, { query: { ...query, min_id: newest, limit: 40 } });
      if (!signal.aborted && Array.isArray(page.data)) {
        [...page.data].sort((a, b) => (BigInt(keyOf(a)) < BigInt(keyOf(b)) ? -1 : 1)).forEach(arrived);
      }
    } catch { /* the next time tries again */ }
  }
  if (opts.pollMs && opts.pollTop) {
    const timer = setInterval(() => { if (!document.hidden && list.isConnected) refreshTop(); }, opts.pollMs);
    signal.addEventListener('abort', () => clearInterval(timer));
  } else if (opts.pollMs) {
    const timer = setInterval(() => { if (!document.hidden) newer(); }, opts.pollMs);
    signal.addEventListener('abort', () => clearInterval(timer));
  }
  if (opts.live) bus.addEventListener('stream:back', () => (opts.pollTop || opts.replaces ? refreshTop() : newer()), { signal });
  const onDelete = (e) => {
    for (const node of list.querySelectorAll(`article[data-status-id="${CSS.escape(String(e.detail))}"]`)) node.remove();
  };
  bus.addEventListener('status:deleted', onDelete, { signal });
  bus.addEventListener('stream', (e) => {
    if (e.detail.event === 'delete') onDelete({ detail: e.detail.payload });
  }, { signal });

  // from the start again (a list whose members changed)
  function reload() {
    list.replaceChildren();
    seen.clear();
    shown.clear();
    pending.length = 0;
    showPending();
    next = null; lastId = null; done = false;
    gen++;
    loading = false;
    load();
  }

  load();
  return { root, list, prepend: (item) => keepPlace(() => add([item], 'top')), reload, refreshTop };
}
