import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { navigate } from './router.ts';

// Small shared pieces: links, copy buttons, confirmations, notices, dates.

export function Link(props: {
  href: string;
  children: ComponentChildren;
  class?: string;
  current?: boolean;
}) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

export function CopyButton(props: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.value);
        } catch {
          // Clipboard refused (insecure origin): select the text so the person can copy it by hand.
          const sel = document.getSelection();
          const el = document.querySelector(`[data-copy="${CSS.escape(props.value)}"]`);
          if (sel && el) sel.selectAllChildren(el);
        }
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? 'Copied' : (props.label ?? 'Copy')}
      <span class="sr-only" aria-live="polite">
        {copied ? ' to the clipboard' : ''}
      </span>
    </button>
  );
}

/** Shows a secret once, with a copy button. */
export function ShownOnce(props: {
  title: string;
  value: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <section class="shown-once" aria-label={props.title} tabIndex={-1} ref={ref}>
      <h3>{props.title}</h3>
      <p>Copy it now: it is shown only once and cannot be recovered.</p>
      <div class="secret-row">
        <code class="secret" data-copy={props.value} data-testid="shown-once">
          {props.value}
        </code>
        <CopyButton value={props.value} />
      </div>
      {props.children}
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </section>
  );
}

/** A two-step button: the first press asks, the second does it (no modal, keyboard friendly). */
export function ConfirmButton(props: {
  label: string;
  confirm: string;
  onConfirm: () => Promise<void> | void;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking)
    return (
      <button type="button" class="danger-outline" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  return (
    <span class="confirm">
      <span>{props.confirm}</span>
      <button
        type="button"
        class="danger"
        disabled={busy}
        ref={(el) => el?.focus()}
        onClick={async () => {
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function ErrorNote(props: { error: unknown }) {
  if (!props.error) return null;
  const message = props.error instanceof Error ? props.error.message : String(props.error);
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function fmtDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function Page(props: { title: string; children: ComponentChildren; intro?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · Pier`;
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <h1 id="page-title">{props.title}</h1>
      {props.intro ? <p class="intro">{props.intro}</p> : null}
      {props.children}
    </section>
  );
}

/** Loads data for a page; `reload` refetches after a change. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (d) => live && setData(d),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, n]);
  return { data, error, reload: () => setN((x) => x + 1), setData };
}

export type Environment = 'production' | 'sandbox';

/** The production/sandbox choice shown on every page of v1 data (live keys see production, test keys sandbox). */
export function EnvSwitch(props: { value: Environment; onChange: (e: Environment) => void; name?: string }) {
  return (
    <fieldset class="env-switch">
      <legend>Environment</legend>
      {(['production', 'sandbox'] as const).map((e) => (
        <label key={e} class="radio">
          <input
            type="radio"
            name={props.name ?? 'environment'}
            value={e}
            checked={props.value === e}
            onChange={() => props.onChange(e)}
          />
          {e === 'production' ? 'Production (live keys)' : 'Sandbox (test keys)'}
        </label>
      ))}
    </fieldset>
  );
}
