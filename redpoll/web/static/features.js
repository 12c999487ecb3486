// Which API routes this server has, read from its features document
// (/api/v1/redpoll/features: the routes of its OpenAPI document and the
// values each body field takes, a small part of /openapi.json): the app never
// calls a route the server does not list, so a server without (say) bookmarks
// shows the button disabled instead of failing, and it offers only the values
// a field takes (the visibilities a post may have, whether an account may be locked).
import { api, session } from './api.js';

let routes = null;
let bodies = null;

function norm(path) { return path.replace(/\{[^}]*\}/g, '{}'); }

export async function loadFeatures() {
  try {
    const doc = await api('/api/v1/redpoll/features', { token: null });
    routes = new Set(doc.routes || []);
    bodies = new Map(Object.entries(doc.choices || {}));
  } catch {
    routes = null;  // no document: assume everything Mastodon documents
    bodies = null;
  }
}

// has('POST', '/api/v1/statuses/{}/favourite')
export function has(method, path) { return routes === null || routes.has(method + ' ' + norm(path)); }

// The values a body field takes: its enum, [false] for a field the server
// pins to false, null when the document does not say (then: anything
// Mastodon documents), [] when the route or the field is absent. A nested
// field is named as a form sends it: 'source[privacy]'.
export function choices(method, path, field) {
  if (bodies === null) return null;
  const props = bodies.get(method + ' ' + norm(path));
  if (!props) return has(method, path) ? null : [];
  return field in props ? props[field] : [];
}

// What the signed-in member's role allows (verify_credentials' role.permissions:
// Mastodon's permission bits; administrator grants them all).
const PERMISSIONS = { administrator: 1, view_audit_log: 1 << 2, manage_reports: 1 << 4, manage_federation: 1 << 5, manage_settings: 1 << 6,
  manage_blocks: 1 << 7, manage_appeals: 1 << 9, manage_users: 1 << 10, manage_rules: 1 << 12, manage_roles: 1 << 17 };
export function can(permission) {
  const bits = Number(session.me()?.role?.permissions || 0);
  return (bits & PERMISSIONS.administrator) !== 0 || (bits & PERMISSIONS[permission]) !== 0;
}

// The moderation area's sections this role may open: [key, label]
const SECTIONS = [['reports', 'Reports', ['manage_reports']], ['accounts', 'Accounts', ['manage_users']],
  ['appeals', 'Appeals', ['manage_appeals']], ['domains', 'Domain blocks', ['manage_federation']],
  ['server', 'Server', ['manage_rules', 'manage_settings']], ['roles', 'Roles', ['manage_roles']],
  ['audit', 'Audit log', ['view_audit_log']]];
export function moderationSections() {
  return SECTIONS.filter(([, , perms]) => perms.some(can)).map(([key, label]) => [key, label]);
}
