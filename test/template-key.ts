import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Names a migrated test database template: it changes with the migrations, the migrator or the drivers. */
export function templateKey(): string {
  const h = crypto.createHash('sha256');
  const walk = (dir: string) => {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(path.relative(root, p)).update(fs.readFileSync(p));
    }
  };
  walk(path.join(root, 'migrations'));
  for (const f of [
    'src/core/db/migrate.ts',
    'src/core/db/migration-sets.ts',
    'src/core/db/client.ts',
    'src/areas/index.ts',
    'test/queue-schema.ts',
  ])
    h.update(fs.readFileSync(path.join(root, f)));
  for (const pkg of ['@electric-sql/pglite', '@electric-sql/pglite-pgvector', 'drizzle-orm', 'pg', 'pg-boss'])
    h.update(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json')));
  return h.digest('hex').slice(0, 16);
}
