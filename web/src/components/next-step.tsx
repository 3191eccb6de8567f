import { CopyButton } from '../ui.tsx';

// An empty list that says what to do next (issue 39): one sentence and the exact command or v1 call that
// fills it, with a copy button. `$PIER_URL` is this server's address and `$PIER_API_KEY` a key of the
// environment shown (live for production, test for the sandbox).

export function NextStep(props: { what: string; command: string; testId?: string }) {
  return (
    <div class="empty-state" data-testid={props.testId}>
      <p class="muted">{props.what}</p>
      <pre data-copy={props.command}>{props.command}</pre>
      <CopyButton value={props.command} label="Copy command" />
    </div>
  );
}

/** A v1 POST as a curl command. */
export function curlPost(path: string, body: unknown): string {
  return `curl -X POST $PIER_URL/v1${path} \\\n  -H "Authorization: Bearer $PIER_API_KEY" -H 'content-type: application/json' \\\n  -d '${JSON.stringify(body)}'`;
}

/** Which key an environment's calls use. */
export const keyKind = (environment: string) => (environment === 'sandbox' ? 'test' : 'live');
