// The dashboard shell: session, navigation and the page router. Pages live in js/pages/.
import { get, post, session } from './js/api.js';
import { flash, h } from './js/ui.js';
import { routes } from './js/pages/index.js';

const app = document.getElementById('app');
const nav = document.getElementById('nav');
let cleanup = null;
// The page a logged-out visitor asked for; they land there after logging in.
let returnTo = null;

/** Matches `path` (after /dashboard/) against the routes table: [pattern, page]. */
function match(path) {
  for (const [pattern, page] of routes) {
    const names = [];
    const re = new RegExp('^' + pattern.replace(/:([a-z_]+)/g, (_, n) => (names.push(n), '([^/]+)')) + '$');
    const m = re.exec(path);
    if (m) return { page, params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1])])) };
  }
  return null;
}

function renderNav() {
  const logged = Boolean(session.me);
  const items = logged
    ? [
        ['', 'Overview'],
        ['keys', 'API keys'],
        ['credits', 'Credits & usage'],
        ['datasets', 'Datasets'],
        ['training', 'Training'],
        ['projects', 'Projects'],
        ['inferences', 'Inferences'],
        ['chat', 'Chat'],
        ['batches', 'Batches'],
      ]
    : [['login', 'Log in or sign up']];
  const current = location.pathname.replace(/^\/dashboard\/?/, '').split('/')[0];
  nav.replaceChildren(
    h(
      'ul',
      {},
      items.map(([path, label]) =>
        h(
          'li',
          {},
          h(
            'a',
            { href: path ? `/dashboard/${path}` : '/dashboard', 'aria-current': current === path ? 'page' : null },
            label,
          ),
        ),
      ),
      logged
        ? h(
            'li',
            {},
            h('span', { class: 'muted', id: 'me-email' }, session.me.user.email),
            ' ',
            h('button', { type: 'button', class: 'link', id: 'logout', onclick: logOut }, 'Log out'),
          )
        : null,
    ),
  );
}

async function logOut() {
  try {
    await post('/auth/logout');
  } catch (e) {
    flash(`Log out failed: ${e.message}`);
    return;
  }
  session.me = null;
  session.csrf = '';
  session.apiKey = '';
  navigate('/dashboard/login');
  flash('Logged out.', true);
}

/** Loads the session, if any, from the cookie. */
export async function refreshSession() {
  try {
    const me = await get('/auth/me');
    session.me = me;
    session.csrf = me.csrf_token;
  } catch {
    session.me = null;
    session.csrf = '';
  }
}

async function render() {
  if (cleanup) cleanup();
  cleanup = null;
  flash('');
  const path = location.pathname.replace(/^\/(dashboard\/?)?/, '').replace(/\/$/, '');
  // Older links (billing denials' resolution_url) name a page by hash: /dashboard#credits.
  if (path === '' && /^#[a-z]+$/.test(location.hash)) return navigate(`/dashboard/${location.hash.slice(1)}`, true);
  if (!session.me && path !== 'login') {
    if (path) returnTo = location.pathname + location.search;
    return navigate('/dashboard/login', true);
  }
  if (session.me && path === 'login') return navigate('/dashboard', true);
  renderNav();
  const found = match(path);
  const main = h('div', { class: 'page' });
  app.replaceChildren(main);
  if (!found) {
    main.append(h('h1', {}, 'Not found'), h('p', {}, 'There is no dashboard page at this address.'));
    return;
  }
  try {
    const result = await found.page(main, found.params, new URLSearchParams(location.search));
    if (typeof result === 'function') cleanup = result;
  } catch (e) {
    if (e.status === 401) {
      session.me = null;
      return navigate('/dashboard/login', true);
    }
    flash(e.message);
  }
  const h1 = main.querySelector('h1');
  document.title = h1 ? `${h1.textContent} · Whetstone` : 'Whetstone dashboard';
}

/** After sign-up or log-in: the page the visitor asked for, else the overview. */
export function enter() {
  const to = returnTo || '/dashboard';
  returnTo = null;
  return navigate(to);
}

/** Goes to a dashboard path without reloading the page. */
export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  return render();
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[href^="/dashboard"]');
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || a.target) return;
  if (a.hasAttribute('download')) return;
  ev.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', () => render());

// The first page is interactive once it has rendered: docs/dashboard.md reports this mark.
refreshSession()
  .then(render)
  .then(() => performance.mark('dashboard-interactive'));
