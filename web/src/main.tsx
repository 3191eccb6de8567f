import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { dashboardPost, fn, loadSession, type Org, type SessionInfo, whenSignedOut } from './api.ts';
import { AiSpendPage } from './pages/ai-spend.tsx';
import { ApiKeysPage } from './pages/api-keys.tsx';
import { SetPasswordPage, SignInPage, SignUpPage } from './pages/auth.tsx';
import { CdnPage } from './pages/cdn.tsx';
import { CliApprovePage, HandOffPage } from './pages/cli.tsx';
import { DomainsPage } from './pages/domains.tsx';
import { InboxPage } from './pages/inbox.tsx';
import { IntegrationsPage } from './pages/integrations.tsx';
import { MembersPage } from './pages/members.tsx';
import { MemoryPage } from './pages/memory.tsx';
import { NewOrgPage } from './pages/new-org.tsx';
import { OAuthConsentPage } from './pages/oauth-consent.tsx';
import { ProjectPage } from './pages/project.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { VerifyEmailPage, VerifyNeededPage } from './pages/verify-email.tsx';
import { WebDataPage } from './pages/webdata.tsx';
import { WorkflowRunPage } from './pages/workflow-run.tsx';
import { WorkflowsPage } from './pages/workflows.tsx';
import { navigate, useLocation } from './router.ts';
import './styles.css';
import { Link } from './ui.tsx';

const PUBLIC = ['/sign-in', '/sign-up', '/set-password'];
const ORG_KEY = 'pier.org';

