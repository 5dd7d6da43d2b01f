// The Specwright console: a small page script, no framework and nothing from the network. It calls
// the vault and prospector REST APIs with the sign-in session's cookie and echoes the session's
// CSRF token on every state-changing request; the APIs apply the user's grants and tenancy.
'use strict';

(() => {
  const PER_PAGE = 20;
  // The public URL's path ('' at the root of a host, '/sw' behind a proxy that strips it): every
  // URL of the server the script builds is under it. The page names it; the server's own paths
  // (routes, `next`) are without it.
  const BASE = (document.querySelector('meta[name="specwright-base"]') || { content: '' }).content;
  const at = (path) => BASE + path;
  // This page's path without BASE, as the server's routes name it.
  const here = () => (location.pathname.startsWith(`${BASE}/`) ? location.pathname.slice(BASE.length) : location.pathname);
  let session = null; // { user, tenant, csrf_token, catalog }
  let rendering = 0;

  // ---- Small DOM helpers ----------------------------------------------------------------------

  let uid = 0;
  const nextId = (prefix) => `${prefix}-${++uid}`;

  // h('tag', {attr: value, onclick: fn, testid: 'x', text: '…'}, ...children)
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'testid') el.dataset.testid = value;
      else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
    return el;
  }

  function notify(el, kind, message) {
    el.className = `notice ${kind}`;
    el.textContent = message;
  }

  function quiet(el) {
    el.className = 'notice';
    el.textContent = '';
  }

  // A live region that exists before anything is announced in it.
  const liveNotice = (testid) => h('p', { class: 'notice', role: 'status', 'aria-live': 'polite', testid });

  const globalStatus = () => document.getElementById('status');

  function say(kind, message) {
    const status = globalStatus();
    status.replaceChildren(h('p', { class: `notice ${kind}` }, message));
  }

  function when(iso, none) {
    if (!iso) return h('span', { class: 'muted' }, none || '—');
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return h('time', { datetime: iso, title: iso }, d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
  }

  const tags = (list) => (list && list.length ? list.map((t) => h('span', { class: 'tag' }, t)) : h('span', { class: 'muted' }, '—'));
  const badge = (state) => h('span', { class: `badge ${state}` }, state);

  function table(caption, headers, rows) {
    return h('table', {},
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, headers.map((t) => h('th', { scope: 'col', class: t === 'Credentials' || t === 'Version' ? 'num' : null }, t)))),
      h('tbody', {}, rows));
  }

  function query(path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    const s = q.toString();
    return s ? `${path}?${s}` : path;
  }

  const enc = encodeURIComponent;

  // ---- The APIs -------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message, details, requestId) {
      super(message);
      this.status = status;
      this.code = code;
      this.details = details;
      this.requestId = requestId;
    }
  }

  // The error envelope's message, with the field it names and its code.
  function describe(err) {
    if (err instanceof ApiError) {
      let text = err.message;
      if (err.details && typeof err.details.field === 'string') text += ` (field: ${err.details.field})`;
      if (err.code) text += ` [${err.code}]`;
      return text;
    }
    return (err && err.message) || String(err);
  }

  function toSignIn() {
    location.assign(`${at('/login')}?next=${enc(here() + location.search)}`);
    return new Promise(() => {}); // the page is going away
  }

  async function loadSession() {
    let resp;
    try {
      resp = await fetch(at('/console/session'), { credentials: 'same-origin', cache: 'no-store' });
    } catch (e) {
      throw new ApiError(0, null, `The server could not be reached (${e.message}).`);
    }
    if (resp.status === 401) return toSignIn();
    if (!resp.ok) throw new ApiError(resp.status, null, `The session could not be read (HTTP ${resp.status}).`);
    session = await resp.json();
    return session;
  }

  async function api(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (method !== 'GET') headers['X-CSRF-Token'] = session.csrf_token;
    const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let resp;
    try {
      resp = await fetch(at(path), init);
    } catch (e) {
      throw new ApiError(0, null, `The server could not be reached (${e.message}).`);
    }
    if (resp.status === 204) return null;
    const text = await resp.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (resp.ok) return json;
    // Signed out (or the session expired) while the page was open: sign in again.
    if (resp.status === 401) await loadSession();
    const e = json && json.error && typeof json.error === 'object' ? json.error : {};
    throw new ApiError(resp.status, e.code, e.message || `The server answered HTTP ${resp.status}.`, e.details, e.request_id);
  }

  const vaultBase = () => session.catalog.vault.base_path;
  const prospectorBase = () => session.catalog.prospector.base_path;

  // Every item of a paged list (folders are few; stops at 20 pages).
  async function everything(path, params) {
    const items = [];
    for (let page = 1; page <= 20; page++) {
      const res = await api('GET', query(path, { ...params, page, per_page: 100 }));
      items.push(...res.data);
      if (items.length >= res.meta.total || res.data.length === 0) break;
    }
    return items;
  }

  // A list shown a page at a time, with Previous/Next when it has more than one page.
  function pagedList({ load, render, empty, label, testid }) {
    const box = h('div', { testid });
    let page = 1;
    async function reload(wanted = page) {
      let res;
      try {
        res = await load(wanted);
      } catch (e) {
        box.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, `Could not load the list: ${describe(e)}`));
        return e;
      }
      if (res.data.length === 0 && wanted > 1) return reload(wanted - 1);
      page = wanted;
      const total = res.meta.total;
      const pages = Math.max(1, Math.ceil(total / res.meta.per_page));
      const parts = [res.data.length ? render(res.data) : h('p', { class: 'empty' }, empty)];
      if (pages > 1) {
        parts.push(h('nav', { class: 'pager', 'aria-label': `${label}: pages` },
          h('button', { type: 'button', class: 'secondary small', disabled: page <= 1, onclick: () => reload(page - 1) }, 'Previous page'),
          h('span', {}, `Page ${page} of ${pages} (${total} in all)`),
          h('button', { type: 'button', class: 'secondary small', disabled: page >= pages, onclick: () => reload(page + 1) }, 'Next page')));
      }
      box.replaceChildren(...parts);
      return null;
    }
    // reload(page) shows that page; it answers the error that kept it from loading, if any.
    return { el: box, reload };
  }

  // ---- Pages ----------------------------------------------------------------------------------

  // A link to one of the server's paths (`/console/…`), under BASE.
  const link = (path, text, props) => h('a', { href: at(path), ...props }, text);

  async function overview() {
    const count = async (path, params) => {
      try {
        const res = await api('GET', query(path, { ...params, per_page: 1 }));
        return String(res.meta.total);
      } catch (e) {
        return h('span', { title: describe(e) }, '—');
      }
    };
    const [folders, credentials, vaultTokens, prospectorTokens] = await Promise.all([
      count(`${vaultBase()}/folders`),
      count(`${vaultBase()}/credentials`),
      count(`${vaultBase()}/tokens`),
      count(`${prospectorBase()}/tokens`),
    ]);
    const card = (path, n, what, testid) => h('a', { class: 'card', href: at(path), testid }, h('span', { class: 'n' }, n), what);
    return {
      title: 'Overview',
      nodes: [
        h('h1', {}, 'Overview'),
        h('p', { class: 'lead', testid: 'overview-who' }, 'Signed in as ', h('strong', {}, session.user), ' in tenant ', h('strong', {}, session.tenant), '.'),
        h('div', { class: 'cards' },
          card('/console/folders', folders, 'folders', 'count-folders'),
          card('/console/credentials', credentials, 'credentials you can read', 'count-credentials'),
          card('/console/tokens', vaultTokens, 'active vault tokens', 'count-vault-tokens'),
          card('/console/tokens', prospectorTokens, 'active prospector tokens', 'count-prospector-tokens')),
        h('h2', {}, 'In this console'),
        h('ul', {},
          h('li', {}, link('/console/tokens', 'Settings: API tokens'), ': create, list and revoke personal access tokens for the vault and API tokens for the prospector.'),
          h('li', {}, link('/console/folders', 'Folders'), ' and ', link('/console/credentials', 'credentials'), ': browse metadata (never secrets) and manage grants.'),
          h('li', {}, 'The REST APIs are described at ', link('/docs/', at('/docs/')), '.')),
      ],
    };
  }

  // The create form, the secret shown once, and the list, for one kind of token.
  function tokenSection(kind) {
    const headingId = nextId(`${kind.id}-tokens`);
    const formStatus = liveNotice(`${kind.id}-form-status`);
    const listStatus = liveNotice(`${kind.id}-list-status`);
    const secretSlot = h('div', { testid: `${kind.id}-secret-slot` });

    // --- the form
    const nameId = nextId(`${kind.id}-name`);
    const name = h('input', { type: 'text', id: nameId, name: 'name', required: true, maxlength: 100, autocomplete: 'off', placeholder: 'e.g. CI pipeline', testid: `${kind.id}-name` });
    const expiryId = nextId(`${kind.id}-expiry`);
    const expiry = h('select', { id: expiryId, name: 'expiry', testid: `${kind.id}-expiry` },
      h('option', { value: '' }, 'Never'),
      h('option', { value: '7' }, 'In 7 days'),
      h('option', { value: '30', selected: true }, 'In 30 days'),
      h('option', { value: '90' }, 'In 90 days'),
      h('option', { value: '365' }, 'In a year'),
      h('option', { value: 'date' }, 'On a date…'));
    const dateId = nextId(`${kind.id}-date`);
    const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
    const date = h('input', { type: 'date', id: dateId, name: 'expiry_date', min: tomorrow, testid: `${kind.id}-expiry-date` });
    const dateField = h('div', { hidden: true }, h('label', { for: dateId }, 'Expiry date ', h('span', { class: 'hint' }, 'The token stops working at the end of this day (your time).')), date);
    const syncExpiry = () => {
      dateField.hidden = expiry.value !== 'date';
      date.required = expiry.value === 'date';
    };
    expiry.addEventListener('change', syncExpiry);

    const scopeBoxes = kind.scopes.map((s) =>
      h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'scopes', value: s.name, checked: kind.defaultScopes.includes(s.name), testid: `${kind.id}-scope-${s.name}` }),
        h('span', {}, h('code', {}, s.name), h('span', { class: 'hint' }, s.description))));

    let plan = null;
    let planField = null;
    if (kind.plans) {
      const planId = nextId(`${kind.id}-plan`);
      plan = h('select', { id: planId, name: 'plan', testid: `${kind.id}-plan` },
        h('option', { value: '' }, "Your account's plan"),
        kind.plans.map((p) => h('option', { value: p.name }, `${p.title}: ${p.per_minute.toLocaleString()}/minute, ${p.per_day.toLocaleString()}/day`)));
      planField = h('div', {}, h('label', { for: planId }, 'Rate-limit plan ', h('span', { class: 'hint' }, "No higher than your account's plan.")), plan);
    }

    const submit = h('button', { type: 'submit', testid: `${kind.id}-create` }, 'Create token');
    const formTitle = nextId(`${kind.id}-form-title`);
    const form = h('form', { class: 'panel', 'aria-labelledby': formTitle, novalidate: true, testid: `${kind.id}-create-form` },
      h('h3', { class: 'wide', id: formTitle }, 'Create a token'),
      h('div', {}, h('label', { for: nameId }, 'Name ', h('span', { class: 'hint' }, 'What the token is for (1 to 100 characters).')), name),
      h('div', {}, h('label', { for: expiryId }, 'Expires ', h('span', { class: 'hint' }, 'A token that never expires works until revoked.')), expiry, dateField),
      planField,
      h('fieldset', { class: 'wide' }, h('legend', {}, 'Scopes'), scopeBoxes),
      h('div', { class: 'actions' }, submit),
      h('div', { class: 'wide' }, formStatus));

    function expiresAt() {
      if (expiry.value === '') return undefined;
      let at;
      if (expiry.value === 'date') {
        if (!date.value) throw new Error('Choose the expiry date.');
        at = new Date(`${date.value}T23:59:59`);
      } else {
        at = new Date(Date.now() + Number(expiry.value) * 86400000);
      }
      if (Number.isNaN(at.getTime()) || at.getTime() <= Date.now()) throw new Error('The expiry date must be in the future.');
      return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
    }

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const body = { name: name.value.trim() };
      const scopes = scopeBoxes.map((l) => l.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
      try {
        if (!body.name) {
          name.focus();
          throw new Error('Give the token a name.');
        }
        if (!scopes.length) throw new Error('Choose at least one scope.');
        body.scopes = scopes;
        const at = expiresAt();
        if (at) body.expires_at = at;
        if (plan && plan.value) body.plan = plan.value;
      } catch (e) {
        notify(formStatus, 'error', e.message);
        return;
      }
      submit.disabled = true;
      notify(formStatus, 'info', 'Creating the token…');
      try {
        const created = (await api('POST', kind.path, body)).data;
        form.reset();
        syncExpiry();
        quiet(formStatus);
        showSecret(created);
        await list.reload(1);
      } catch (e) {
        notify(formStatus, 'error', `The token was not created: ${describe(e)}`);
      } finally {
        submit.disabled = false;
      }
    });

    // --- the secret, shown once: it lives only in this box, which "Done" empties
    function showSecret(t) {
      const titleId = nextId(`${kind.id}-secret-title`);
      const codeId = nextId(`${kind.id}-secret`);
      const copyStatus = h('span', { role: 'status', 'aria-live': 'polite', class: 'muted', testid: `${kind.id}-copy-status` });
      const code = h('code', { id: codeId, testid: `${kind.id}-token-secret` }, t.token);
      const heading = h('h3', { id: titleId, tabindex: '-1' }, `Copy your new token “${t.name}” now`);
      const facts = [`scopes ${t.scopes.join(', ')}`];
      if (t.plan) facts.push(`plan ${t.plan}`);
      facts.push(t.expires_at ? `expires ${new Date(t.expires_at).toLocaleString()}` : 'never expires');
      const box = h('div', { class: 'secret', role: 'region', 'aria-labelledby': titleId, testid: `${kind.id}-new-token` },
        heading,
        h('p', {}, h('strong', {}, 'This is the only time it is shown.'), ' Store it somewhere safe now: only a hash is kept, so it cannot be shown again. If you lose it, revoke it and create another.'),
        h('p', { class: 'muted' }, `Send it as Authorization: Bearer <token>. It has ${facts.join('; ')}.`),
        h('div', { class: 'value' }, code),
        h('button', { type: 'button', 'aria-describedby': codeId, testid: `${kind.id}-copy`, onclick: async () => {
          const ok = await copy(t.token, code);
          copyStatus.textContent = ok ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (⌘C) to copy it.';
        } }, 'Copy token'),
        h('button', { type: 'button', class: 'secondary', testid: `${kind.id}-done`, onclick: () => {
          secretSlot.replaceChildren();
          notify(formStatus, 'ok', `The secret of “${t.name}” is hidden and cannot be shown again.`);
          name.focus();
        } }, 'Done, hide it'),
        ' ', copyStatus);
      secretSlot.replaceChildren(box);
      heading.focus();
    }

    // --- the list
    let showAll = false;
    const columns = ['Name', 'Token', 'Scopes'].concat(kind.plans ? ['Plan'] : [], ['Created', 'Expires', 'Last used', 'Status', 'Action']);
    const row = (t) => {
      const now = Date.now();
      const state = t.revoked_at ? 'revoked' : t.expires_at && new Date(t.expires_at).getTime() <= now ? 'expired' : 'active';
      const revoke = state === 'active'
        ? h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke token ${t.name} (${t.prefix}…)`, testid: `${kind.id}-revoke`, onclick: (ev) => revokeToken(t, ev.currentTarget) }, 'Revoke')
        : h('span', { class: 'muted' }, '—');
      return h('tr', { 'data-token-id': t.id, testid: `${kind.id}-token-row` },
        h('td', {}, t.name),
        h('td', {}, h('code', {}, `${t.prefix}…`)),
        h('td', {}, t.scopes.join(', ')),
        kind.plans ? h('td', {}, t.plan) : null,
        h('td', {}, when(t.created_at)),
        h('td', {}, when(t.expires_at, 'Never')),
        h('td', {}, when(t.last_used_at, 'Never used')),
        h('td', {}, badge(state)),
        h('td', {}, revoke));
    };
    const list = pagedList({
      load: (page) => api('GET', query(kind.path, { page, per_page: PER_PAGE, include_revoked: kind.canShowAll && showAll ? 'true' : '' })),
      render: (tokens) => table(`${kind.title}`, columns, tokens.map(row)),
      empty: 'No tokens to show.',
      label: kind.title,
      testid: `${kind.id}-token-list`,
    });

    async function revokeToken(t, button) {
      if (!window.confirm(`Revoke the token “${t.name}” (${t.prefix}…)? Anything using it stops working at once.`)) return;
      button.disabled = true;
      notify(listStatus, 'info', `Revoking “${t.name}”…`);
      try {
        await api('DELETE', `${kind.path}/${enc(t.id)}`);
        notify(listStatus, 'ok', `Token “${t.name}” revoked: its next request is refused.`);
        await list.reload();
      } catch (e) {
        button.disabled = false;
        notify(listStatus, 'error', `The token was not revoked: ${describe(e)}`);
      }
    }

    const listTitle = nextId(`${kind.id}-list-title`);
    const toggle = kind.canShowAll
      ? h('label', { class: 'check' },
        h('input', { type: 'checkbox', testid: `${kind.id}-show-all`, onchange: (ev) => { showAll = ev.currentTarget.checked; list.reload(1); } }),
        'Show revoked and expired tokens too')
      : null;
    const section = h('section', { 'aria-labelledby': headingId, testid: `${kind.id}-tokens` },
      h('h2', { id: headingId }, kind.title),
      h('p', { class: 'muted' }, kind.intro),
      secretSlot,
      form,
      h('h3', { id: listTitle }, 'Your tokens'),
      toggle,
      listStatus,
      list.el);
    return { el: section, ready: list.reload() };
  }

  async function copy(text, codeEl) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      const range = document.createRange();
      range.selectNodeContents(codeEl);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      try {
        return document.execCommand('copy');
      } catch {
        return false;
      }
    }
  }

  async function tokensPage() {
    const cat = session.catalog;
    const vault = tokenSection({
      id: 'vault',
      title: 'Vault personal access tokens',
      intro: `Personal access tokens (swp_…) call the ${cat.vault.title} REST API at ${at(cat.vault.base_path)}. Their scopes limit what they may do; your grants still decide which credentials they reach.`,
      path: `${cat.vault.base_path}/tokens`,
      scopes: cat.vault.scopes,
      defaultScopes: cat.vault.scopes.length ? [cat.vault.scopes[0].name] : [],
      plans: null,
      canShowAll: true,
    });
    const prospector = tokenSection({
      id: 'prospector',
      title: 'Prospector API tokens',
      intro: `API tokens (prs_…) call the ${cat.prospector.title} at ${at(cat.prospector.base_path)}. Each token is rate-limited by its plan.`,
      path: `${cat.prospector.base_path}/tokens`,
      scopes: cat.prospector.scopes,
      defaultScopes: cat.prospector.scopes.map((s) => s.name),
      plans: cat.prospector.plans,
      canShowAll: false,
    });
    await Promise.all([vault.ready, prospector.ready]);
    return {
      title: 'API tokens',
      nodes: [
        h('p', { class: 'crumbs' }, 'Settings'),
        h('h1', {}, 'API tokens'),
        h('p', { class: 'lead' }, 'Tokens let scripts and tools call the APIs as you. A token’s secret is shown once, when it is created.'),
        vault.el,
        prospector.el,
      ],
    };
  }

  function folderTable(folders) {
    return table('Folders', ['Path', 'Credentials', 'Updated'], folders.map((f) =>
      h('tr', { testid: 'folder-row' },
        h('td', {}, link(`/console/folders/${enc(f.id)}`, f.path)),
        h('td', { class: 'num' }, String(f.credential_count)),
        h('td', {}, when(f.updated_at)))));
  }

  function credentialTable(credentials, folderPaths) {
    const headers = ['Key', 'Kind'].concat(folderPaths ? ['Folder'] : [], ['Description', 'Tags', 'State', 'Version', 'Updated']);
    return table('Credentials', headers, credentials.map((c) =>
      h('tr', { testid: 'credential-row' },
        h('td', {}, link(`/console/credentials/${enc(c.key)}`, c.key)),
        h('td', {}, c.kind),
        folderPaths ? h('td', {}, c.folder_id ? link(`/console/folders/${enc(c.folder_id)}`, folderPaths.get(c.folder_id) || c.folder_id) : h('span', { class: 'muted' }, '(root)')) : null,
        h('td', {}, c.description || h('span', { class: 'muted' }, '—')),
        h('td', {}, tags(c.tags)),
        h('td', {}, badge(c.state)),
        h('td', { class: 'num' }, String(c.current_version)),
        h('td', {}, when(c.updated_at)))));
  }

  async function foldersPage() {
    const list = pagedList({
      load: (page) => api('GET', query(`${vaultBase()}/folders`, { page, per_page: PER_PAGE })),
      render: folderTable,
      empty: 'No folders yet.',
      label: 'Folders',
      testid: 'folder-list',
    });
    await list.reload(1);
    return {
      title: 'Folders',
      nodes: [
        h('h1', {}, 'Folders'),
        h('p', { class: 'lead' }, 'Folders hold credentials. A grant on a folder covers everything it holds, subfolders included. Counts include only the credentials you can read.'),
        list.el,
      ],
    };
  }

  // The grants of a folder or credential: list, add (replacing the user's grant), remove.
  async function grantsSection({ path, what, testid }) {
    const headingId = nextId('grants');
    const status = liveNotice(`${testid}-status`);
    const permissions = session.catalog.vault.permissions;
    const list = pagedList({
      load: (page) => api('GET', query(path, { page, per_page: PER_PAGE })),
      render: (grants) => table('Grants', ['User', 'Permissions', 'Granted by', 'Granted', 'Action'], grants.map((g) =>
        h('tr', { testid: 'grant-row', 'data-principal': g.principal },
          h('td', {}, g.principal),
          h('td', {}, tags(g.permissions)),
          h('td', {}, g.created_by),
          h('td', {}, when(g.created_at)),
          h('td', {}, h('button', { type: 'button', class: 'danger small', 'aria-label': `Remove the grant of ${g.principal}`, testid: 'grant-remove', onclick: (ev) => remove(g, ev.currentTarget) }, 'Remove'))))),
      empty: 'No grants.',
      label: 'Grants',
      testid: `${testid}-list`,
    });
    async function remove(g, button) {
      if (!window.confirm(`Remove the grant of ${g.principal} (${g.permissions.join(', ')})?`)) return;
      button.disabled = true;
      try {
        await api('DELETE', `${path}/${enc(g.id)}`);
        notify(status, 'ok', `The grant of ${g.principal} was removed.`);
        await list.reload();
      } catch (e) {
        button.disabled = false;
        notify(status, 'error', `The grant was not removed: ${describe(e)}`);
      }
    }
    const section = h('section', { 'aria-labelledby': headingId, testid },
      h('h2', { id: headingId }, 'Grants'),
      h('p', { class: 'muted' }, `Grants give a user permissions on ${what}. Granting a user who already has a grant here replaces it.`));
    // Only administrators may see grants: say so instead of showing an empty form.
    const denied = await list.reload(1);
    if (denied) {
      section.append(h('p', { class: 'notice info', testid: `${testid}-denied` }, `You cannot manage grants here: ${describe(denied)}`));
      return section;
    }

    const principalId = nextId('principal');
    const principal = h('input', { type: 'text', id: principalId, name: 'principal', required: true, maxlength: 128, autocomplete: 'off', testid: 'grant-principal' });
    const boxes = permissions.map((p) =>
      h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'permissions', value: p.name, checked: p.name === 'canRead', testid: `grant-permission-${p.name}` }),
        h('span', {}, h('code', {}, p.name), h('span', { class: 'hint' }, p.description))));
    const submit = h('button', { type: 'submit', testid: 'grant-add' }, 'Grant');
    const formTitle = nextId('grant-form');
    const form = h('form', { class: 'panel', 'aria-labelledby': formTitle, novalidate: true, testid: `${testid}-form` },
      h('h3', { class: 'wide', id: formTitle }, 'Grant a user'),
      h('div', {}, h('label', { for: principalId }, 'User ', h('span', { class: 'hint' }, 'The user id, e.g. bob.')), principal),
      h('fieldset', {}, h('legend', {}, 'Permissions'), boxes),
      h('div', { class: 'actions' }, submit));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const who = principal.value.trim();
      const chosen = boxes.map((l) => l.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
      if (!who) {
        notify(status, 'error', 'Name the user to grant.');
        principal.focus();
        return;
      }
      if (!chosen.length) {
        notify(status, 'error', 'Choose at least one permission.');
        return;
      }
      submit.disabled = true;
      try {
        const g = (await api('POST', path, { principal: who, permissions: chosen })).data;
        form.reset();
        notify(status, 'ok', `${g.principal} now has ${g.permissions.join(', ')}.`);
        await list.reload(1);
      } catch (e) {
        notify(status, 'error', `The grant was not added: ${describe(e)}`);
      } finally {
        submit.disabled = false;
      }
    });
    section.append(status, list.el, form);
    return section;
  }

  class NotFound extends Error {}

  async function folderPage(id) {
    const folders = await everything(`${vaultBase()}/folders`);
    const folder = folders.find((f) => f.id === id);
    if (!folder) throw new NotFound(`There is no folder ${id} in your tenant.`);
    const byId = new Map(folders.map((f) => [f.id, f]));
    const ancestors = [];
    for (let p = byId.get(folder.parent_id); p && ancestors.length < 64; p = byId.get(p.parent_id)) ancestors.unshift(p);
    const children = folders.filter((f) => f.parent_id === id);
    const credentials = pagedList({
      load: (page) => api('GET', query(`${vaultBase()}/credentials`, { folder_id: id, state: 'all', page, per_page: PER_PAGE })),
      render: (rows) => credentialTable(rows, null),
      empty: 'No credentials you can read in this folder.',
      label: 'Credentials',
      testid: 'folder-credentials',
    });
    const [grants] = await Promise.all([
      grantsSection({ path: `${vaultBase()}/folders/${enc(id)}/grants`, what: 'this folder and everything it holds, subfolders included', testid: 'folder-grants' }),
      credentials.reload(1),
    ]);
    return {
      title: `Folder ${folder.path}`,
      nodes: [
        h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, link('/console/folders', 'Folders'), ancestors.map((a) => [' / ', link(`/console/folders/${enc(a.id)}`, a.name)])),
        h('h1', { testid: 'folder-path' }, folder.path),
        h('dl', { class: 'meta' },
          h('dt', {}, 'Folder id'), h('dd', {}, h('code', {}, folder.id)),
          h('dt', {}, 'Created'), h('dd', {}, when(folder.created_at)),
          h('dt', {}, 'Updated'), h('dd', {}, when(folder.updated_at))),
        children.length ? [h('h2', {}, 'Subfolders'), folderTable(children)] : null,
        h('h2', {}, 'Credentials'),
        h('p', { class: 'muted' }, 'Metadata only: secrets are never shown in the console.'),
        credentials.el,
        grants,
      ],
    };
  }

  async function credentialsPage() {
    const folders = await everything(`${vaultBase()}/folders`).catch(() => []);
    const paths = new Map(folders.map((f) => [f.id, f.path]));
    const qId = nextId('q');
    const stateId = nextId('state');
    const kindId = nextId('kind');
    const q = h('input', { type: 'search', id: qId, name: 'q', maxlength: 200 });
    const state = h('select', { id: stateId, name: 'state' }, ['active', 'archived', 'all'].map((s) => h('option', { value: s }, s)));
    const kind = h('select', { id: kindId, name: 'kind' }, h('option', { value: '' }, 'any'), session.catalog.vault.kinds.map((k) => h('option', { value: k.name }, k.name)));
    const filters = { q: '', state: 'active', kind: '' };
    const list = pagedList({
      load: (page) => api('GET', query(`${vaultBase()}/credentials`, { ...filters, page, per_page: PER_PAGE })),
      render: (rows) => credentialTable(rows, paths),
      empty: 'No credentials you can read match.',
      label: 'Credentials',
      testid: 'credential-list',
    });
    const form = h('form', { class: 'search', role: 'search', 'aria-label': 'Filter credentials' },
      h('div', {}, h('label', { for: qId }, 'Key or description contains'), q),
      h('div', {}, h('label', { for: kindId }, 'Kind'), kind),
      h('div', {}, h('label', { for: stateId }, 'State'), state),
      h('button', { type: 'submit' }, 'Filter'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      Object.assign(filters, { q: q.value.trim(), state: state.value, kind: kind.value });
      list.reload(1);
    });
    await list.reload(1);
    return {
      title: 'Credentials',
      nodes: [
        h('h1', {}, 'Credentials'),
        h('p', { class: 'lead' }, 'The credentials you can read, metadata only: secrets are never shown in the console.'),
        form,
        list.el,
      ],
    };
  }

  async function credentialPage(key) {
    let c;
    try {
      c = (await api('GET', `${vaultBase()}/credentials/${enc(key)}`)).data;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw new NotFound(`There is no credential ${key} you can read.`);
      throw e;
    }
    const folders = await everything(`${vaultBase()}/folders`).catch(() => []);
    const folder = c.folder_id ? folders.find((f) => f.id === c.folder_id) : null;
    const optional = (v) => v || h('span', { class: 'muted' }, '—');
    const grants = await grantsSection({ path: `${vaultBase()}/credentials/${enc(key)}/grants`, what: 'this credential', testid: 'credential-grants' });
    return {
      title: `Credential ${c.key}`,
      nodes: [
        h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, link('/console/credentials', 'Credentials'),
          c.folder_id ? [' · in folder ', link(`/console/folders/${enc(c.folder_id)}`, folder ? folder.path : c.folder_id)] : ' · at the root'),
        h('h1', { testid: 'credential-key' }, c.key),
        h('p', { class: 'muted' }, 'Metadata only: the secret is never shown in the console.'),
        h('dl', { class: 'meta', testid: 'credential-meta' },
          h('dt', {}, 'Kind'), h('dd', {}, c.kind),
          h('dt', {}, 'State'), h('dd', {}, badge(c.state), c.archived_at ? [' since ', when(c.archived_at)] : null),
          h('dt', {}, 'Description'), h('dd', {}, optional(c.description)),
          h('dt', {}, 'Username'), h('dd', {}, optional(c.username)),
          h('dt', {}, 'URL'), h('dd', {}, c.url ? h('code', {}, c.url) : optional(null)),
          h('dt', {}, 'Tags'), h('dd', {}, tags(c.tags)),
          h('dt', {}, 'Current version'), h('dd', {}, String(c.current_version)),
          h('dt', {}, 'Created'), h('dd', {}, when(c.created_at), ` by ${c.created_by}`),
          h('dt', {}, 'Updated'), h('dd', {}, when(c.updated_at))),
        h('h2', {}, 'Versions'),
        table('Versions', ['Version', 'Stored', 'By'], c.versions.map((v) =>
          h('tr', {}, h('td', { class: 'num' }, String(v.version)), h('td', {}, when(v.created_at)), h('td', {}, v.created_by)))),
        grants,
      ],
    };
  }

  // Epoch milliseconds as the ISO string `when` shows.
  const iso = (ms) => (ms ? new Date(ms).toISOString() : null);

  async function applicationsPage() {
    const status = liveNotice('applications-status');
    const box = h('div', { testid: 'applications' });

    async function revoke(app, button) {
      const name = app.name || app.client_id;
      if (!window.confirm(`Revoke “${name}”? It can no longer refresh its tokens, and it must ask you again before it gets new ones. Access tokens it already holds work until they expire (within the hour).`)) return;
      button.disabled = true;
      notify(status, 'info', `Revoking “${name}”…`);
      try {
        const res = await api('POST', '/console/applications/revoke', { client_id: app.client_id });
        notify(status, 'ok', `“${name}” revoked: ${res.data.refresh_tokens} sign-in(s) ended; it must ask you again.`);
        await reload();
      } catch (e) {
        button.disabled = false;
        notify(status, 'error', `The application was not revoked: ${describe(e)}`);
      }
    }

    function identity(app) {
      if (app.kind === 'document') {
        return [h('span', { class: 'tag' }, 'metadata document'), ' published by ', h('strong', {}, app.host || '?'),
          h('br', {}), h('code', { class: 'small' }, app.client_id)];
      }
      return [h('span', { class: 'tag' }, 'registered'), ' ', h('code', { class: 'small' }, app.client_id)];
    }

    async function reload() {
      let res;
      try {
        res = await api('GET', '/console/applications');
      } catch (e) {
        box.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, `Could not load the list: ${describe(e)}`));
        return;
      }
      if (!res.data.length) {
        box.replaceChildren(h('p', { class: 'empty' }, 'No application holds access to your account.'));
        return;
      }
      box.replaceChildren(table('Connected applications', ['Application', 'Identity', 'Scopes', 'Approved', 'Last sign-in', 'Active', ''],
        res.data.map((app) => {
          const button = h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke ${app.name || app.client_id}`, testid: 'revoke-application' }, 'Revoke');
          button.addEventListener('click', () => revoke(app, button));
          return h('tr', { testid: 'application-row', 'data-client-id': app.client_id },
            h('td', {}, h('strong', {}, app.name || '(no name)')),
            h('td', {}, identity(app)),
            h('td', {}, tags(app.scopes)),
            h('td', {}, when(iso(app.approved_at))),
            h('td', {}, when(iso(app.last_issued_at), 'never')),
            h('td', { class: 'num' }, String(app.active_refresh_tokens)),
            h('td', {}, button));
        })));
    }

    await reload();
    return {
      title: 'Connected applications',
      nodes: [
        h('p', { class: 'crumbs' }, 'Settings'),
        h('h1', {}, 'Connected applications'),
        h('p', { class: 'lead' }, 'Applications you allowed to use your account through sign-in (MCP clients, tools, web applications). A registered application got its id from this server; one named by a metadata document is identified by the address it is published at. Revoking one ends its sign-ins and its approval.'),
        status,
        box,
      ],
    };
  }

  // ---- Routing --------------------------------------------------------------------------------

  const routes = [
    { re: /^\/console\/$/, view: overview, nav: '/console/' },
    { re: /^\/console\/tokens$/, view: tokensPage, nav: '/console/tokens' },
    { re: /^\/console\/applications$/, view: applicationsPage, nav: '/console/applications' },
    { re: /^\/console\/folders$/, view: foldersPage, nav: '/console/folders' },
    { re: /^\/console\/folders\/([^/]+)$/, view: folderPage, nav: '/console/folders' },
    { re: /^\/console\/credentials$/, view: credentialsPage, nav: '/console/credentials' },
    { re: /^\/console\/credentials\/([^/]+)$/, view: credentialPage, nav: '/console/credentials' },
  ];

  async function render(moveFocus) {
    const mine = ++rendering;
    const view = document.getElementById('view');
    const path = here();
    const route = routes.find((r) => r.re.test(path));
    globalStatus().replaceChildren();
    for (const a of document.querySelectorAll('header nav a')) {
      if (route && a.getAttribute('href') === at(route.nav)) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    view.setAttribute('aria-busy', 'true');
    let page;
    try {
      if (!route) throw new NotFound('This page does not exist.');
      const args = path.match(route.re).slice(1).map((s) => decodeURIComponent(s));
      page = await route.view(...args);
    } catch (e) {
      const missing = e instanceof NotFound;
      page = {
        title: missing ? 'Not found' : 'Could not load this page',
        nodes: [
          h('h1', {}, missing ? 'Not found' : 'Could not load this page'),
          h('p', { class: 'notice error', role: 'alert', testid: 'page-error' }, missing ? e.message : describe(e)),
          h('p', {}, link('/console/', 'Back to the overview')),
        ],
      };
    }
    if (mine !== rendering) return; // a later navigation won
    view.replaceChildren(...[page.nodes].flat(Infinity).filter(Boolean));
    view.removeAttribute('aria-busy');
    document.title = `${page.title} · Specwright console`;
    if (moveFocus) {
      const heading = view.querySelector('h1');
      if (heading) {
        heading.setAttribute('tabindex', '-1');
        heading.focus();
      }
    }
  }

  function navigate(to) {
    history.pushState(null, '', to);
    window.scrollTo(0, 0);
    render(true);
  }

  document.addEventListener('click', (ev) => {
    const a = ev.target instanceof Element ? ev.target.closest('a[href]') : null;
    if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey || a.target) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(at('/console/')) || url.pathname.startsWith(at('/console/assets/'))) return;
    ev.preventDefault();
    if (url.pathname + url.search !== location.pathname + location.search) navigate(url.pathname + url.search);
  });
  window.addEventListener('popstate', () => render(true));

  async function boot() {
    try {
      await loadSession();
    } catch (e) {
      say('error', describe(e));
      return;
    }
    document.getElementById('who').replaceChildren('Signed in as ', h('strong', {}, session.user), ` @ ${session.tenant}`);
    document.getElementById('logout-csrf').value = session.csrf_token;
    document.getElementById('logout').hidden = false;
    await render(false);
  }

  boot();
})();
