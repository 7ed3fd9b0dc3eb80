#!/usr/bin/python3
"""kokoro_crosscheck.py - compares tools/kokoro_reference.py, stage by stage, with Kokoro's own modules
(hexgrad/kokoro, fetched by the user, never committed) on the synthetic checkpoint; it must not be
imported by anything else, and it copies no Kokoro code into the repository.

    git -C <kokoro clone> archive dfb907a kokoro | tar -x -C /tmp/kokoro_src
    /usr/bin/python3 tools/kokoro_crosscheck.py --kokoro-src /tmp/kokoro_src [--json OUT]

Shims (SYNTHESIS.md section 5), applied to a temporary copy of kokoro/{model,modules,istftnet,
custom_stft}.py: the parametrized weight_norm import becomes torch.nn.utils.weight_norm (torch 1.13 has no
other), and stub modules stand in for transformers (AlbertModel runs capture_kokoro's ALBERT oracle on
the same synthetic bert weights), huggingface_hub and loguru. The synthetic checkpoint is written as a
kokoro-v1_0.pth-style file ({group: {"module." + key: tensor}}, weight_g/weight_v) and loaded by KModel's
own loader. SineGen's randn_like returns the reference's recorded noise, so both runs see the same draw.
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_kokoro as ck  # noqa: E402
import kokoro_reference as kr  # noqa: E402
import kokoro_weights as kw  # noqa: E402



def stub_modules(weights):
    """transformers / huggingface_hub / loguru stand-ins; AlbertModel is the ALBERT oracle."""
    class AlbertConfig:
        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    class AlbertModel(torch.nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config

        @property
        def device(self):
            return torch.device("cpu")

        def forward(self, input_ids, attention_mask=None):
            h = {}
            ck.encoder(input_ids, attention_mask.long(), weights, lambda n, x: h.setdefault(n, x))
            return types.SimpleNamespace(last_hidden_state=h[ck.CHECKPOINTS[-2]])

    tf = types.ModuleType("transformers")
    tf.AlbertConfig, tf.AlbertModel = AlbertConfig, AlbertModel
    hub = types.ModuleType("huggingface_hub")
    hub.hf_hub_download = lambda **_: (_ for _ in ()).throw(RuntimeError("no download here"))
    lg = types.ModuleType("loguru")
    lg.logger = types.SimpleNamespace(debug=lambda *a, **k: None)
    sys.modules.update({"transformers": tf, "huggingface_hub": hub, "loguru": lg})


def load_kokoro(src, tmp):
    """Copies kokoro/{model,modules,istftnet,custom_stft}.py into tmp with the weight_norm shim; imports."""
    pkg = os.path.join(tmp, "kokoro")
    os.makedirs(pkg)
    open(os.path.join(pkg, "__init__.py"), "w").close()
    for name in ("model.py", "modules.py", "istftnet.py", "custom_stft.py"):
        with open(os.path.join(src, "kokoro", name), encoding="utf-8") as f:
            text = f.read().replace("from torch.nn.utils.parametrizations import weight_norm",
                                    "from torch.nn.utils import weight_norm")
        with open(os.path.join(pkg, name), "w", encoding="utf-8") as f:
            f.write(text)
    sys.path.insert(0, tmp)
    import kokoro.model
    return kokoro.model.KModel


def write_pth(weights, path):
    """The synthetic checkpoint as kokoro-v1_0.pth stores it: {group: {"module." + key: tensor}}."""
    groups = {}
    for name, array in weights.items():
        group, key = name.split(".", 1)
        groups.setdefault(group, {})["module." + key] = torch.from_numpy(array)
    torch.save(groups, path)


def check_keys(model, arrays):
    """Raises unless each group's module state_dict is exactly our key list (same shapes) plus the
    InstanceNorm affines (`*.norm.weight` / `*.norm.bias`), which stay 1/0 as in the real file."""
    for group in ("predictor", "text_encoder", "decoder", "bert_encoder"):
        theirs = {k: list(v.shape) for k, v in getattr(model, group).state_dict().items()
                  if not k.endswith((".norm.weight", ".norm.bias"))}
        ours = {n.split(".", 1)[1]: list(a.shape) for n, a in arrays.items() if n.split(".")[0] == group}
        if theirs != ours:
            raise RuntimeError(f"{group}: keys differ: {sorted(set(theirs) ^ set(ours))[:5]}")
    return "predictor, text_encoder, decoder, bert_encoder: identical keys and shapes"


def hooks(model, rec):
    """Forward hooks that record Kokoro's stage outputs under the reference's stage names."""
    p, d, g = model.predictor, model.decoder, model.decoder.generator
    out = {"t_en": model.text_encoder, "d": p.text_encoder, "dur_logits": p.duration_proj,
           "F0": p.F0_proj, "N": p.N_proj, "dec.F0_conv": d.F0_conv, "dec.N_conv": d.N_conv,
           "dec.encode": d.encode, "dec.asr_res": d.asr_res, "gen.ups.0": g.ups[0],
           "gen.ups.1": g.reflection_pad, "gen.conv_post": g.conv_post,
           "gen.noise_res.0": g.noise_res[0], "gen.noise_res.1": g.noise_res[1]}
    out.update({f"dec.decode.{i}": d.decode[i] for i in range(4)})
    for name, mod in out.items():
        mod.register_forward_hook(lambda m, i, o, n=name: rec.__setitem__(n, o))
    p.lstm.register_forward_hook(lambda m, i, o: rec.__setitem__("dur_lstm", o[0]))
    p.shared.register_forward_hook(
        lambda m, i, o: rec.update(en=i[0].transpose(1, 2), f0n_shared=o[0].transpose(1, 2)))
    d.register_forward_pre_hook(lambda m, i: rec.__setitem__("asr", i[0]))
    g.m_source.register_forward_hook(lambda m, i, o: rec.__setitem__("gen.har_source", o[0].transpose(1, 2)))
    g.noise_convs[0].register_forward_pre_hook(lambda m, i: rec.__setitem__("gen.har", i[0]))


def run_kokoro(model, ids, ref_s, speed, noise, rec):
    """KModel.forward_with_tokens with SineGen's randn_like returning `noise` [600F,9]; other
    randn_like calls (noi_source, unused) keep torch's own draw."""
    real = torch.randn_like

    def randn_like(x, *a, **k):
        return noise[None].clone() if x.shape[-1] == kr.HARMONICS else real(x, *a, **k)

    torch.randn_like = randn_like
    try:
        audio, pred_dur = model.forward_with_tokens(torch.from_numpy(ids).long()[None], ref_s[None], speed)
    finally:
        torch.randn_like = real
    rec.update(audio=audio, pred_dur=pred_dur)


