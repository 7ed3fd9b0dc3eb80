// ort_bench.js - the ONNX Runtime side of bench/compare.sh: times the exported encoder (FP32) and its
// INT8 twin on the shared workloads (padded batches in input order, and equal-length batches with no
// padding) and writes the agreement batch's features of each; it must not build workloads or models
// (baselines.py does).
//
// usage: node ort_bench.js --models fp32=M.onnx[,int8=Q.onnx] --workloads W.json --threads 1,2
//                          --runs N --json OUT [--check-prefix P --check-sequences 8]
// Each label's check features go to P.<label>.f32. Sessions use ORT's default CPU execution provider,
// which fuses the INT8 chains (DynamicQuantizeMatMul, MatMulIntegerToFloat) and picks its own GEMM
// kernels for the CPU; the models' runs alternate inside each timed run, so their ratio sees the same
// machine.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
    const a = { checkSequences: 8 };
    for (let i = 2; i + 1 < argv.length; i += 2) {
        const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
        a[key] = argv[i + 1];
    }
    for (const k of ['models', 'workloads', 'threads', 'runs', 'json']) {
        if (a[k] === undefined) {
            throw new Error(`missing --${k}`);
        }
    }
    a.models = a.models.split(',').map((m) => {
        const [precision, path] = m.split('=');
        if (!path) {
            throw new Error(`--models: expected label=path, got ${m}`);
        }
        return { precision, path };
    });
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
        executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: 'all',
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

// One result per model: a warm-up pass of each, then `runs` rounds in which every model runs once.
async function measure(sessions, w, batching, threads, runs) {
    const plan = w.plans[batching];
    const feeds = plan.map((m) => paddedFeeds(w.seqs, m));
    const tokens = w.seqs.reduce((n, s) => n + s.length, 0);
    const positions = plan.reduce((n, m) => n + m.length * Math.max(...m.map((i) => w.seqs[i].length)), 0);
    for (const s of sessions) {
        await timePass(s.sess, feeds); // warm-up, as ckbench does
    }
    const rates = sessions.map(() => []);
    for (let r = 0; r < runs; r++) {
        for (const [i, s] of sessions.entries()) {
            rates[i].push(tokens / await timePass(s.sess, feeds));
        }
    }
    return sessions.map((s, i) => {
        const med = median(rates[i]);
        process.stderr.write(`onnxruntime ${s.precision} ${batching} ${w.name} threads ${threads}: `
            + `${med.toFixed(0)} tokens/s\n`);
        return {
            engine: 'onnxruntime', precision: s.precision, batching, workload: w.name, threads,
            sequences: w.seqs.length, tokens, padded_positions: positions, runs, tokens_per_s: rates[i],
            tokens_per_s_median: med, min: Math.min(...rates[i]), max: Math.max(...rates[i]),
        };
    });
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
        const sessions = [];
        for (const m of a.models) {
            sessions.push({ precision: m.precision, sess: await session(m.path, threads) });
        }
        for (const w of loads) {
            for (const b of batchings(w)) {
                results.push(...await measure(sessions, w, b, threads, a.runs));
            }
        }
    }
    if (a.checkPrefix !== undefined) {
        const corpus = loads.find((w) => w.name === 'corpus');
        const members = [...Array(Math.min(a.checkSequences, corpus.seqs.length)).keys()];
        for (const m of a.models) {
            const out = await (await session(m.path, 1)).run(paddedFeeds(corpus.seqs, members));
            fs.writeFileSync(`${a.checkPrefix}.${m.precision}.f32`, Buffer.from(out.features.data.buffer));
        }
    }
    const doc = { engine: 'onnxruntime', version: ort.env.versions.node, results };
    fs.writeFileSync(a.json, JSON.stringify(doc, null, 1));
}

main().catch((e) => {
    process.stderr.write(`ort_bench: ${e.stack || e}\n`);
    process.exit(1);
});
