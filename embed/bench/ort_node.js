// Reference for the embedding benchmark: onnxruntime-node on the same model and the same token
// ids Kairos produced (embed/bench/prep writes them), batched the way a plain Node pipeline
// does it: consecutive texts in input order, each batch padded to its longest text. Mean
// pooling with the attention mask and L2 normalisation are done here too, so both sides do the
// same work after the model.
//
// usage: node ort_node.js MODEL.onnx IDS.json THREADS BATCH
// prints one JSON line: {"texts","tokens","seconds","texts_per_s","tokens_per_s"}
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, idsFile, threads, batchArg] = process.argv.slice(2);
  const seqs = JSON.parse(fs.readFileSync(idsFile, 'utf8'));
  const batch = parseInt(batchArg, 10);
  const sess = await ort.InferenceSession.create(model, {
    intraOpNumThreads: parseInt(threads, 10),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const names = new Set(sess.inputNames);
  let tokens = 0;
  let checksum = 0;
  const t0 = process.hrtime.bigint();
  for (let s = 0; s < seqs.length; s += batch) {
    const rows = seqs.slice(s, s + batch);
    const L = Math.max(...rows.map((r) => r.length));
    const n = rows.length;
    const ids = new BigInt64Array(n * L);
    const mask = new BigInt64Array(n * L);
    const types = new BigInt64Array(n * L);
    rows.forEach((r, i) => {
      tokens += r.length;
      for (let j = 0; j < r.length; j++) {
        ids[i * L + j] = BigInt(r[j]);
        mask[i * L + j] = 1n;
      }
    });
    const feeds = {};
    const dims = [n, L];
    if (names.has('input_ids')) feeds.input_ids = new ort.Tensor('int64', ids, dims);
    if (names.has('attention_mask')) feeds.attention_mask = new ort.Tensor('int64', mask, dims);
    if (names.has('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', types, dims);
    const out = await sess.run(feeds);
    const h = out.last_hidden_state;
    const d = h.dims[2];
    const data = h.data;
    rows.forEach((r, i) => {
      const v = new Float64Array(d);
      for (let j = 0; j < r.length; j++) {
        const base = (i * L + j) * d;
        for (let k = 0; k < d; k++) v[k] += data[base + k];
      }
      let norm = 0;
      for (let k = 0; k < d; k++) {
        v[k] /= r.length;
        norm += v[k] * v[k];
      }
      checksum += v[0] / Math.sqrt(norm);
    });
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({
    texts: seqs.length, tokens, seconds,
    texts_per_s: seqs.length / seconds, tokens_per_s: tokens / seconds, checksum,
  }));
}

main().catch((e) => { console.error(e); process.exit(1); });
