// Settings > Filters: the account's content filters (Mastodon's v2 filters),
// listed with their keywords, contexts, action and expiry; a form adds one
// (a keyword, where it applies, warn or hide, how long); each can be deleted.
import { api } from './api.js';
import { has } from './features.js';
import { h, toast, errorText } from './ui.js';

const CONTEXTS = { home: 'Home and lists', notifications: 'Notifications', public: 'Public timelines',
  thread: 'Conversations', account: 'Profiles' };
const EXPIRY = [['', 'Never'], ['1800', '30 minutes'], ['3600', '1 hour'], ['21600', '6 hours'],
  ['43200', '12 hours'], ['86400', '1 day'], ['604800', '1 week']];

function describe(f) {
  const where = f.context.map((c) => CONTEXTS[c] || c).join(', ');
  const until = f.expires_at ? ` · until ${new Date(f.expires_at).toLocaleString()}` : '';
  return `${f.filter_action === 'hide' ? 'Hide' : 'Warn'} · ${where}${until}`;
}

export function filtersSection() {
  if (!has('GET', '/api/v2/filters')) return [];
  const list = h('ul', { class: 'filters', 'aria-label': 'Your filters' });
  const load = async () => {
    try {
      const found = await api('/api/v2/filters');
      list.replaceChildren(...(found.length ? found.map(row) : [h('li', { class: 'empty' }, 'No filters yet.')]));
    } catch (err) { toast(errorText(err), 'error'); }
  };
  const row = (f) => {
    const del = h('button', { type: 'button', 'aria-label': `Delete filter ${f.title}` }, 'Delete');
    del.addEventListener('click', async () => {
      del.disabled = true;
      try {
        await api(`/api/v2/filters/${f.id}`, { method: 'DELETE' });
        toast('Filter deleted');
        await load();
      } catch (err) { del.disabled = false; toast(errorText(err), 'error'); }
    });
    return h('li', { class: 'filter-row', dataset: { id: f.id } },
      h('div', {}, h('strong', {}, f.title), ' ',
        f.keywords.length === 1 && f.keywords[0].keyword === f.title ? null
          : h('span', { class: 'keywords' }, f.keywords.map((k) => k.keyword).join(', ')),
        h('p', { class: 'meta' }, describe(f))), del);
  };
  const keyword = h('input', { name: 'keyword', required: true, maxlength: '200',
    placeholder: 'A word or phrase' });
  const whole = h('input', { type: 'checkbox', name: 'whole_word', checked: true });
  const boxes = Object.entries(CONTEXTS).map(([value, label]) =>
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'context', value,
      checked: value === 'home' || value === 'public' }), ' ' + label));
  const action = h('select', { name: 'filter_action' },
    h('option', { value: 'warn' }, 'Warn (show behind "Filtered")'),
    h('option', { value: 'hide' }, 'Hide completely'));
  const expiry = h('select', { name: 'expires_in' }, EXPIRY.map(([v, l]) => h('option', { value: v }, l)));
  const field = (label, el) => h('label', { class: 'field' }, h('span', {}, label), el);
  const form = h('form', { class: 'settings filter-form', onsubmit: async (e) => {
    e.preventDefault();
    const context = boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
    if (!context.length) { toast('Choose where the filter applies', 'error'); return; }
    const word = keyword.value.trim();
    const body = { title: word, context, filter_action: action.value,
      keywords_attributes: [{ keyword: word, whole_word: whole.checked }] };
    if (expiry.value) body.expires_in = Number(expiry.value);
    try {
      await api('/api/v2/filters', { method: 'POST', body });
      keyword.value = '';
      toast('Filter added');
      await load();
    } catch (err) { toast(errorText(err), 'error'); }
  } },
  field('Keyword', keyword), h('label', { class: 'check' }, whole, ' Whole word only'),
  h('fieldset', { class: 'contexts' }, h('legend', {}, 'Filter in'), ...boxes),
  field('Action', action), field('Expires', expiry),
  h('button', { type: 'submit', class: 'primary' }, 'Add filter'));
  load();
  return [h('h2', {}, 'Filters'), list, form];
}

// What a status's `filtered` results (this viewer's filters it meets) do to
// its article: none (own statuses are never filtered), 'hide', or the
// titles of the filters that warn.
export function filterVerdict(results, mine) {
  if (!results || !results.length || mine) return null;
  if (results.some((r) => r.filter.filter_action === 'hide')) return 'hide';
  return [...new Set(results.map((r) => r.filter.title))].join(', ');
}