def run_forced(model, ours, rec):
    """Each Kokoro stage fed with the reference's own input to that stage (teacher forcing): the text
    encoder, DurationEncoder, duration LSTM + proj, F0Ntrain on the reference's en, and the decoder
    (with the generator) on the reference's asr, F0 and N; isolates each stage's own difference."""
    ids = ours["ids"].long()[None]
    lengths, mask = torch.tensor([ids.shape[1]]), torch.zeros(1, ids.shape[1], dtype=torch.bool)
    s_dec, s_pro = ours["ref_s"][None, :128], ours["ref_s"][None, 128:]
    model.text_encoder(ids, lengths, mask)
    model.predictor.text_encoder(ours["d_en"][None], s_pro, lengths, mask)
    model.predictor.lstm(ours["d"][None])
    model.predictor.duration_proj(ours["dur_lstm"][None])
    model.predictor.F0Ntrain(ours["en"][None], s_pro)
    real = torch.randn_like

    def randn_like(x, *a, **k):
        return ours["noise"][None].clone() if x.shape[-1] == kr.HARMONICS else real(x, *a, **k)

    torch.randn_like = randn_like
    try:
        rec["audio"] = model.decoder(ours["asr"][None], ours["F0"][None], ours["N"][None], s_dec)
    finally:
        torch.randn_like = real


