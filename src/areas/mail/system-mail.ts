import type { Deps } from '../../deps.ts';
import type { ApiKeyCaller } from '../../http/v1-kit.ts';
import { sendEmail } from './emails.ts';
import { SYSTEM_ORG_ID } from './tables.ts';

export { SYSTEM_ORG_ID };

// Pier's own mail (address verification, invitations, set-password links) goes through the same pipeline
// as tenants' mail: queued, retried, sent over SMTP_URL (signed with the operator's DKIM key) or, without
// it, kept in the built-in outbox, where an operator reads it (`pier admin mail`). It belongs to no
// organization: the nil UUID marks it, so no tenant's dev inbox or API ever lists it.

const SYSTEM: ApiKeyCaller = {
  kind: 'apikey',
  credentialId: 'system',
  keyId: 'system',
  orgId: SYSTEM_ORG_ID,
  environment: 'production',
};

export async function sendSystemMail(
  deps: Deps,
  m: { to: string; subject: string; text: string },
): Promise<{ id: string }> {
  const email = await sendEmail(deps, SYSTEM, {
    from: deps.config.systemMailFrom,
    to: [m.to],
    subject: m.subject,
    text: m.text,
  });
  return { id: email.id };
}
