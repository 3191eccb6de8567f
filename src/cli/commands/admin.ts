import { type Command, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { fields, toJson, wantsJson } from '../output.ts';
import { type LimitOpts, positive, rateLimitOf } from './keys.ts';

// pier admin … — operator commands, sent with the operator key to the running server (never the database).

const ROLES = ['owner', 'admin', 'member'] as const;
const PLANS = ['free', 'pro'] as const;

export function register(program: Command, ctx: CliContext): void {
  const admin = program
    .command('admin')
    .description('Operator commands (operator key from PIER_OPERATOR_KEY or $DATA_DIR/operator.key)');
  const print: Print = (cmd, data, human) => {
    ctx.io.stdout.write(wantsJson(cmd) ? toJson(data) : human);
  };

  registerUsers(admin, ctx, print);
  registerOrgs(admin, ctx, print);
  registerCredentials(admin, ctx, print);
  registerIntegrations(admin, ctx, print);
}

type Print = (cmd: Command, data: unknown, human: string) => void;

/** pier admin user …: create, verify, invite-link, and the operator's view of Pier's own mail. */
function registerUsers(admin: Command, ctx: CliContext, print: Print): void {
  const user = admin.command('user').description('Users');
  user
    .command('create')
    .description('Create a user by e-mail (does nothing if it exists)')
    .requiredOption('--email <email>', 'e-mail address')
    .action(async (opts: { email: string }, cmd: Command) => {
      const u = await ctx.operatorClient().call('adminCreateUser', { email: opts.email });
      print(cmd, u, `${u.created ? 'Created' : 'Already there:'} user ${u.email} (${u.id}).\n`);
    });
  user
    .command('verify')
    .description("Mark a user's e-mail address as verified (their pending invitations become memberships)")
    .requiredOption('--email <email>', 'e-mail address')
    .action(async (opts: { email: string }, cmd: Command) => {
      const u = await ctx.operatorClient().call('adminVerifyUser', { email: opts.email });
      print(cmd, u, `Verified ${u.email} (${u.id}).\n`);
    });
  // The operator may pass this link on by hand: it sets the user's dashboard password and proves the address.
  user
    .command('invite-link')
    .description('Print a one-time link (7 days) for a user (created if new) to set a dashboard password')
    .requiredOption('--email <email>', 'e-mail address')
    .action(async (opts: { email: string }, cmd: Command) => {
      const l = await ctx.operatorClient().call('adminCreateInviteLink', { email: opts.email });
      print(cmd, l, `${l.url}\n(for ${l.email}; works once, until ${l.expiresAt})\n`);
    });

  admin
    .command('mail')
    .description("Pier's own mail (verification and set-password links) kept by the built-in outbox")
    .option('--to <email>', 'only messages to this address')
    .option('--limit <n>', 'how many (1-100)', '20')
    .action(async (opts: { to?: string; limit: string }, cmd: Command) => {
      const r = await ctx
        .operatorClient()
        .call('adminListSystemMail', { to: opts.to, limit: Number(opts.limit) });
      const human = r.items.length
        ? r.items
            .map((m) => `== ${m.createdAt}  to ${m.to.join(', ')}\n${m.subject}\n\n${m.text ?? ''}\n`)
            .join('\n')
        : 'No messages.\n';
      print(cmd, r, human);
    });
}

/** pier admin org create, member add, plan set. */
function registerOrgs(admin: Command, ctx: CliContext, print: Print): void {
  admin
    .command('org')
    .description('Organizations')
    .command('create')
    .description('Create an organization owned by a user (created if new)')
    .requiredOption('--slug <slug>', 'organization slug')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--owner <email>', "the owner's e-mail")
    .action(async (opts: { slug: string; name: string; owner: string }, cmd: Command) => {
      const o = await ctx
        .operatorClient()
        .call('adminCreateOrg', { slug: opts.slug, name: opts.name, ownerEmail: opts.owner });
      print(
        cmd,
        o,
        `Created organization ${o.slug}.\n${fields([
          ['id', o.id],
          ['name', o.name],
          ['plan', o.plan],
          ['owner', o.owner.email],
        ])}`,
      );
    });

  admin
    .command('member')
    .description('Memberships')
    .command('add')
    .description("Add a user (created if new) to an organization, or change the member's role")
    .requiredOption('--org <slug>', 'organization slug')
    .requiredOption('--email <email>', "the member's e-mail")
    .addOption(new Option('--role <role>', 'role').choices(ROLES).makeOptionMandatory())
    .action(async (opts: { org: string; email: string; role: (typeof ROLES)[number] }, cmd: Command) => {
      const m = await ctx
        .operatorClient()
        .call('adminAddMember', { orgSlug: opts.org, email: opts.email, role: opts.role });
      print(cmd, m, `${m.email} is ${m.role} of ${m.orgSlug}.\n`);
    });

  admin
    .command('plan')
    .description('Plans')
    .command('set')
    .description("Set an organization's plan")
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(new Option('--plan <plan>', 'plan').choices(PLANS).makeOptionMandatory())
    .action(async (opts: { org: string; plan: (typeof PLANS)[number] }, cmd: Command) => {
      const p = await ctx.operatorClient().call('adminSetPlan', { orgSlug: opts.org, plan: opts.plan });
      print(cmd, p, `${p.orgSlug} is on the ${p.plan} plan.\n`);
    });
}

/** pier admin login-code, platform-credential and api-key: what lets people and services in. */
function registerCredentials(admin: Command, ctx: CliContext, print: Print): void {
  admin
    .command('login-code')
    .description('Login codes')
    .command('create')
    .description("Mint a single-use login code for a user (created if new) for 'pier login --code'")
    .requiredOption('--email <email>', "the user's e-mail")
    .option('--label <label>', 'label of the token the code turns into')
    .action(async (opts: { email: string; label?: string }, cmd: Command) => {
      const c = await ctx
        .operatorClient()
        .call('adminCreateLoginCode', { email: opts.email, ...(opts.label ? { label: opts.label } : {}) });
      print(cmd, c, `Login code for ${opts.email}: ${c.code} (single use, expires ${c.expiresAt}).\n`);
    });

  const cred = admin.command('platform-credential').description('Platform credentials for partner services');
  cred
    .command('create')
    .description('Issue a platform credential with named scopes (shown once)')
    .requiredOption('--scopes <scopes>', 'comma-separated: org.create, project.create, deploy, model.resolve')
    .option('--label <label>', 'label')
    .action(async (opts: { scopes: string; label?: string }, cmd: Command) => {
      const scopes = opts.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const c = await ctx.operatorClient().call('adminCreatePlatformCredential', {
        // The server validates the names and answers VALIDATION_ERROR for unknown ones.
        scopes: scopes as ('org.create' | 'project.create' | 'deploy' | 'model.resolve')[],
        ...(opts.label ? { label: opts.label } : {}),
      });
      print(
        cmd,
        c,
        `${fields([
          ['credential', c.credential],
          ['key id', c.keyId],
          ['scopes', c.scopes.join(', ')],
        ])}Store the credential now; it is not shown again.\n`,
      );
    });
  cred
    .command('revoke')
    .description('Revoke a platform credential by key id')
    .requiredOption('--key-id <keyId>', 'the key id (the middle part of plat.<keyId>.<secret>)')
    .action(async (opts: { keyId: string }, cmd: Command) => {
      const r = await ctx.operatorClient().call('adminRevokePlatformCredential', { keyId: opts.keyId });
      print(cmd, r, `Revoked platform credential ${r.keyId}.\n`);
    });

  admin
    .command('api-key')
    .description('v1 API keys')
    .command('create')
    .description('Create an API key for an organization (shown once)')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(
      new Option('--kind <kind>', 'live (production) or test (sandbox)')
        .choices(['live', 'test'])
        .makeOptionMandatory(),
    )
    .option('--label <label>', 'label')
    .option('--per-sec <n>', "the key's own v1 rate limit: requests per second (with --burst)", positive)
    .option('--burst <n>', "the key's own v1 rate limit: burst (with --per-sec)", positive)
    .action(
      async (opts: { org: string; kind: 'live' | 'test'; label?: string } & LimitOpts, cmd: Command) => {
        const rateLimit = rateLimitOf(opts, cmd);
        const k = await ctx.operatorClient().call('adminCreateApiKey', {
          orgSlug: opts.org,
          kind: opts.kind,
          ...(opts.label ? { label: opts.label } : {}),
          ...(rateLimit ? { rateLimit } : {}),
        });
        print(
          cmd,
          k,
          `${fields([
            ['key', k.key],
            ['key id', k.keyId],
          ])}Store the key now; it is not shown again.\n`,
        );
      },
    );
}

/** pier admin integrations webhook-tokens: what a provider sent its webhook URL to be pasted back (Notion). */
function registerIntegrations(admin: Command, ctx: CliContext, print: Print): void {
  admin
    .command('integrations')
    .description('Integrations')
    .command('webhook-tokens')
    .description("Verification tokens providers sent to their webhook URL (Notion's), newest first")
    .option('--connector <slug>', 'only this connector (e.g. notion)')
    .action(async (opts: { connector?: string }, cmd: Command) => {
      const r = await ctx
        .operatorClient()
        .call('adminListProviderWebhookTokens', opts.connector ? { connector: opts.connector } : {});
      const lines = r.items.map((t) => `${t.receivedAt}  ${t.connector}  ${t.token}\n`).join('');
      print(cmd, r, lines || 'No verification token has arrived.\n');
    });
}
