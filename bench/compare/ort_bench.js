// ort_bench.js - the ONNX Runtime side of bench/compare.sh: times the exported encoder on the shared
// workloads (padded batches in input order, and equal-length batches with no padding) and writes the
// agreement batch's features; it must not build workloads or models (baselines.py does).
//
// usage: node ort_bench.js --model M.onnx --workloads W.json --threads 1,2 --runs N --json OUT
//                          [--check-out F32.bin --check-sequences 8]
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
    const a = { checkSequences: 8 };
    for (let i = 2; i + 1 < argv.length; i += 2) {
        const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
        a[key] = argv[i + 1];
    }
    for (const k of ['model', 'workloads', 'threads', 'runs', 'json']) {
        if (a[k] === undefined) {
            throw new Error(`missing --${k}`);
        }
    }
    a.threads = a.threads.split(',').map(Number);
    a.runs = Number(a.runs);
    a.checkSequences = Number(a.checkSequences);
    return a;
}

// ids, attention_mask int64 [B,T_max] of one batch, right-padded with id 0 and mask 0.
function paddedFeeds(seqs, members) {
    const tMax = Math.max(...members.map((i) => seqs[i].length));
    const ids = new BigInt64Array(members.length * tMax);
    const mask = new BigInt64Array(members.length * tMax);
    members.forEach((i, row) => {
        seqs[i].forEach((id, t) => {
            ids[row * tMax + t] = BigInt(id);
            mask[row * tMax + t] = 1n;
        });
    });
    const dims = [members.length, tMax];
    return { ids: new ort.Tensor('int64', ids, dims), attention_mask: new ort.Tensor('int64', mask, dims) };
}

async function session(model, threads) {
    return ort.InferenceSession.create(model, {
        intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
        graphOptimizationLevel: 'all',
    });
}

async function timePass(sess, feeds) {
    const t0 = process.hrtime.bigint();
    for (const f of feeds) {
        await sess.run(f);
    }
    return Number(process.hrtime.bigint() - t0) * 1e-9;
}

function median(v) {
    const s = [...v].sort((x, y) => x - y);
    const n = s.length;
    return n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

async function measure(sess, w, batching, threads, runs) {
    const plan = w.plans[batching];
    const feeds = plan.map((m) => paddedFeeds(w.seqs, m));
    const tokens = w.seqs.reduce((n, s) => n + s.length, 0);
    const positions = plan.reduce((n, m) => n + m.length * Math.max(...m.map((i) => w.seqs[i].length)), 0);
    await timePass(sess, feeds); // warm-up, as ckbench does
    const rates = [];
    for (let r = 0; r < runs; r++) {
        rates.push(tokens / await timePass(sess, feeds));
    }
    const med = median(rates);
    process.stderr.write(`onnxruntime ${batching} ${w.name} threads ${threads}: ${med.toFixed(0)} tokens/s\n`);
    return {
        engine: 'onnxruntime', batching, workload: w.name, threads, sequences: w.seqs.length, tokens,
        padded_positions: positions, runs, tokens_per_s: rates, tokens_per_s_median: med,
        min: Math.min(...rates), max: Math.max(...rates),
    };
}

// Equal-length plans of fixed-length workloads are the padded plans (nothing to pad): timed once.
function batchings(w) {
    const same = JSON.stringify(w.plans.padded) === JSON.stringify(w.plans.equal);
    return same ? ['padded'] : ['padded', 'equal'];
}

async function main() {
    const a = parseArgs(process.argv);
    const loads = JSON.parse(fs.readFileSync(a.workloads, 'utf8'));
    const results = [];
    for (const threads of a.threads) {
        const sess = await session(a.model, threads);
        for (const w of loads) {
            for (const b of batchings(w)) {
                results.push(await measure(sess, w, b, threads, a.runs));
            }
        }
    }
    if (a.checkOut !== undefined) {
        const corpus = loads.find((w) => w.name === 'corpus');
        const members = [...Array(Math.min(a.checkSequences, corpus.seqs.length)).keys()];
        const out = await (await session(a.model, 1)).run(paddedFeeds(corpus.seqs, members));
        fs.writeFileSync(a.checkOut, Buffer.from(out.features.data.buffer));
    }
    const doc = { engine: 'onnxruntime', version: ort.env.versions.node, results };
    fs.writeFileSync(a.json, JSON.stringify(doc, null, 1));
}

main().catch((e) => {
    process.stderr.write(`ort_bench: ${e.stack || e}\n`);
    process.exit(1);
});
