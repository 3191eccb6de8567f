import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { z } from 'zod';
import { errors } from '../../core/errors.ts';
import { slugInput } from '../orgs/index.ts';
import { DEPLOY_TOOL } from './access.ts';
import { type CallContext, invokeFn, okResult, type ToolResult, toolError } from './dispatch.ts';
import type { ToolAnnotations } from './tools.ts';

// Deploying from an agent: the app's files come inline, are packed into the same .tar.gz `pier deploy`
// makes, and go through the normal pipeline (createDeploymentForCli → upload → startDeploymentForCli); the
// tool then follows the deployment until it is live or failed.

export const MAX_FILES = 200;
export const MAX_FILE_BYTES = 1024 * 1024;
export const MAX_TOTAL_BYTES = 4 * 1024 * 1024;
const DEFAULT_WAIT_SEC = 45;
const POLL_MS = 250;

const input = z.strictObject({
  projectSlug: slugInput,
  files: z
    .record(
      z.string().min(1).max(300),
      z.union([
        z.string(),
        z.strictObject({ base64: z.string().describe("The file's bytes in base64 (images, fonts, …).") }),
      ]),
    )
    .describe(
      `The app's files, path → text content, or { "base64": "…" } for a binary file (at most ${MAX_FILES} files, ${MAX_FILE_BYTES} bytes each once decoded, ${MAX_TOTAL_BYTES} in all). A static site needs index.html; a Node app a package.json with a start script.`,
    ),
  waitSeconds: z
    .number()
    .int()
    .min(0)
    .max(55)
    .optional()
    .describe(`How long to follow the deployment (default ${DEFAULT_WAIT_SEC}).`),
});

const output = z.object({
  deploymentId: z.string(),
  status: z.string(),
  url: z.string(),
  errorMessage: z.string().optional(),
});

export const deployToolDef = {
  name: DEPLOY_TOOL,
  description:
    "Deploys an app to a project from files given inline, through the normal pipeline (build, health check, go live), and answers the app's URL once the deployment is live, or the reason it failed. Owner or admin.",
  inputSchema: stripSchema(z.toJSONSchema(input, { io: 'input', target: 'draft-07' })),
  annotations: {
    title: 'Deploy an app from inline files',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  } satisfies ToolAnnotations,
};

