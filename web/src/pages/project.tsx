import { useEffect, useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org, type SessionInfo } from '../api.ts';
import { ConfirmButton, ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';
import { AppLimitsPanel, DeploymentDetail, deploymentInProgress } from './project-hosting.tsx';
import { appUrl } from './projects.tsx';

// One project: status, address, region, deployments with the app's recent logs, and write-only secrets.

type Project = FnOutput<'getProjectForCli'>;
type Deployment = FnOutput<'listDeploymentsForCli'>[number];
type Secret = FnOutput<'listSecretsForCli'>[number];

export function ProjectPage(props: { slug: string; orgs: Org[]; session: SessionInfo }) {
  const { data: project, error } = useLoad(
    () => fn<Project>('getProjectForCli', { slug: props.slug }),
    [props.slug],
  );
  if (error) return <Page title={props.slug}>{<ErrorNote error={error} />}</Page>;
  if (!project) return <Page title={props.slug}>{<p>Loading…</p>}</Page>;
  const org = props.orgs.find((o) => o.id === project.orgId);
  const url = appUrl(props.session, project.slug);
  return (
    <Page title={project.slug}>
      <dl class="facts card">
        <dt>Status</dt>
        <dd>
          <span class={`status status-${project.status}`} data-testid="project-status">
            {project.status}
          </span>
          {project.errorMessage ? <p class="error">{project.errorMessage}</p> : null}
        </dd>
        <dt>URL</dt>
        <dd>
          <a href={url} rel="noopener">
            {url}
          </a>
        </dd>
        <dt>Region</dt>
        <dd>{project.region}</dd>
        <dt>Organization</dt>
        <dd>{org?.name ?? '—'}</dd>
      </dl>
      <AppLimitsPanel slug={project.slug} limits={project.appLimits} />
      <Deployments slug={project.slug} />
      <Secrets slug={project.slug} canWrite={isManager(org)} />
    </Page>
  );
}

// ── Deployments (newest first) from the hosting area, and the app's last log lines.
function Deployments(props: { slug: string }) {
  const { data, error, reload } = useLoad(
    () => fn<Deployment[]>('listDeploymentsForCli', { projectSlug: props.slug, limit: 20 }),
    [props.slug],
  );
  const [picked, setPicked] = useState<string | null>(null);
  // The newest deployment opens by itself while it is on its way to live, so its build log shows live; it
  // stays open once it ends (live or failed, with the reason).
  const newest = data?.[0];
  const auto = newest && deploymentInProgress(newest.status) ? newest.id : null;
  useEffect(() => {
    if (auto) setPicked(auto);
  }, [auto]);
  const open = picked ?? auto;
  return (
    <section aria-labelledby="deployments-title" class="block">
      <h2 id="deployments-title">Deployments</h2>
      <ErrorNote error={error} />
      {data === undefined ? null : data.length === 0 ? (
        <p class="empty">No deployments yet. Deploy with pier deploy.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Deployment</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {data.map((d) => (
              <tr key={d.id}>
                <td data-label="Deployment">
                  <button
                    type="button"
                    class="link"
                    aria-pressed={open === d.id}
                    aria-label={`Show deployment ${d.id.slice(0, 8)}`}
                    onClick={() => setPicked(d.id)}
                  >
                    <code>{d.id.slice(0, 8)}</code>
                  </button>
                </td>
                <td data-label="Status">
                  <span class={`status status-${d.status}`}>{d.status}</span>
                  {d.errorMessage ? <div class="error">{d.errorMessage}</div> : null}
                </td>
                <td data-label="Created">{fmtDate(d.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open ? <DeploymentDetail key={open} slug={props.slug} id={open} onChange={reload} /> : null}
      {data?.length ? <AppLogs slug={props.slug} /> : null}
    </section>
  );
}

function AppLogs(props: { slug: string }) {
  const { data, error, reload } = useLoad(
    () => fn<FnOutput<'getAppLogsForCli'>>('getAppLogsForCli', { projectSlug: props.slug, limit: 100 }),
    [props.slug],
  );
  return (
    <div class="block">
      <h3 id="logs-title">
        Recent logs{' '}
        <button type="button" class="link" onClick={reload}>
          Refresh
        </button>
      </h3>
      <ErrorNote error={error} />
      {data === undefined ? null : data.lines.length === 0 ? (
        <p class="empty">No log lines yet.</p>
      ) : (
        <pre class="logs" role="log" aria-labelledby="logs-title" data-testid="app-logs">
          {data.lines
            .map((l) => `${l.ts.slice(11, 19)} ${l.stream === 'stdout' ? '' : `[${l.stream}] `}${l.line}`)
            .join('\n')}
        </pre>
      )}
    </div>
  );
}

// ── Secrets: keys and update times only; a value goes to the server and is never shown again.
function Secrets(props: { slug: string; canWrite: boolean }) {
  const { data, error, reload } = useLoad(
    () => fn<Secret[]>('listSecretsForCli', { projectSlug: props.slug }),
    [props.slug],
  );
  const [formError, setFormError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <section aria-labelledby="secrets-title" class="block">
      <h2 id="secrets-title">Secrets</h2>
      <p class="hint">
        Environment variables of the app. Values are encrypted and write-only: nobody can read them back.
      </p>
      <ErrorNote error={error} />
      {data && data.length === 0 ? <p class="empty">No secrets yet.</p> : null}
      {data && data.length > 0 ? (
        <table aria-label="Secrets">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Updated</th>
              {props.canWrite ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {data.map((s) => (
              <tr key={s.key} data-testid={`secret-${s.key}`}>
                <td data-label="Key">
                  <code>{s.key}</code>
                </td>
                <td data-label="Updated">{fmtDate(s.updatedAt)}</td>
                {props.canWrite ? (
                  <td data-label="Actions">
                    <ConfirmButton
                      label="Remove"
                      confirm={`Remove ${s.key}?`}
                      onConfirm={async () => {
                        await fn('removeSecretForCli', { projectSlug: props.slug, key: s.key });
                        reload();
                      }}
                    />
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {props.canWrite ? (
        <form
          class="inline-form"
          aria-label="Add or replace a secret"
          autocomplete="off"
          onSubmit={async (e) => {
            e.preventDefault();
            const form = e.currentTarget as HTMLFormElement;
            const f = new FormData(form);
            setFormError(null);
            setSaved(null);
            try {
              const key = String(f.get('key'));
              await fn('setSecretForCli', { projectSlug: props.slug, key, value: String(f.get('value')) });
              form.reset();
              setSaved(key);
              reload();
            } catch (err) {
              setFormError(err);
            }
          }}
        >
          <label>
            Key
            <input
              name="key"
              required
              pattern="[A-Z][A-Z0-9_]*"
              placeholder="STRIPE_KEY"
              spellcheck={false}
            />
          </label>
          <label>
            Value
            <input name="value" type="password" required autocomplete="new-password" />
          </label>
          <button type="submit">Save secret</button>
          <ErrorNote error={formError} />
          {saved ? <p role="status">Saved {saved}. Replacing a key overwrites its value.</p> : null}
        </form>
      ) : (
        <p class="hint">Only owners and admins can change secrets.</p>
      )}
    </section>
  );
}
