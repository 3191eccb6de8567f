import { z } from 'zod';

// Mailbox strings as people write them: `a@example.com` or `Ada Lovelace <a@example.com>` (the name may be
// quoted). The address part must be a valid e-mail address; CR/LF are refused (header injection).

const MAILBOX_RE = /^\s*(?:"([^"\r\n]*)"|([^<>"\r\n]*?))\s*<([^<>\s]+)>\s*$/;
const emailSchema = z.email();

export type Mailbox = { name?: string; address: string };

export function parseMailbox(value: string): Mailbox | null {
  if (/[\r\n]/.test(value) || value.length > 320 + 200) return null;
  const m = MAILBOX_RE.exec(value);
  const address = (m ? m[3]! : value).trim();
  if (address.length > 320 || !emailSchema.safeParse(address).success) return null;
  const name = m ? (m[1] ?? m[2] ?? '').trim() : '';
  return name ? { name, address } : { address };
}

/** Lower-cased address part (suppression list and filters compare these). */
export function addressOf(value: string): string {
  return (parseMailbox(value)?.address ?? value).toLowerCase();
}

export const mailboxInput = z
  .string()
  .max(520)
  .refine((v) => parseMailbox(v) !== null, {
    message: 'must be an e-mail address like a@example.com or "Name <a@example.com>"',
  });

/** A string or an array of 1..max mailboxes, always returned as an array. */
export function mailboxList(max: number) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .pipe(z.array(mailboxInput).min(1).max(max));
}

export function domainOf(value: string): string {
  return addressOf(value).split('@')[1] ?? 'localhost';
}