function stripSchema(s: Record<string, unknown>) {
  delete s.$schema;
  return s;
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** A file's bytes: text as UTF-8, or base64 decoded (refused when it is not base64 or past the cap). */
function bytesOf(p: string, content: string | { base64: string }): Buffer {
  if (typeof content === 'string') return Buffer.from(content, 'utf8');
  const b64 = content.base64.replace(/\s+/g, '');
  // Checked before decoding: a huge string is refused without allocating its bytes.
  if (Math.floor((b64.length * 3) / 4) - 2 > MAX_FILE_BYTES)
    throw tooBig(p, Math.floor((b64.length * 3) / 4));
  if (b64.length % 4 !== 0 || !BASE64_RE.test(b64)) {
    throw errors.validation(`files.${p}.base64: not base64 (A–Z, a–z, 0–9, + and /, padded with =).`);
  }
  return Buffer.from(b64, 'base64');
}

function tooBig(p: string, size: number) {
  return errors.validation(
    `files.${p}: ${size} bytes; a file sent inline is at most ${MAX_FILE_BYTES} bytes.`,
  );
}

/** The files, checked: safe relative paths, within the caps (a clear error names the cap passed). */
function checkFiles(files: Record<string, string | { base64: string }>): Map<string, Buffer> {
  const entries = Object.entries(files);
  if (entries.length === 0) throw errors.validation('files: give at least one file.');
  if (entries.length > MAX_FILES) {
    throw errors.validation(`files: ${entries.length} files; at most ${MAX_FILES} can be sent inline.`);
  }
  let total = 0;
  const out = new Map<string, Buffer>();
  for (const [p, content] of entries) {
    const norm = path.posix.normalize(p.replace(/\\/g, '/')).replace(/^\.\//, '');
    if (
      norm.startsWith('/') ||
      norm === '..' ||
      norm.startsWith('../') ||
      norm.endsWith('/') ||
      norm === '.'
    ) {
      throw errors.validation(`files.${p}: must be a relative file path inside the app.`);
    }
    if (norm.split('/').some((s) => s === '.git' || s === '.pier')) {
      throw errors.validation(`files.${p}: .git and .pier are never deployed.`);
    }
    const bytes = bytesOf(p, content);
    if (bytes.length > MAX_FILE_BYTES) throw tooBig(p, bytes.length);
    total += bytes.length;
    if (total > MAX_TOTAL_BYTES) {
      throw errors.validation(
        `files: more than ${MAX_TOTAL_BYTES} bytes in all; deploy a bigger app with pier deploy.`,
      );
    }
    out.set(norm, bytes);
  }
  return out;
}

async function pack(files: Map<string, Buffer>): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-mcp-deploy-'));
  try {
    for (const [p, content] of files) {
      const file = path.join(dir, p);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    }
    const chunks: Buffer[] = [];
    const stream = tar.c({ gzip: true, cwd: dir, portable: true }, [...files.keys()]);
    for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
    return Buffer.concat(chunks);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

type Created = { deploymentId: string; uploadUrl: string; uploadHeaders: Record<string, string> };

/** Puts the artifact where createDeployment said: Pier's own /blobs through inject, S3 over the network. */
async function upload(ctx: CallContext, created: Created, body: Buffer): Promise<void> {
  const publicUrl = ctx.deps.config.publicUrl;
  let status: number;
  if (created.uploadUrl.startsWith(publicUrl)) {
    const u = new URL(created.uploadUrl);
    const res = await ctx.app.inject({
      method: 'PUT',
      url: u.pathname + u.search,
      headers: created.uploadHeaders,
      payload: body,
    });
    status = res.statusCode;
  } else {
    // The operator's object store (S3_ENDPOINT), not an address a user gave.
    const res = await fetch(created.uploadUrl, {
      method: 'PUT',
      headers: created.uploadHeaders,
      body: new Uint8Array(body),
    });
    status = res.status;
  }
  if (status >= 300) throw errors.unavailable('UPLOAD_FAILED', `The artifact upload answered ${status}.`);
}

type Deployment = z.infer<typeof output>;

export async function deployTool(ctx: CallContext, args: Record<string, unknown>): Promise<ToolResult> {
  const parsed = input.safeParse(args);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    return toolError('VALIDATION_ERROR', `${i.path.join('.') || 'arguments'}: ${i.message}.`);
  }
  const { projectSlug, files, waitSeconds = DEFAULT_WAIT_SEC } = parsed.data;
  const artifact = await pack(checkFiles(files));
  const created = await invokeFn(ctx, 'createDeploymentForCli', { projectSlug });
  if ('content' in created) return created;
  const c = created.ok as Created;
  await upload(ctx, c, artifact);
  const started = await invokeFn(ctx, 'startDeploymentForCli', { deploymentId: c.deploymentId });
  if ('content' in started) return started;
  let d = started.ok as Deployment;
  const deadline = Date.now() + waitSeconds * 1000;
  while (!['live', 'failed', 'superseded'].includes(d.status) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    const got = await invokeFn(ctx, 'getDeploymentForCli', { deploymentId: c.deploymentId });
    if ('content' in got) return got;
    d = got.ok as Deployment;
  }
  const view = {
    deploymentId: c.deploymentId,
    status: d.status,
    url: d.url,
    ...(d.errorMessage ? { errorMessage: d.errorMessage } : {}),
  };
  if (d.status === 'failed') {
    return toolError('DEPLOYMENT_FAILED', d.errorMessage ?? 'The deployment failed.', view);
  }
  const result = okResult(view, false);
  if (d.status !== 'live') {
    result.content.push({
      type: 'text',
      text: `Still ${d.status}; follow it with getDeploymentForCli { "deploymentId": "${c.deploymentId}" }.`,
    });
  } else result.content.push({ type: 'text', text: `Live at ${d.url}` });
  return result;
}
