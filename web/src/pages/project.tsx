import { useState } from 'preact/hooks';
import type { FnOutput } from '../../../src/sdk/types.ts';
import { fn, isManager, type Org, type SessionInfo } from '../api.ts';
import { ConfirmButton, ErrorNote, fmtDate, Page, useLoad } from '../ui.tsx';
import { Deployments } from './project-deployments.tsx';
import { AppLimitsPanel } from './project-hosting.tsx';
import { appUrl } from './projects.tsx';

// One project: status, address, region, deployments with the app's recent logs, and write-only secrets.

type Project = FnOutput<'getProjectForCli'>;
type Secret = FnOutput<'listSecretsForCli'>[number];
type BuildSecret = FnOutput<'listBuildSecretsForCli'>[number];

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
      <Deployments slug={project.slug} canWrite={isManager(org)} />
      <Secrets slug={project.slug} canWrite={isManager(org)} />
    </Page>
  );
}

// ── Secrets: keys and update times only; a value goes to the server and is never shown again.
function Secrets(props: { slug: string; canWrite: boolean }) {
  const { data, error, reload } = useLoad(
    () => fn<Secret[]>('listSecretsForCli', { projectSlug: props.slug }),
    [props.slug],
  );
  const build = useLoad(
    () => fn<BuildSecret[]>('listBuildSecretsForCli', { projectSlug: props.slug }),
    [props.slug, data],
  );
  const buildOf = (key: string) => build.data?.find((b) => b.key === key);
  const [formError, setFormError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <section aria-labelledby="secrets-title" class="block">
      <h2 id="secrets-title">Secrets</h2>
      <p class="hint">
        Environment variables of the app. Values are encrypted and write-only: nobody can read them back. Only
        secrets ticked for builds (and VITE_, PUBLIC_, NEXT_PUBLIC_, NUXT_PUBLIC_ ones) reach the build, from
        the next deploy on; what a build reads may end up in pages every visitor downloads.
      </p>
      <ErrorNote error={error} />
      {data && data.length === 0 ? <p class="empty">No secrets yet.</p> : null}
      {data && data.length > 0 ? (
        <table aria-label="Secrets">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Updated</th>
              <th scope="col">Build</th>
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
                <td data-label="Build">
                  {buildOf(s.key)?.prefix ? (
                    <span class="hint">always (public prefix)</span>
                  ) : (
                    <label>
                      <input
                        type="checkbox"
                        checked={!!buildOf(s.key)?.marked}
                        disabled={!props.canWrite}
                        aria-label={`Give ${s.key} to builds`}
                        onChange={async (e) => {
                          const on = (e.currentTarget as HTMLInputElement).checked;
                          setFormError(null);
                          try {
                            await fn('setSecretBuildForCli', {
                              projectSlug: props.slug,
                              key: s.key,
                              build: on,
                            });
                          } catch (err) {
                            setFormError(err);
                          }
                          build.reload();
                        }}
                      />{' '}
                      builds
                    </label>
                  )}
                </td>
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
