import type { Command } from 'commander';
import { isPierApiError, type PierClient } from '../../sdk/client.ts';
import { browserLogin, type Exchange } from '../browser-login.ts';
import type { CliContext } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { fields, toJson, wantsJson } from '../output.ts';
import { readLine } from '../prompt.ts';

// pier login · pier logout · pier whoami

export const CODE_PROMPT = "Enter the code from the dashboard's hand-off card: ";

async function codeLogin(ctx: CliContext, client: PierClient, given: string | undefined): Promise<Exchange> {
  const code = given ?? (await readLine(ctx.io.stdin, ctx.io.stderr, CODE_PROMPT));
  if (!code.trim()) throw usageError('No login code given.');
  return client.call('exchangeCliAuthCode', { code: code.trim() });
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .description('Log in: approve in the browser, or enter a code from the hand-off card (--code)')
    .option('--code [code]', 'use a login code instead of the browser (asked for when not given)')
    .option('--url <url>', 'the Pier server (default: PIER_URL, the saved URL, or http://127.0.0.1:8787)')
    .action(async (opts: { code?: string | true; url?: string }, cmd: Command) => {
      const url = (opts.url ?? ctx.url()).replace(/\/+$/, '');
      const client = ctx.anonClient(url);
      const useCode = opts.code !== undefined || !ctx.env.canOpenBrowser;
      const result = useCode
        ? await codeLogin(ctx, client, typeof opts.code === 'string' ? opts.code : undefined)
        : await browserLogin({ env: ctx.env, client, stderr: ctx.io.stderr });
      ctx.store.update((c) => ({
        ...c,
        url: client.baseUrl,
        token: result.token,
        user: result.user,
        label: result.label,
      }));
      if (ctx.env.token)
        ctx.io.stderr.write('note: PIER_TOKEN is set and overrides the saved token while it stays set.\n');
      // The token itself is never printed: it lives only in the config file.
      const out = { url: client.baseUrl, user: result.user, label: result.label, configFile: ctx.store.file };
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(out)
          : `Logged in to ${out.url} as ${out.user.email} (token '${out.label}', saved in ${out.configFile}).\n`,
      );
    });

  program
    .command('logout')
    .description('Revoke the token in use and remove it from the config file')
    .action(async (_opts: unknown, cmd: Command) => {
      const current = ctx.userToken();
      if (!current) throw new CliError('NOT_LOGGED_IN', `Not logged in to ${ctx.url()}.`);
      try {
        await ctx.userClient().call('revokeTokenForCli');
      } catch (err) {
        // An already revoked or expired token is as logged out as it gets; any other failure keeps the
        // token saved so that logging out can be retried.
        if (!(isPierApiError(err) && err.status === 401)) throw err;
      }
      const removed = ctx.store.read().token === current.token;
      if (removed) ctx.store.update(({ token: _t, user: _u, label: _l, ...rest }) => rest);
      const out = { ok: true, url: ctx.url(), removedFromConfig: removed };
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson(out)
          : `Logged out of ${out.url}; the token is revoked${removed ? ' and removed from the config file' : ''}.\n`,
      );
      if (current.source === 'env')
        ctx.io.stderr.write('note: unset PIER_TOKEN; it holds the revoked token.\n');
    });

  program
    .command('whoami')
    .description('Show the user and token in use')
    .action(async (_opts: unknown, cmd: Command) => {
      const me = await ctx.userClient().call('whoamiForCli');
      ctx.io.stdout.write(
        wantsJson(cmd)
          ? toJson({ url: ctx.url(), ...me })
          : fields([
              ['user', me.user.email],
              ['id', me.user.id],
              ['token', me.token.label],
              ['created', me.token.createdAt],
              ['server', ctx.url()],
            ]),
      );
    });
}
