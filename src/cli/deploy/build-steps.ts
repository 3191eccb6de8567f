import { bar } from './upload.ts';

// The steps `pier deploy` shows while a deployment goes live, read from the deployment's own log lines
// (the build announces each npm step with "> npm …", the supervisor each start with "starting deployment")
// and from its status. An artifact that brings node_modules skips install, build and prune.

export const STEPS = ['upload', 'npm ci', 'build', 'prune', 'start', 'healthy'] as const;
export type Step = (typeof STEPS)[number];

/** The step a log line of the deployment says it has reached, or null. */
export function stepOfLine(line: string): Step | null {
  if (line.startsWith('> npm ci')) return 'npm ci';
  // pnpm apps: "> npm exec --yes pnpm@<version> -- install …" and "… -- prune --prod".
  if (line.startsWith('> npm exec --yes pnpm@')) return line.includes(' -- prune') ? 'prune' : 'npm ci';
  if (line.startsWith('> npm run build')) return 'build';
  if (line.startsWith('> npm prune')) return 'prune';
  if (line.startsWith('starting deployment ')) return 'start';
  return null;
}

/** `[############............] 3/6 build` */
export function stepLine(step: Step): string {
  const n = STEPS.indexOf(step) + 1;
  return `${bar(n / STEPS.length)} ${n}/${STEPS.length} ${step}`;
}
