import type { Db } from '../src/core/db/client.ts';

/** The same database, recording the text of every query and exec sent through it (to assert "nothing"). */
export function spyDb(db: Db): { db: Db; sent: string[] } {
  const sent: string[] = [];
  const spy: Db = {
    ...db,
    query: (text, params) => {
      sent.push(text);
      return db.query(text, params);
    },
    exec: (text) => {
      sent.push(text);
      return db.exec(text);
    },
  };
  return { db: spy, sent };
}
