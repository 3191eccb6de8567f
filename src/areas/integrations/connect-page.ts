import type { ConnectSession } from './connect-sessions.ts';
import type { Connector } from './connectors/types.ts';

// The hosted Connect page's HTML: plain forms and links (usable from the keyboard, no script), one column
// that fits a 390 px phone, the app's name, logo and colour from the session's theme. Every value written
// into the page is escaped; the theme's colour and logo were validated when the session was made.

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

const CATEGORY: Record<string, string> = {
  crm: 'CRM',
  storage: 'Storage',
  communication: 'Chat and mail',
  productivity: 'Productivity',
};

function page(title: string, s: Pick<ConnectSession, 'theme'> | null, body: string): string {
  const primary = s?.theme.primaryColor ?? '#2452d6';
  const logo = s?.theme.logoUrl ? `<img src="${esc(s.theme.logoUrl)}" alt="" width="28" height="28">` : '';
  const app = s?.theme.name ? esc(s.theme.name) : 'Connect an account';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${esc(title)}</title>
<style>
:root{--primary:${primary};font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#f5f6f8}
*{box-sizing:border-box}body{margin:0;padding:16px}
main{max-width:480px;margin:0 auto;background:#fff;border-radius:12px;padding:20px;box-shadow:0 1px 3px #0002}
header{display:flex;gap:10px;align-items:center}h1{font-size:1.25rem;margin:0}h2{font-size:.9rem;color:#57606a;margin:20px 0 6px}
ul{list-style:none;margin:0;padding:0}li{margin:6px 0}
.pick,button{display:block;width:100%;text-align:left;padding:12px 14px;border:1px solid #d0d7de;border-radius:8px;background:#fff;font:inherit;color:inherit;text-decoration:none;cursor:pointer}
.pick:hover,button:hover{border-color:var(--primary)}
.primary{background:var(--primary);color:#fff;border-color:var(--primary);text-align:center;margin-top:16px}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
label{display:block;margin-top:12px;font-weight:600}input{display:block;width:100%;margin-top:4px;padding:10px;font:inherit;border:1px solid #d0d7de;border-radius:8px}
.hint{color:#57606a;font-size:.85rem;margin:4px 0 0}.error{background:#fff0f0;border:1px solid #f5a3a3;border-radius:8px;padding:10px;margin-top:12px}
.back{display:inline-block;margin-top:16px;color:var(--primary)}
</style></head>
<body><main><header>${logo}<h1>${app}</h1></header>${body}</main></body></html>`;
}

const sessionField = (s: ConnectSession) => `<input type="hidden" name="session" value="${esc(s.token)}">`;
const needsForm = (c: Connector) => c.authType !== 'oauth2' || Object.keys(c.entry.variables).length > 0;

export function pickerPage(s: ConnectSession, list: Connector[]): string {
  if (!list.length)
    return page('Connect', s, '<p class="error" role="alert">No provider is available to connect here.</p>');
  const groups = new Map<string, Connector[]>();
  for (const c of list) groups.set(c.category, [...(groups.get(c.category) ?? []), c]);
  const base = `/v1/integrations/connect?session=${encodeURIComponent(s.token)}`;
  const sections = [...groups]
    .map(([cat, cs]) => {
      const items = cs
        .map((c) =>
          needsForm(c)
            ? `<li><a class="pick" href="${base}&amp;connector=${encodeURIComponent(c.slug)}">${esc(c.name)}</a></li>`
            : `<li><form method="post" action="/v1/integrations/connect">${sessionField(s)}<input type="hidden" name="connector" value="${esc(c.slug)}"><button type="submit">${esc(c.name)}</button></form></li>`,
        )
        .join('');
      return `<h2 id="cat-${esc(cat)}">${esc(CATEGORY[cat] ?? cat[0]!.toUpperCase() + cat.slice(1))}</h2><ul aria-labelledby="cat-${esc(cat)}">${items}</ul>`;
    })
    .join('');
  return page(
    'Connect',
    s,
    `<p>Choose the account to connect.</p><nav aria-label="Providers">${sections}</nav>`,
  );
}

export function formPage(
  s: ConnectSession,
  c: Connector,
  values: Record<string, string> = {},
  error?: string,
): string {
  const fields: string[] = [];
  for (const [name, v] of Object.entries(c.entry.variables)) {
    const value = values[`var_${name}`] ?? v.default ?? '';
    fields.push(
      `<label for="var_${esc(name)}">${esc(v.label)}</label><input id="var_${esc(name)}" name="var_${esc(name)}" required value="${esc(value)}"${v.example ? ` placeholder="${esc(v.example)}"` : ''} autocomplete="off">`,
    );
  }
  const a = c.entry.auth;
  if (a.kind === 'api_key')
    fields.push(
      `<label for="apiKey">${esc(a.label)}</label><input id="apiKey" name="apiKey" type="password" required autocomplete="off">`,
    );
  if (a.kind === 'basic') {
    fields.push(
      `<label for="username">${esc(a.usernameLabel)}</label><input id="username" name="username" required autocomplete="off" value="">`,
    );
    if (a.passwordLabel !== null)
      fields.push(
        `<label for="password">${esc(a.passwordLabel)}</label><input id="password" name="password" type="password" required autocomplete="off">`,
      );
  }
  const hint =
    a.kind === 'oauth2'
      ? `<p class="hint">You will sign in at ${esc(c.name)} next.</p>`
      : `<p class="hint">Sent to ${esc(c.name)} through Pier and stored encrypted.</p>`;
  const err = error ? `<p class="error" role="alert">${esc(error)}</p>` : '';
  const back = `/v1/integrations/connect?session=${encodeURIComponent(s.token)}`;
  return page(
    `Connect ${c.name}`,
    s,
    `<h2>${esc(c.name)}</h2>${err}<form method="post" action="/v1/integrations/connect">${sessionField(s)}<input type="hidden" name="connector" value="${esc(c.slug)}">${fields.join('')}${hint}<button class="primary" type="submit">Connect ${esc(c.name)}</button></form><a class="back" href="${back}">Back to the list</a>`,
  );
}

export function errorPage(message: string): string {
  return page('Connect', null, `<p class="error" role="alert">${esc(message)}</p>`);
}
