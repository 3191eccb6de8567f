import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org, type SessionInfo } from '../api.ts';
import { navigate } from '../router.ts';
import { ErrorNote, Link, Page, useLoad } from '../ui.tsx';
import { OrgUsage } from './usage.tsx';

// The current organization's projects, and a small form to start a new one (owners and admins).

type ProjectItem = FnOutput<'listMyProjectsForCli'>[number];

export function appUrl(session: SessionInfo, slug: string): string {
  return `${session.appsScheme}://${slug}.${session.appsDomain}`;
}

export function ProjectsPage(props: { org: Org; session: SessionInfo }) {
  const { data, error } = useLoad(() => fn<ProjectItem[]>('listMyProjectsForCli'), []);
  const projects = data?.filter((p) => p.orgSlug === props.org.slug);
  return (
    <Page title="Projects" intro={`Apps of ${props.org.name}.`}>
      <ErrorNote error={error} />
      {projects === undefined ? (
        <p>Loading…</p>
      ) : projects.length === 0 ? (
        <div class="empty-state">
          <p class="empty">No projects yet. Create one below, or with:</p>
          <pre>{`npx pier projects create --org ${props.org.slug} --slug shop --name Shop`}</pre>
        </div>
      ) : (
        <ul class="cards" aria-label="Projects">
          {projects.map((p) => (
            <li key={p.slug} class="card">
              <Link href={`/projects/${encodeURIComponent(p.slug)}`} class="title">
                {p.name}
              </Link>
              <span class="muted">{appUrl(props.session, p.slug)}</span>
            </li>
          ))}
        </ul>
      )}
      {isManager(props.org) ? <NewProject org={props.org} /> : null}
      <OrgUsage org={props.org} />
    </Page>
  );
}

function NewProject(props: { org: Org }) {
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="card inline-form"
      aria-label="New project"
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget as HTMLFormElement);
        setError(null);
        try {
          const slug = String(f.get('slug'));
          await fn('createProjectForCli', { orgSlug: props.org.slug, slug, name: String(f.get('name')) });
          navigate(`/projects/${slug}`);
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h2>New project</h2>
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      <label>
        Slug
        <input name="slug" required pattern="[a-z0-9][a-z0-9-]{1,38}[a-z0-9]" aria-describedby="slug-hint" />
      </label>
      <p id="slug-hint" class="hint">
        3–40 characters of a–z, 0–9 and -; it becomes the app's address.
      </p>
      <ErrorNote error={error} />
      <button type="submit">Create project</button>
    </form>
  );
}
