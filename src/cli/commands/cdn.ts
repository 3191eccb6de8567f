import fs from 'node:fs';
import path from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { fileTypeFromFile } from 'file-type';
import type { CliContext } from '../context.ts';
import { progressBar, uploadArtifact } from '../deploy/upload.ts';
import { table, toJson, wantsJson } from '../output.ts';
import { uploadResumable } from '../resumable-upload.ts';

// pier cdn upload | ls | usage — the CDN with the user's own token, through the same functions as the
// dashboard's Assets page (createCdnUploadForCli + confirmCdnUploadForCli, listCdnAssetsForCli,
// getCdnStorageUsageForCli). The upload goes straight to the presigned URL, as `pier deploy`'s does.

const ENVIRONMENTS = ['production', 'sandbox'] as const;
/** The largest file one presigned PUT takes (the v1 contract's limit); larger ones go resumably. */
const SINGLE_PUT_BYTES = 100 * 1024 * 1024;
const TYPES = ['image', 'video', 'audio', 'document', 'other'] as const;
type Env = (typeof ENVIRONMENTS)[number];
const envOption = (def?: Env) => {
  const o = new Option('--env <environment>', 'production (live keys) or sandbox (test keys)').choices(
    ENVIRONMENTS,
  );
  return def ? o.default(def) : o;
};

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw new InvalidArgumentError('A whole number from 1 to 100.');
  return n;
}

const TEXT: Record<string, string> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.html': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
};

/** A first guess for the declaration; Pier sniffs the bytes at confirm and corrects it anyway. */
async function guessMime(file: string): Promise<string> {
  const sniffed = await fileTypeFromFile(file).catch(() => undefined);
  return sniffed?.mime ?? TEXT[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

const mb = (n: number) =>
  n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

export function register(program: Command, ctx: CliContext): void {
  const cdn = program.command('cdn').description("Upload to and look at an organization's CDN assets");

  cdn
    .command('upload')
    .description('Upload a file as an asset (progress on stderr); prints its CDN URL')
    .argument('<file>', 'the file (up to 2 GiB; over 100 MB it is sent resumably)')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption('production'))
    .option('--folder <path>', 'virtual folder, e.g. images/2026')
    .option('--project <slug>', 'count it in this project’s storage usage')
    .option('--resumable', 'send it in pieces that survive a dropped connection (tus; automatic over 100 MB)')
    .action(
      async (
        file: string,
        opts: { org: string; env: Env; folder?: string; project?: string; resumable?: boolean },
        cmd: Command,
      ) => {
        const stat = fs.statSync(file, { throwIfNoEntry: false });
        if (!stat?.isFile()) throw new InvalidArgumentError(`${file} is not a file.`);
        const client = ctx.userClient();
        const scope = { orgSlug: opts.org, environment: opts.env };
        const resumable = opts.resumable || stat.size > SINGLE_PUT_BYTES;
        const started = await client.call('createCdnUploadForCli', {
          ...scope,
          filename: path.basename(file),
          mimeType: await guessMime(file),
          size: stat.size,
          ...(opts.folder ? { folder: opts.folder } : {}),
          ...(opts.project ? { projectSlug: opts.project } : {}),
          ...(resumable ? { resumable: true } : {}),
        });
        const err = ctx.io.stderr;
        const tty = Boolean((err as { isTTY?: boolean }).isTTY);
        let lastPct = -1;
        const progress = (sent: number, total: number) => {
          const pct = Math.floor((sent / total) * 100);
          if (tty) err.write(`\rUploading ${progressBar(sent, total)}`);
          else if (pct >= lastPct + 25 || sent === total) err.write(`Uploaded ${pct}%\n`);
          lastPct = pct;
        };
        if (resumable) await uploadResumable(started, file, progress);
        else await uploadArtifact(started, file, progress);
        if (tty) err.write('\n');
        const asset = await client.call('confirmCdnUploadForCli', { ...scope, assetId: started.assetId });
        if (wantsJson(cmd)) ctx.io.stdout.write(toJson(asset));
        else {
          if (asset.status === 'failed')
            err.write(`Stored, but the media could not be read: ${asset.error}\n`);
          else if (asset.mimeType !== asset.declaredMimeType)
            err.write(`Pier read the file as ${asset.mimeType}.\n`);
          ctx.io.stdout.write(`${asset.cdnUrl}\n`);
        }
      },
    );

  cdn
    .command('ls')
    .description('List assets, newest first')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption('production'))
    .option('--folder <path>', 'only this folder ("" for assets in no folder)')
    .addOption(new Option('--type <type>', 'only this type').choices(TYPES))
    .option('--search <text>', 'filename contains')
    .option('--limit <n>', 'at most this many (1–100, default 50)', count)
    .action(
      async (
        opts: {
          org: string;
          env: Env;
          folder?: string;
          type?: (typeof TYPES)[number];
          search?: string;
          limit?: number;
        },
        cmd: Command,
      ) => {
        const r = await ctx.userClient().call('listCdnAssetsForCli', {
          orgSlug: opts.org,
          environment: opts.env,
          ...(opts.folder !== undefined ? { folder: opts.folder } : {}),
          ...(opts.type ? { type: opts.type } : {}),
          ...(opts.search ? { search: opts.search } : {}),
          ...(opts.limit ? { limit: opts.limit } : {}),
        });
        if (wantsJson(cmd)) {
          ctx.io.stdout.write(toJson(r));
          return;
        }
        ctx.io.stdout.write(
          table(
            r.items,
            [
              { header: 'id', value: (a) => a.assetId },
              { header: 'filename', value: (a) => a.filename },
              { header: 'folder', value: (a) => a.folder || '-' },
              { header: 'type', value: (a) => a.type },
              { header: 'size', value: (a) => mb(a.size) },
              { header: 'status', value: (a) => a.status },
              { header: 'url', value: (a) => a.cdnUrl },
            ],
            `No assets in ${opts.org} (${opts.env}).`,
          ),
        );
        if (r.hasMore) ctx.io.stderr.write(`${r.items.length} of ${r.total} shown.\n`);
      },
    );

  cdn
    .command('usage')
    .description('Storage used, by type (both environments unless --env is given)')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .option('--project <slug>', 'only this project')
    .option('--folder <path>', 'only this folder and the folders inside it')
    .action(async (opts: { org: string; env?: Env; project?: string; folder?: string }, cmd: Command) => {
      const u = await ctx.userClient().call('getCdnStorageUsageForCli', {
        orgSlug: opts.org,
        ...(opts.env ? { environment: opts.env } : {}),
        ...(opts.project ? { projectSlug: opts.project } : {}),
        ...(opts.folder ? { folder: opts.folder } : {}),
      });
      if (wantsJson(cmd)) {
        ctx.io.stdout.write(toJson(u));
        return;
      }
      ctx.io.stdout.write(
        `${u.totalFormatted} in ${u.objectCount} objects (originals ${u.breakdown.originals.bytesFormatted}, derived ${u.breakdown.derived.bytesFormatted})\n`,
      );
      ctx.io.stdout.write(
        table(
          Object.entries(u.byType),
          [
            { header: 'type', value: ([t]) => t },
            { header: 'size', value: ([, s]) => s.bytesFormatted },
            { header: 'objects', value: ([, s]) => String(s.objectCount) },
          ],
          'Nothing stored.',
        ),
      );
    });
}