def compare(ours, theirs):
    """{stage: [max abs, max abs / max |kokoro|]} over the stages both runs recorded."""
    res = {}
    for name, b in theirs.items():
        if isinstance(b, tuple) or name not in ours:
            continue
        a, b = ours[name].double().reshape(-1), b.detach().double().reshape(-1)
        if a.shape != b.shape:
            res[name] = f"shape {list(ours[name].shape)} vs {list(b.shape)}"
            continue
        diff = float((a - b).abs().max())
        res[name] = [float(f"{diff:.3g}"), float(f"{diff / max(float(b.abs().max()), 1e-30):.3g}")]
    if "gen.har" in res and "gen.har" in ours:  # phase channels: count 2*pi wraps, then the wrapped diff
        a, b = ours["gen.har"].double(), theirs["gen.har"].detach().double()[0]
        ph = a[11:] - b[11:]
        wrapped = torch.remainder(ph + math.pi, 2 * math.pi) - math.pi
        res["gen.har.magnitude"] = [float(f"{float((a[:11] - b[:11]).abs().max()):.3g}"), None]
        res["gen.har.phase_mod_2pi"] = [float(f"{float(wrapped.abs().max()):.3g}"), None]
        res["gen.har.phase_wraps"] = [int((ph.abs() > math.pi).sum()), int(ph.numel())]
    return res


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kokoro-src", required=True, help="directory holding kokoro/ (hexgrad/kokoro)")
    parser.add_argument("--json", help="write the per-stage differences here")
    parser.add_argument("--cases", type=int, default=len(kr.CASES), help="run the first N capture cases")
    parser.add_argument("--noise-scale", type=float, default=1.0, help="as kokoro_reference.py's")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    arrays, voice = kw.make_weights(), kw.make_voice()
    w = kr.load_state(arrays)
    lex = ck.Lexicon(ck.KOKORO_DIR)
    tmp = tempfile.mkdtemp(prefix="kokoro_xcheck.")
    try:
        stub_modules(w)
        KModel = load_kokoro(args.kokoro_src, tmp)
        write_pth(arrays, os.path.join(tmp, "synthetic.pth"))
        model = KModel(repo_id="hexgrad/Kokoro-82M", config=os.path.join(ck.KOKORO_DIR, "config.json"),
                       model=os.path.join(tmp, "synthetic.pth")).eval()
        report = {"keys": check_keys(model, arrays)}
        print(report["keys"])
        rec = {}
        hooks(model, rec)
        for case, _text, ph, ids, speed, _tier in kr.case_inputs(lex)[:args.cases]:
            ref_s = kr.style_rows(voice, [len(ph)])
            t0 = time.time()
            with torch.no_grad():
                ours = kr.synthesize([ids], ref_s, [speed], w, args.noise_scale,
                                    [kr.NOISE_SEED + [c[0] for c in kr.CASES].index(case)])[0]
                ours["noise"] = ours["noise"] * args.noise_scale
                rec.clear()
                run_kokoro(model, ids, ref_s[0], speed, ours["noise"], rec)
                end_to_end = compare(ours, rec)
                rec.clear()
                run_forced(model, ours, rec)
                forced = compare(ours, rec)
            report[case] = {"phonemes": ph, "tokens": len(ids), "frames": int(ours["pred_dur"].sum()),
                            "speed": speed,
                          "seconds": round(time.time() - t0, 1), "end_to_end_max_abs_rel": end_to_end,
                          "stage_forced_max_abs_rel": forced}
            for mode in ("end_to_end_max_abs_rel", "stage_forced_max_abs_rel"):
                print(case, mode, " ".join(f"{k}={v[0]:.2g}" for k, v in report[case][mode].items()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