function App() {
  const { path, query } = useLocation();
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [orgs, setOrgs] = useState<Org[] | null>(null);
  const [orgSlug, setOrgSlug] = useState<string | null>(localStorage.getItem(ORG_KEY));

  const refresh = async () => {
    const s = await loadSession();
    setSession(s);
    if (s.user) setOrgs(await fn<Org[]>('listMyOrgsForCli'));
    else setOrgs(null);
    return s;
  };
  useEffect(() => {
    whenSignedOut(() => void refresh());
    void refresh();
  }, []);

  if (!session) return <p class="loading">Loading…</p>;
  // The verification link's token rides in the fragment; keep it through a detour to sign-in.
  const here = path + location.search + (path === '/verify-email' ? location.hash : '');
  const onSignedIn = async (next: string) => {
    await refresh();
    navigate(next, true);
  };
  if (!session.user && !PUBLIC.includes(path)) {
    // Sign in first and come back (the approval page of `pier login` relies on this).
    history.replaceState(null, '', `/sign-in?next=${encodeURIComponent(here)}`);
    return <SignInPage session={session} next={here} onSignedIn={onSignedIn} />;
  }
  if (path === '/sign-in')
    return <SignInPage session={session} next={query.get('next')} onSignedIn={onSignedIn} />;
  if (path === '/sign-up') return <SignUpPage session={session} onSignedIn={onSignedIn} />;
  if (path === '/set-password') return <SetPasswordPage onSignedIn={onSignedIn} />;
  if (path === '/verify-email') return <VerifyEmailPage onVerified={() => onSignedIn('/')} />;
  if (!orgs) return <p class="loading">Loading…</p>;

  const org = orgs.find((o) => o.slug === orgSlug) ?? orgs[0];
  const chooseOrg = (slug: string) => {
    localStorage.setItem(ORG_KEY, slug);
    setOrgSlug(slug);
  };
  const signOut = async () => {
    await dashboardPost('sign-out', {}).catch(() => {});
    localStorage.removeItem(ORG_KEY);
    await refresh();
    navigate('/sign-in', true);
  };
  const user = session.user!;
  if (!user.emailVerified)
    return <VerifyNeededPage user={user} selfMail={session.selfMail} onSignOut={signOut} />;

  let page: preact.JSX.Element;
  const projectMatch = /^\/projects\/([^/]+)$/.exec(path);
  const runMatch = /^\/workflows\/runs\/([^/]+)$/.exec(path);
  if (path === '/cli/login') page = <CliApprovePage session={session} query={query} />;
  else if (path === '/cli') page = <HandOffPage user={user} />;
  else if (path === '/tokens') page = <TokensPage />;
  else if (path === '/oauth/consent') page = <OAuthConsentPage session={session} query={query} />;
  else if (path === '/orgs/new')
    page = (
      <NewOrgPage
        onCreated={async (slug) => {
          chooseOrg(slug);
          await refresh();
          navigate('/projects');
        }}
      />
    );
  else if (!org) page = <NoOrg />;
  else if (path === '/' || path === '/projects') page = <ProjectsPage org={org} session={session} />;
  else if (projectMatch)
    page = <ProjectPage slug={decodeURIComponent(projectMatch[1]!)} orgs={orgs} session={session} />;
  else if (path === '/members') page = <MembersPage org={org} user={user} />;
  else if (path === '/api-keys') page = <ApiKeysPage org={org} />;
  else if (path === '/ai-spend') page = <AiSpendPage org={org} />;
  else if (path === '/inbox') page = <InboxPage org={org} />;
  else if (path === '/domains') page = <DomainsPage org={org} />;
  else if (path === '/memory') page = <MemoryPage org={org} />;
  else if (path === '/assets') page = <CdnPage org={org} />;
  else if (path === '/integrations') page = <IntegrationsPage org={org} />;
  else if (path === '/workflows') page = <WorkflowsPage org={org} />;
  else if (path === '/web-data') page = <WebDataPage org={org} />;
  else if (runMatch)
    page = (
      <WorkflowRunPage
        org={org}
        runId={decodeURIComponent(runMatch[1]!)}
        env={query.get('env') === 'sandbox' ? 'sandbox' : 'production'}
      />
    );
  else page = <NotFound />;

  const current = (href: string) =>
    path === href || (href === '/projects' && !!projectMatch) || (href === '/workflows' && !!runMatch);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <div class="shell">
        <aside class="side">
          <div class="side-head">
            <Link href="/projects" class="brand">
              Pier
            </Link>
            <div class="who">
              <span data-testid="signed-in-as">{user.email}</span>
              <button type="button" class="secondary" onClick={signOut}>
                Sign out
              </button>
            </div>
          </div>
          {orgs.length ? (
            <label class="org-switch">
              <span class="sr-only">Organization</span>
              <select value={org?.slug} onChange={(e) => chooseOrg((e.target as HTMLSelectElement).value)}>
                {orgs.map((o) => (
                  <option value={o.slug} key={o.slug}>
                    {o.name} ({o.role})
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <Link href="/orgs/new" class="new-org">
            New organization
          </Link>
          <SideNav current={current} path={path} />
        </aside>
        <main id="main">{page}</main>
      </div>
    </>
  );
}

/**
 * The sections of the sidebar, grouped by what the entries belong to. New areas add their page to
 * `services`. On narrow screens the list folds behind a "Menu" button (a native <details>, no script).
 */
const NAV_GROUPS: { title: string; entries: [string, string][] }[] = [
  {
    title: 'Organization',
    entries: [
      ['/members', 'Members'],
      ['/api-keys', 'API keys'],
      ['/ai-spend', 'AI spend'],
    ],
  },
  { title: 'Projects', entries: [['/projects', 'Projects']] },
  {
    title: 'Services',
    entries: [
      ['/inbox', 'Dev inbox'],
      ['/domains', 'Sender domains'],
      ['/memory', 'Memory'],
      ['/assets', 'Assets'],
      ['/integrations', 'Integrations'],
      ['/workflows', 'Workflows'],
      ['/web-data', 'Web data'],
    ],
  },
  {
    title: 'You',
    entries: [
      ['/tokens', 'Tokens'],
      ['/cli', 'CLI sign-in'],
    ],
  },
];

function SideNav({ current, path }: { current: (href: string) => boolean; path: string }) {
  const wide = useMedia(WIDE);
  const [open, setOpen] = useState(false);
  // A page chosen from the folded menu closes it.
  useEffect(() => setOpen(false), [path]);
  const groups = (
    <nav aria-label="Main">
      {NAV_GROUPS.map((g) => (
        <section class="nav-group" key={g.title} aria-labelledby={`nav-${g.title}`}>
          <h2 id={`nav-${g.title}`}>{g.title}</h2>
          <ul>
            {g.entries.map(([href, label]) => (
              <li key={href}>
                <Link href={href} current={current(href)}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </nav>
  );
  if (wide) return groups;
  return (
    <details class="side-menu" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Menu</summary>
      {groups}
    </details>
  );
}

const WIDE = '(min-width: 50rem)';

function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const m = window.matchMedia(query);
    const on = () => setMatches(m.matches);
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, [query]);
  return matches;
}

function NoOrg() {
  return (
    <section class="page">
      <h1 id="page-title">Welcome to Pier</h1>
      <p>You are not in an organization yet. Create one, or ask an owner to invite you.</p>
      <Link href="/orgs/new" class="button">
        Create an organization
      </Link>
    </section>
  );
}

function NotFound() {
  return (
    <section class="page">
      <h1 id="page-title">Page not found</h1>
      <Link href="/projects">Back to projects</Link>
    </section>
  );
}

render(<App />, document.getElementById('app')!);
