// DuckDB side of scripts/bench-peers (run with NODE_PATH naming a
// node_modules that holds @duckdb/node-api). Three tasks, each what a user
// would run instead of parscope:
//
//   node bench-peers-duckdb.cjs parquet TEXT OUT.parquet THREADS
//     converts a "time block pid" text trace (scripts/gengomez) to a
//     zstd-compressed Parquet file and prints the number of rows;
//   node bench-peers-duckdb.cjs occupancy-text TRACE.parquet THREADS
//     the same aggregate over the Parquet file the parquet task wrote
//     (one run; columns t, block, pid);
//   node bench-peers-duckdb.cjs occupancy RUN.pst THREADS
//     the occupancy-style aggregate over the .pst's states table: the time
//     each process spends in each state (a state lasts until the process's
//     next state record), summed per run and state, and prints the groups.
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const [task, ...args] = process.argv.slice(2);
  const threads = Number(args[args.length - 1]) || 2;
  const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const con = await db.connect();
  const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const q = (s) => `'${s.replace(/'/g, "''")}'`;
  if (task === 'parquet' && args.length === 3) {
    const [text, out] = args;
    const r = await rows(`COPY (SELECT * FROM read_csv(${q(text)}, delim = ' ', header = false,
  columns = {'t': 'BIGINT', 'block': 'INTEGER', 'pid': 'INTEGER'}))
TO ${q(out)} (FORMAT parquet, COMPRESSION zstd)`);
    console.log(JSON.stringify({ rows: r.length ? Number(Object.values(r[0])[0]) : null }));
  } else if (task === 'occupancy-text' && args.length === 2) {
    const r = await rows(`SELECT block AS state, count(*) AS entries, sum(d) AS time FROM (
  SELECT block, lead(t) OVER (PARTITION BY pid ORDER BY t) - t AS d FROM ${q(args[0])})
GROUP BY ALL ORDER BY ALL`);
    console.log(JSON.stringify({ groups: r.length, rows: r }));
  } else if (task === 'occupancy' && args.length === 2) {
    const states = `${args[0]}/states.parquet`;
    const r = await rows(`SELECT run, state, count(*) AS entries, sum(d) AS time FROM (
  SELECT run, state, lead(t) OVER (PARTITION BY run, proc ORDER BY t) - t AS d FROM ${q(states)})
GROUP BY ALL ORDER BY ALL`);
    console.log(JSON.stringify({ groups: r.length, rows: r }));
  } else {
    throw new Error('usage: node bench-peers-duckdb.cjs parquet TEXT OUT.parquet THREADS | occupancy-text TRACE.parquet THREADS | occupancy RUN.pst THREADS');
  }
}

main().catch((e) => {
  console.error('bench-peers-duckdb:', e.message);
  process.exit(1);
});
