// Reporting an account, or one of its posts, to the moderators
// (POST /api/v1/reports): a small dialog with a reason, a comment and the
// post preselected; "It breaks the server rules" lists the rules to tick
// (GET /api/v1/instance/rules), sent as rule_ids.
import { api } from './api.js';
import { has } from './features.js';
import { h, toast, errorText, displayName } from './ui.js';

const REASONS = [['spam', 'Spam'], ['violation', 'It breaks the server rules'],
  ['legal', 'It is illegal'], ['other', 'Something else']];
const FLAG = 'M5 21V4M5 4h11l-2 4 2 4H5';

function flagIcon() {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon icon-flag');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', FLAG);
  svg.append(path);
  return svg;
}

function textOf(html) {
  const tpl = document.createElement('template');
  tpl.innerHTML = html;  // inert: only its text is read
  return (tpl.content.textContent || '').trim();
}

export function openReport(account, status = null, opener = null) {
  const reason = h('select', { name: 'category' }, ...REASONS.map(([v, l]) => h('option', { value: v }, l)));
  reason.value = 'other';
  const comment = h('textarea', { name: 'comment', rows: '4', maxlength: '1000', placeholder: 'What is wrong? (optional)' });
  const include = status ? h('input', { type: 'checkbox', name: 'include', checked: true }) : null;
  const rules = h('fieldset', { class: 'report-rules', hidden: true }, h('legend', {}, 'Which rules does it break?'));
  let rulesRead = null;
  const showRules = () => {
    rules.hidden = reason.value !== 'violation';
    if (rules.hidden || rulesRead) return;
    rulesRead = api('/api/v1/instance/rules', { token: null }).then((found) => {
      if (!found.length) rules.append(h('p', { class: 'hint' }, 'This server has no rules listed.'));
      for (const r of found) {
        rules.append(h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'rule_ids', value: r.id }), ' ' + r.text));
      }
    }).catch((e) => { rules.append(h('p', { class: 'error' }, errorText(e))); });
  };
  reason.addEventListener('change', showRules);
  const err = h('p', { class: 'error', role: 'alert' });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send report');
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const who = `@${account.acct}`;
  const dialog = h('dialog', { class: 'dialog report-dialog', 'aria-labelledby': 'report-head' });
  const form = h('form', { method: 'dialog', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    send.disabled = true;
    const body = { account_id: account.id, category: reason.value, comment: comment.value.trim() };
    if (status && include.checked) body.status_ids = [status.id];
    if (reason.value === 'violation') {
      const ticked = [...rules.querySelectorAll('input:checked')].map((i) => i.value);
      if (!ticked.length && rules.querySelector('input')) {
        err.textContent = 'Tick the rules it breaks.';
        send.disabled = false;
        return;
      }
      if (ticked.length) body.rule_ids = ticked;
    }
    try {
      await api('/api/v1/reports', { method: 'POST', body });
      dialog.close();
      toast(`Report about ${who} sent to the moderators`);
    } catch (e2) { err.textContent = errorText(e2); send.disabled = false; }
  } },
  h('h2', { id: 'report-head' }, `Report ${who}`),
  h('p', { class: 'hint' }, `The moderators of this server will see it; ${displayName(account)} will not know who sent it.`),
  status ? h('label', { class: 'check' }, include, ' Include this post') : null,
  status ? h('blockquote', { class: 'report-status' }, status.spoiler_text || textOf(status.content).slice(0, 280) || '(images only)') : null,
  h('label', { class: 'field' }, h('span', {}, 'Reason'), reason),
  rules,
  h('label', { class: 'field' }, h('span', {}, 'Comment'), comment),
  err, h('div', { class: 'dialog-buttons' }, cancel, send));
  dialog.append(form);
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => { dialog.remove(); if (opener && opener.isConnected) opener.focus(); });
  document.body.append(dialog);
  dialog.showModal();
  reason.focus();
  return dialog;
}

// The Report button of a status (with a visible label in the post's menu).
export function reportStatusButton(s, label = null) {
  const btn = h('button', { type: 'button', class: 'action report', 'aria-label': 'Report', title: 'Report' }, flagIcon(),
    label ? h('span', { 'aria-hidden': 'true' }, label) : null);
  btn.disabled = !has('POST', '/api/v1/reports');
  // focus comes back to what is on screen: the menu's button when the report was asked from the menu
  btn.addEventListener('click', () => openReport(s.account, s,
    btn.closest('.post-menu')?.querySelector('.post-menu-button') || btn));
  return btn;
}

// The Report button on a profile.
export function reportAccountButton(account) {
  const btn = h('button', { type: 'button', class: 'danger' }, 'Report');
  btn.hidden = !has('POST', '/api/v1/reports');
  btn.addEventListener('click', () => openReport(account, null, btn));
  return btn;
}
