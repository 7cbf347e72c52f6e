// ANN anchor for `kairos bench ann`: LanceDB's IVF_PQ index on the same vectors as Kairos.
//
// The harness (internal/hnsw/annbench) runs this script with node as child processes, one to
// build and one to serve, with the same arguments and output lines as anchor_bench.py (see its
// doc string): `version`, `build --data DIR --index DIR --threads T --params JSON` and
// `serve --data DIR --index DIR --sweep JSON --repeat R`. It needs @lancedb/lancedb 0.31.0 and
// apache-arrow, which `make lancedb` installs (npm ci of internal/hnsw/bench/lancedb) under the
// user cache; the harness points NODE_PATH there. It exits 3 when they cannot be loaded.
//
// Build: a LanceDB dataset of (id int32, vector float32[dim]) added in chunks read from
// base.f32, then an IVF_PQ index with the dot distance (the vectors are unit length, so this is
// cosine); params num_partitions and num_sub_vectors (0: LanceDB's defaults, the square root of
// the rows and dim/16). Serve: one query at a time through the public query API (vectorSearch,
// nprobes, refine_factor), awaited before the next: LanceDB has no batched vector search, and
// the harness pins the process to one CPU. Sweep keys: nprobes, refine_factor (0: none).
"use strict";

const fs = require("fs");
const path = require("path");

const CHUNK = 65536; // base vectors read and added at a time

function fail(msg, code = 1) {
  process.stderr.write(`anchor_lancedb: ${msg}\n`);
  process.exit(code);
}

function load() {
  try {
    return { lancedb: require("@lancedb/lancedb"), arrow: require("apache-arrow") };
  } catch (e) {
    fail(`${e.message.split("\n")[0]} (make lancedb installs @lancedb/lancedb 0.31.0; NODE_PATH=${process.env.NODE_PATH || ""})`, 3);
  }
}

function version() {
  const main = require.resolve("@lancedb/lancedb");
  let dir = path.dirname(main);
  while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
  return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
}

function args(argv) {
  const out = { phase: argv[0], threads: 0, params: "{}", sweep: "[]", repeat: 3 };
  for (let i = 1; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (!(k in out) && !["data", "index", "engine"].includes(k)) fail(`unknown flag ${argv[i]}`, 2);
    out[k] = argv[i + 1];
  }
  return out;
}

function readMeta(dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8"));
  const size = fs.statSync(path.join(dir, "base.f32")).size;
  if (size !== meta.n * meta.dim * 4) fail(`${dir}/base.f32: ${size} bytes, meta.json says ${meta.n} x ${meta.dim} float32`);
  return meta;
}

// table makes an Arrow table of rows [first, first+rows) from their float32 values.
function table(arrow, dim, first, f32) {
  const rows = f32.length / dim;
  const ids = new Int32Array(rows);
  for (let i = 0; i < rows; i++) ids[i] = first + i;
  const child = arrow.makeData({ type: new arrow.Float32(), length: f32.length, data: f32 });
  const vecType = new arrow.FixedSizeList(dim, new arrow.Field("item", new arrow.Float32(), true));
  return new arrow.Table({
    id: arrow.makeVector(arrow.makeData({ type: new arrow.Int32(), length: rows, data: ids })),
    vector: arrow.makeVector(arrow.makeData({ type: vecType, length: rows, nullCount: 0, child })),
  });
}

function vmRSS() {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

function cpuSeconds() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function build(lib, a) {
  const { lancedb, arrow } = lib;
  const meta = readMeta(a.data);
  const params = JSON.parse(a.params);
  const { n, dim } = meta;
  const t0 = performance.now();
  const db = await lancedb.connect(a.index);
  const fd = fs.openSync(path.join(a.data, "base.f32"), "r");
  let tbl = null;
  for (let first = 0; first < n; first += CHUNK) {
    const rows = Math.min(CHUNK, n - first);
    const buf = Buffer.alloc(rows * dim * 4);
    if (fs.readSync(fd, buf, 0, buf.length, first * dim * 4) !== buf.length) fail(`${a.data}/base.f32: short read at row ${first}`);
    const t = table(arrow, dim, first, new Float32Array(buf.buffer, buf.byteOffset, rows * dim));
    if (tbl === null) tbl = await db.createTable("vectors", t, { mode: "overwrite" });
    else await tbl.add(t);
    const el = (performance.now() - t0) / 1000;
    process.stderr.write(`  lancedb: added ${first + rows}/${n} (${Math.round((first + rows) / el)}/s)\n`);
  }
  fs.closeSync(fd);
  const opts = { distanceType: "dot" };
  if (params.num_partitions) opts.numPartitions = params.num_partitions;
  if (params.num_sub_vectors) opts.numSubVectors = params.num_sub_vectors;
  process.stderr.write(`  lancedb: training IVF_PQ ${JSON.stringify(opts)}\n`);
  await tbl.createIndex("vector", { config: lancedb.Index.ivfPq(opts) });
  const build_s = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ type: "build", engine: "lancedb-ivfpq", build_s }));
}

async function serve(lib, a) {
  const { lancedb } = lib;
  const meta = readMeta(a.data);
  const { dim, k } = meta;
  const nq = meta.queries;
  const qb = fs.readFileSync(path.join(a.data, "queries.f32"));
  if (qb.length !== nq * dim * 4) fail(`${a.data}/queries.f32: ${qb.length} bytes, meta.json says ${nq} x ${dim}`);
  const qf = new Float32Array(qb.buffer, qb.byteOffset, nq * dim);
  const queries = [];
  for (let i = 0; i < nq; i++) queries.push(Array.from(qf.subarray(i * dim, (i + 1) * dim)));
  const t0 = performance.now();
  const db = await lancedb.connect(a.index);
  const tbl = await db.openTable("vectors");
  const load_s = (performance.now() - t0) / 1000;
  const run = async (point) => {
    const ids = [];
    for (const q of queries) {
      let s = tbl.vectorSearch(q).distanceType("dot").limit(k).select(["id", "_distance"]);
      if (point.nprobes) s = s.nprobes(point.nprobes);
      if (point.refine_factor) s = s.refineFactor(point.refine_factor);
      const rows = await s.toArray();
      ids.push(rows.map((r) => r.id));
    }
    return ids;
  };
  for (const point of JSON.parse(a.sweep)) {
    let best = Infinity, bestCPU = 0, ids = null;
    for (let r = 0; r < Math.max(Number(a.repeat), 1); r++) {
      const c0 = cpuSeconds(), w0 = performance.now();
      ids = await run(point);
      const el = (performance.now() - w0) / 1000, cpu = cpuSeconds() - c0;
      if (el < best) [best, bestCPU] = [el, cpu];
    }
    console.log(JSON.stringify({ type: "point", point, seconds: best, cpu_s: bestCPU, ids }));
  }
  console.log(JSON.stringify({ type: "serve", load_s, rss_bytes: vmRSS() }));
}

async function main() {
  const a = args(process.argv.slice(2));
  const lib = load();
  if (a.phase === "version") {
    console.log(JSON.stringify({ type: "version", version: version() }));
    return;
  }
  if (!a.data || !a.index) fail(`${a.phase} needs --data and --index`, 2);
  if (a.phase === "build") await build(lib, a);
  else if (a.phase === "serve") await serve(lib, a);
  else fail(`unknown phase ${a.phase}: version, build or serve`, 2);
}

main().catch((e) => fail(e.stack || String(e)));
