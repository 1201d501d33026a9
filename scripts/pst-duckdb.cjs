// Opens a .pst with DuckDB exactly as docs/format.md shows and prints, as
// JSON, the rows of every Parquet file in it and the results of the two
// queries of "Querying with DuckDB". Usage: node pst-duckdb.cjs RUN.pst
// (with NODE_PATH naming a node_modules that holds @duckdb/node-api).
// cmd/parscope's TestPstOpensInDuckDB runs it and checks every number.
const fs = require('fs');
const path = require('path');
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const pst = process.argv[2];
  if (!pst) {
    throw new Error('usage: node pst-duckdb.cjs RUN.pst');
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(pst, 'manifest.json'), 'utf8'));
  const unit = manifest.time_unit_ns;
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const out = { duckdb: (await rows('SELECT version() AS v'))[0].v, rows: {} };
  for (const f of fs.readdirSync(pst).filter((f) => f.endsWith('.parquet')).sort()) {
    const r = await rows(`SELECT count(*) AS n FROM '${pst}/${f}'`);
    out.rows[f] = Number(r[0].n);
  }
  // The queries of docs/format.md, 'run.pst' replaced by the trace and
  // 1000 by the manifest's time_unit_ns, as the document says.
  out.states = await rows(`SELECT s.run, s.proc, s.t * ${unit} / 1e9 AS seconds, n.name
FROM '${pst}/states.parquet' s JOIN '${pst}/state_names.parquet' n ON s.state = n.id
ORDER BY s.run, s.t, s.proc;`);
  out.pairs = await rows(`SELECT proc AS src, peer AS dst, sum(bytes) FROM '${pst}/messages.parquet'
WHERE kind = 4 GROUP BY ALL ORDER BY ALL;`);
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error('pst-duckdb:', e.message);
  process.exit(1);
});
