import { execFileSync } from 'node:child_process';

// The browser tests need web/dist; build it once per run, and only when its sources changed. The build runs
// in its own process: inside vitest, NODE_ENV=test would give Vite's development JSX transform.
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build-web.ts'], {
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
