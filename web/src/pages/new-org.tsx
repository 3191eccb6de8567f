import { useState } from 'preact/hooks';
import { fn } from '../api.ts';
import { ErrorNote, Page } from '../ui.tsx';

export function NewOrgPage(props: { onCreated: (slug: string) => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  return (
    <Page title="New organization" intro="An organization holds projects and the people who work on them.">
      <form
        class="card stack"
        onSubmit={async (e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget as HTMLFormElement);
          setError(null);
          try {
            const r = await fn<{ slug: string }>('createOrgForCli', {
              name: String(f.get('name')),
              slug: String(f.get('slug')),
            });
            await props.onCreated(r.slug);
          } catch (err) {
            setError(err);
          }
        }}
      >
        <label>
          Name
          <input name="name" required maxLength={200} />
        </label>
        <label>
          Slug
          <input
            name="slug"
            required
            pattern="[a-z0-9][a-z0-9-]{1,38}[a-z0-9]"
            aria-describedby="org-slug-hint"
          />
        </label>
        <p id="org-slug-hint" class="hint">
          3–40 characters of a–z, 0–9 and -.
        </p>
        <ErrorNote error={error} />
        <button type="submit">Create organization</button>
      </form>
    </Page>
  );
}
