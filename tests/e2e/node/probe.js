// node-postgres (`pg`, with `pg-cursor` and `pg-copy-streams`) against one server: every step's
// outcome as one JSON line, for tests/tests/node_postgres.rs to compare with PostgreSQL's.
// Usage: node probe.js 'postgresql://user:password@127.0.0.1:port/lake'
'use strict';
const { Client, Pool } = require('pg');
const Cursor = require('pg-cursor');
const { from: copyFrom, to: copyTo } = require('pg-copy-streams');
const { pipeline } = require('stream/promises');
const { Readable, Writable } = require('stream');

const url = process.argv[2];

// What a program can read of an error: its fields, without the server's source location
// (file, line, routine), which only PostgreSQL's own build has.
function error(e) {
  if (!e || !e.code) return { clientError: String(e && e.message) };
  const out = {};
  for (const k of ['severity', 'code', 'message', 'detail', 'hint', 'position', 'schema',
    'table', 'column', 'constraint', 'where']) {
    if (e[k] !== undefined) out[k] = e[k];
  }
  return { error: out };
}

function result(r) {
  return {
    command: r.command,
    rowCount: r.rowCount,
    fields: r.fields.map((f) => [f.name, f.dataTypeID, f.dataTypeModifier, f.format]),
    rows: r.rows,
  };
}

// JSON of values node-postgres parses into objects: Dates as ISO text, Buffers as hex.
function plain(v) {
  return JSON.parse(JSON.stringify(v, (k, x) => {
    if (x && x.type === 'Buffer' && Array.isArray(x.data)) return '\\x' + Buffer.from(x.data).toString('hex');
    return x;
  }));
}

