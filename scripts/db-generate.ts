// Regenerates each area's migrations from its drizzle tables: `npm run db:generate [area] [-- --name x]`.
// drizzle-kit's --schema flag takes one path (a second replaces the first), and a set may span several
// files (`platform`: identity's account tables and orgs' tables), so each set gets a config file of its own.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrationSets } from '../src/areas/index.ts';

const only = process.argv[2] && !process.argv[2].startsWith('-') ? process.argv[2] : undefined;
const extra = process.argv.slice(only ? 3 : 2);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-db-generate-'));
try {
  for (const set of migrationSets) {
    if (only && set.area !== only) continue;
    const config = path.join(tmp, `${set.area}.config.mjs`);
    // Paths relative to the repository root, where drizzle-kit runs (it prefixes `out` with './').
    const settings = { dialect: 'postgresql', schema: [...set.schema], out: `migrations/${set.area}` };
    fs.writeFileSync(config, `export default ${JSON.stringify(settings)};\n`);
    console.log(`== ${set.area}`);
    execFileSync('drizzle-kit', ['generate', '--config', config, ...extra], { stdio: 'inherit' });
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
