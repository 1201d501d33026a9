// Opens a .pst with DuckDB as docs/format.md shows and prints, as JSON,
// the rows DuckDB counts in every Parquet file the manifest names (the
// record tables, the index and the dictionaries), the Parquet files of the
// directory, and the result of every statement of the SQL block of
// docs/format.md's "Querying with DuckDB", read from the page itself, with
// 'run.pst/ replaced by the trace's path: what the page shows is what
// runs. Usage: node pst-duckdb.cjs RUN.pst FORMAT.md (with NODE_PATH
// naming a node_modules that holds @duckdb/node-api). cmd/parscope's
// TestPstOpensInDuckDB runs it and checks every number.
const fs = require('fs');
const path = require('path');
const { DuckDBInstance } = require('@duckdb/node-api');

// docStatements returns the statements of the first ```sql block after
// the heading "## Querying with DuckDB" of the page, each with its
// leading comment.
function docStatements(page) {
  const text = fs.readFileSync(page, 'utf8');
  const at = text.indexOf('\n## Querying with DuckDB\n');
  const m = at < 0 ? null : /```sql\n([\s\S]*?)```/.exec(text.slice(at));
  if (!m) {
    throw new Error(`${page}: no sql block under "## Querying with DuckDB"`);
  }
  return m[1].split(/;\s*\n/).map((s) => s.trim()).filter((s) => s !== '').map((s) => {
    const lines = s.split('\n');
    const comment = lines.filter((l) => l.startsWith('--')).map((l) => l.replace(/^--\s*/, '')).join(' ');
    return { comment, sql: lines.filter((l) => !l.startsWith('--')).join('\n') + ';' };
  });
}

async function main() {
  const [pst, page] = process.argv.slice(2);
  if (!pst || !page) {
    throw new Error('usage: node pst-duckdb.cjs RUN.pst FORMAT.md');
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(pst, 'manifest.json'), 'utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const out = {
    duckdb: (await rows('SELECT version() AS v'))[0].v,
    rows: {},
    parquet: fs.readdirSync(pst).filter((f) => f.endsWith('.parquet')).sort(),
    queries: [],
  };
  for (const list of [manifest.tables, manifest.files || {}]) {
    for (const name of Object.keys(list).sort()) {
      const r = await rows(`SELECT count(*) AS n FROM '${pst}/${list[name].file}'`);
      out.rows[name] = Number(r[0].n);
    }
  }
  for (const st of docStatements(page)) {
    const sql = st.sql.replaceAll("'run.pst/", `'${pst}/`);
    out.queries.push({ comment: st.comment, rows: await rows(sql) });
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error('pst-duckdb:', e.message);
  process.exit(1);
});
