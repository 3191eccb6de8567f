import { convert } from 'html-to-text';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Config } from '../../config.ts';

// How a message leaves: the pooled SMTP transport (SMTP_URL, DKIM-signed with its domain's key) or the built-in outbox,
// which renders the same real MIME message and stores it. SMTP replies are classified here so the worker
// only decides what to do: temporary (4xx, network) → retry with back-off; every recipient refused with
// 5xx → bounced (hard bounce); other 5xx → failed.

export type DkimKey = { domainName: string; keySelector: string; privateKey: string };

export type OutgoingMail = {
  id: string;
  from: string;
  to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  replyTo: string[] | null;
  messageId: string;
  /** The key that signs this message (its From domain's); none: unsigned. */
  dkim?: DkimKey;
  /** Broadcast mail: its recipient's one-click unsubscribe URL (RFC 8058). */
  unsubscribeUrl?: string;
};

export type Rejection = { address: string; code: number | null; response: string };

export type SmtpOutcome =
  | { kind: 'sent'; response: string; accepted: string[]; rejected: Rejection[] }
  | { kind: 'temporary'; response: string }
  | { kind: 'bounced'; response: string; rejected: Rejection[] }
  | { kind: 'failed'; response: string };

// nodemailer's default list of signed headers plus List-Unsubscribe-Post: RFC 8058 wants both list headers
// under the DKIM signature, or a receiver cannot trust the one-click promise.
const SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:' +
  'Resent-Message-ID:In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:' +
  'List-Subscribe:List-Post:List-Owner:List-Archive';

/**
 * The plain-text part: the sender's, else generated from the HTML (HTML-only mail scores as spam and
 * reads badly in text clients), else empty, so every message has a text/plain part.
 */
function textPart(m: OutgoingMail): string {
  if (m.text !== null) return m.text;
  if (m.html === null) return '';
  return convert(m.html, { wordwrap: 78, selectors: [{ selector: 'img', format: 'skip' }] });
}

function mailOptions(m: OutgoingMail) {
  return {
    from: m.from,
    to: m.to,
    subject: m.subject,
    ...(m.html !== null ? { html: m.html } : {}),
    text: textPart(m),
    ...(m.replyTo ? { replyTo: m.replyTo } : {}),
    messageId: m.messageId,
    headers: {
      'X-Pier-Email-Id': m.id,
      ...(m.unsubscribeUrl
        ? {
            'List-Unsubscribe': `<${m.unsubscribeUrl}>`,
            'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          }
        : {}),
    },
    ...(m.dkim ? { dkim: { ...m.dkim, headerFieldNames: SIGNED_HEADERS } } : {}),
    // Content is only what the caller sent: never read files or URLs named in it.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** Renders the real MIME message (as the SMTP transport would send it, without DKIM). */
export async function composeMime(m: OutgoingMail): Promise<{ raw: string; headers: [string, string][] }> {
  const buf: Buffer = await new MailComposer(mailOptions(m)).compile().build();
  const raw = buf.toString('utf8');
  return { raw, headers: parseHeaders(raw) };
}

/** Unfolds and splits the header block of a MIME message. */
export function parseHeaders(raw: string): [string, string][] {
  const end = raw.search(/\r?\n\r?\n/);
  const block = (end === -1 ? raw : raw.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const out: [string, string][] = [];
  for (const line of block.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) out.push([line.slice(0, i).trim(), line.slice(i + 1).trim()]);
  }
  return out;
}

type SmtpError = Error & {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  rejectedErrors?: (SmtpError & { recipient?: string })[];
};

function rejectionsOf(errs: SmtpError['rejectedErrors']): Rejection[] {
  return (errs ?? []).map((e) => ({
    address: String(e.recipient ?? '').toLowerCase(),
    code: e.responseCode ?? null,
    response: e.response ?? e.message,
  }));
}

export function classifySmtpError(err: SmtpError): SmtpOutcome {
  const response = (err.response ?? err.message ?? 'unknown error').slice(0, 500);
  const code = err.responseCode;
  if (err.code === 'EENVELOPE' && err.rejectedErrors?.length) {
    const rejected = rejectionsOf(err.rejectedErrors);
    if (rejected.every((r) => r.code !== null && r.code >= 500))
      return { kind: 'bounced', response, rejected };
    return { kind: 'temporary', response };
  }
  if (typeof code === 'number' && code >= 500) return { kind: 'failed', response };
  return { kind: 'temporary', response };
}

/** One pooled SMTP transport per process. */
export class SmtpPool {
  readonly #transport: ReturnType<typeof nodemailer.createTransport>;
  // No transport-wide DKIM key: each message carries its own domain's (delivery.ts).
  constructor(smtp: NonNullable<Config['smtp']>) {
    this.#transport = nodemailer.createTransport({
      url: smtp.url,
      pool: true,
      maxConnections: smtp.poolSize,
      maxMessages: 1000,
      ignoreTLS: smtp.ignoreTls,
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 60_000,
    } as Parameters<typeof nodemailer.createTransport>[0]);
  }

  async send(m: OutgoingMail): Promise<SmtpOutcome> {
    try {
      const info = (await this.#transport.sendMail(mailOptions(m))) as {
        response?: string;
        accepted?: (string | { address: string })[];
        rejectedErrors?: SmtpError['rejectedErrors'];
      };
      const accepted = (info.accepted ?? []).map((a) =>
        (typeof a === 'string' ? a : a.address).toLowerCase(),
      );
      return {
        kind: 'sent',
        response: String(info.response ?? '').slice(0, 500),
        accepted,
        rejected: rejectionsOf(info.rejectedErrors),
      };
    } catch (err) {
      return classifySmtpError(err as SmtpError);
    }
  }

  close(): void {
    this.#transport.close();
  }
}
