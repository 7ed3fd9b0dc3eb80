// ort_tts.js - the ONNX Runtime side of bench/compare_tts.sh: times the exported whole Kokoro
// (tools/kokoro_onnx_export.py) on the shared lines, one line per run() as Kokoro's ONNX examples
// call it, and writes the audio; it must not export nor prepare inputs (tts.py does).
//
// usage: node ort_tts.js --model M.onnx --inputs inputs.json --threads N --json OUT.json --audio OUT.f32
// Session creation is outside the timed span. ORT's default CPU execution provider, all graph
// optimisations, intra-op threads N, inter-op 1, sequential.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
    const a = {};
    for (let i = 2; i + 1 < argv.length; i += 2) {
        a[argv[i].replace(/^--/, '')] = argv[i + 1];
    }
    for (const k of ['model', 'inputs', 'threads', 'json', 'audio']) {
        if (a[k] === undefined) {
            throw new Error(`missing --${k}`);
        }
    }
    a.threads = Number(a.threads);
    return a;
}

async function main() {
    const a = parseArgs(process.argv);
    const lines = JSON.parse(fs.readFileSync(a.inputs, 'utf8'));
    const session = await ort.InferenceSession.create(a.model, {
        executionProviders: ['cpu'], intraOpNumThreads: a.threads, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: 'all',
    });
    const feeds = lines.map((ln) => ({
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ln.ids.map(BigInt)), [1, ln.ids.length]),
        style: new ort.Tensor('float32', Float32Array.from(ln.style), [1, 256]),
        speed: new ort.Tensor('float32', Float32Array.from([1]), [1]),
    }));
    const audio = [];
    const start = process.hrtime.bigint();
    for (const f of feeds) {
        const out = await session.run(f);
        audio.push(Float32Array.from(out.waveform.data));
    }
    const wall = Number(process.hrtime.bigint() - start) / 1e9;
    const bytes = Buffer.concat(audio.map((x) => Buffer.from(x.buffer)));
    fs.writeFileSync(a.audio, bytes);
    fs.writeFileSync(a.json, JSON.stringify({
        engine: 'onnxruntime', threads: a.threads, wall_s: wall, samples: audio.map((x) => x.length),
        onnxruntime: require('onnxruntime-node/package.json').version,
    }));
}

main().catch((e) => {
    console.error(`ort_tts.js: ${e.message}`);
    process.exit(1);
});