async function main() {
  const steps = [];
  const client = new Client({ connectionString: url });
  const notices = [];
  client.on('notice', (n) => notices.push([n.code, n.message]));
  await client.connect();
  async function step(name, f) {
    let out;
    try {
      out = await f();
    } catch (e) {
      out = error(e);
    }
    steps.push([name, plain(out)]);
  }

  await step('select 1', async () => result(await client.query('SELECT 1 AS x, $1::text AS y', ['a'])));
  await step('typmods of casts', async () => result(await client.query(
    "SELECT 'a'::char(3) AS a, 'b'::varchar(4) AS b, 1.5::numeric(5,2) AS n, " +
    "'2020-01-01 10:00:00.123+00'::timestamptz(1) AS t, ARRAY['x'::varchar(3)] AS arr, " +
    "CAST('a' AS character varying(9)) AS v9, 'c'::varchar AS plain")));
  await step('create', async () => result(await client.query(
    'CREATE TABLE np (id int8 PRIMARY KEY, a int2, b int4, c float4, d float8, e numeric(10,2), ' +
    'f text, g varchar(10), h bool, i bytea, j date, k timestamp, l timestamptz, m uuid, n json, ' +
    'o int4[], p text[], q interval)')));
  await step('notices', async () => {
    await client.query('DROP TABLE IF EXISTS np_nosuch');
    return notices.splice(0);
  });
  await step('insert with parameters', async () => result(await client.query(
    'INSERT INTO np VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18) RETURNING id, e, l',
    [1, 7, -3, 1.5, 2.25, '12.345', 'héllo', 'v', true, Buffer.from([0, 255, 10]), '2024-02-29',
      '2024-01-02 03:04:05.123456', new Date(Date.UTC(2023, 10, 14, 22, 13, 20, 654)),
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', { k: [1, 2], s: 'x"y' }, [1, null, 3],
      ['x', 'y z', '{q}', 'NULL', null], '1 day 02:03:04'])));
  await step('insert nulls', async () => result(await client.query('INSERT INTO np(id) VALUES ($1)', [2])));
  await step('select typed values', async () => result(await client.query('SELECT * FROM np ORDER BY id')));
  await step('rows as arrays', async () => result(await client.query({
    text: 'SELECT id, f, o FROM np WHERE id = $1', values: ['1'], rowMode: 'array' })));
  await step('named prepared statement', async () => {
    const q = { name: 'np_by_id', text: 'SELECT id, g FROM np WHERE id = $1' };
    const a = await client.query({ ...q, values: [1] });
    const b = await client.query({ ...q, values: [2] });
    return [result(a), result(b)];
  });
  await step('several statements', async () => (await client.query(
    'SELECT 1 AS one; UPDATE np SET a = 1 WHERE id = 2; SELECT count(*) FROM np')).map(result));
  for (const [name, sql, values] of [
    ['syntax error', 'SELEC 1', undefined],
    ['undefined table', 'SELECT * FROM np_nosuch', undefined],
    ['undefined column', 'SELECT nosuch FROM np WHERE id = $1', [1]],
    ['duplicate key', 'INSERT INTO np(id) VALUES ($1)', [1]],
    ['null in a not-null column', 'INSERT INTO np(id) VALUES (NULL)', undefined],
    ['bad parameter', 'SELECT * FROM np WHERE id = $1', ['abc']],
    ['division by zero', 'SELECT 1/0', undefined],
    ['value too long', 'INSERT INTO np(id, g) VALUES ($1, $2)', [9, 'abcdefghijkl']],
    ['too few parameters', 'SELECT $1::int + $2::int', [1]],
  ]) {
    await step(name, async () => result(await client.query(sql, values)));
  }
  await step('transaction', async () => {
    await client.query('BEGIN');
    await client.query('INSERT INTO np(id) VALUES (10)');
    const dup = await client.query('INSERT INTO np(id) VALUES (10)').catch(error);
    const aborted = await client.query('SELECT 1').catch(error);
    const end = await client.query('COMMIT');
    const n = await client.query('SELECT count(*) FROM np');
    return [dup, aborted, end.command, n.rows];
  });
  await step('cursor read in parts', async () => {
    const cursor = client.query(new Cursor('SELECT id FROM np WHERE id < $1 ORDER BY id', [100]));
    const parts = [];
    for (;;) {
      const rows = await cursor.read(1);
      parts.push(rows);
      if (rows.length === 0) break;
    }
    await cursor.close();
    return parts;
  });
  await step('cursor in a transaction', async () => {
    await client.query('BEGIN');
    const cursor = client.query(new Cursor('SELECT id FROM np ORDER BY id'));
    const a = await cursor.read(1);
    const b = await cursor.read(5);
    const c = await cursor.read(5);
    await cursor.close();
    await client.query('COMMIT');
    return [a, b, c];
  });
  await step('COPY in', async () => {
    const stream = client.query(copyFrom('COPY np(id, f, o) FROM STDIN'));
    await pipeline(Readable.from(['100\tr100\t{1,2}\n101\t\\N\t{}\n', '102\ttab\\there\t{3}\n']), stream);
    return stream.rowCount;
  });
  await step('COPY out', async () => {
    const chunks = [];
    const stream = client.query(copyTo('COPY (SELECT id, f, o FROM np WHERE id >= 100 ORDER BY id) TO STDOUT'));
    await pipeline(stream, new Writable({ write(c, _e, done) { chunks.push(c.toString()); done(); } }));
    return chunks.join('');
  });
  await step('COPY in with a bad line', async () => {
    const stream = client.query(copyFrom('COPY np(id) FROM STDIN'));
    await pipeline(Readable.from(['1000\n', 'xyz\n']), stream);
    return stream.rowCount;
  });
  await step('after COPY', async () => (await client.query('SELECT count(*) FROM np')).rows);
  await step('pool', async () => {
    const pool = new Pool({ connectionString: url, max: 3 });
    const rs = await Promise.all([1, 2, 3, 4, 5].map((i) =>
      pool.query('SELECT $1::int * 2 AS v, pg_backend_pid() > 0 AS pid', [i])));
    await pool.end();
    return rs.map((r) => r.rows);
  });
  await step('many rows', async () => {
    const r = await client.query('SELECT g, md5(g::text) FROM generate_series(1, 20000) g');
    return [r.rowCount, r.rows[19999]];
  });
  await step('empty query', async () => {
    const r = await client.query('');
    return [r.command, r.rowCount, r.rows];
  });
  await client.end();
  for (const [name, out] of steps) console.log(JSON.stringify([name, out]));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
