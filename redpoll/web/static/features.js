// Which API routes this server has, read from its own OpenAPI document
// (/openapi.json): the app never calls a route the server does not list, so a
// server without (say) bookmarks shows the button disabled instead of failing.
// The same document says which values a body field takes (the visibilities a
// post may have, whether an account may be locked), so the app offers only those.
import { api, session } from './api.js';

let routes = null;
let bodies = null;

function norm(path) { return path.replace(/\{[^}]*\}/g, '{}'); }

export async function loadFeatures() {
  try {
    const doc = await api('/openapi.json', { token: null });
    const found = [];
    const schemas = new Map();
    for (const [path, ops] of Object.entries(doc.paths || {})) {
      for (const [method, op] of Object.entries(ops)) {
        const key = method.toUpperCase() + ' ' + norm(path);
        found.push(key);
        const content = op?.requestBody?.content || {};
        const schema = (content['application/json'] || Object.values(content)[0] || {}).schema;
        if (schema && schema.properties) schemas.set(key, schema.properties);
      }
    }
    routes = new Set(found);
    bodies = schemas;
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
  let schema = props[field];
  const nested = /^(\w+)\[(\w+)\]$/.exec(field);
  if (!schema && nested) schema = props[nested[1]]?.properties?.[nested[2]];
  if (!schema) return [];
  if (Array.isArray(schema.enum)) return schema.enum;
  if ('const' in schema) return [schema.const];
  return null;
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
