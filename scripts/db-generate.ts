// Regenerates each area's migrations from its drizzle tables: `npm run db:generate [area] [-- --name x]`.
import { execFileSync } from 'node:child_process';
import { migrationSets } from '../src/areas/index.ts';

const only = process.argv[2] && !process.argv[2].startsWith('-') ? process.argv[2] : undefined;
const extra = process.argv.slice(only ? 3 : 2);
for (const set of migrationSets) {
  if (only && set.area !== only) continue;
  const args = ['generate', '--dialect', 'postgresql', '--out', `migrations/${set.area}`, ...extra];
  for (const s of set.schema) args.push('--schema', s);
  console.log(`== ${set.area}`);
  execFileSync('drizzle-kit', args, { stdio: 'inherit' });
}
