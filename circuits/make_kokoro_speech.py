#!/usr/bin/python3
"""Writes circuits/kokoro_speech.json: kokoro_decoder.json plus Kokoro's generator (istftnet.py
Generator.forward; SYNTHESIS.md 1.7) as ops. Run from the repository root; the output is committed."""
import json
from collections import OrderedDict

GEN = "decoder.generator"
c = json.load(open("circuits/kokoro_decoder.json"), object_pairs_hook=OrderedDict)
c["name"] = "kokoro_speech"
c["dims"].update(OrderedDict([
    ("FS", "frames*600"), ("FH", "frames*120+1"), ("FU0", "frames*20"), ("FU1", "frames*120"),
    ("G9", 9), ("G22", 22), ("G256", 256), ("G128", 128), ("G512", 512), ("G1", 1),
    ("K20", 20), ("K12", 12), ("K7", 7), ("K11", 11), ("KG3", 3)]))
W, B, OPS = c["weights"], c["buffers"], c["ops"]
CH = {256: "G256", 128: "G128", 512: "G512", 22: "G22", 9: "G9", 1: "G1"}
KS = {20: "K20", 12: "K12", 7: "K7", 11: "K11", 3: "KG3", 1: "G1"}
ROWS = {0: "FU0", 1: "FH"}


def weight(name, checkpoint, shape):
    W[name] = OrderedDict([("checkpoint", checkpoint), ("shape", shape), ("dtype", "f32")])
    return name


def buf(name, rows, cols, role=None):
    B[name] = OrderedDict([("shape", [rows, CH[cols]]), ("dtype", "f32")])
    if role:
        B[name]["role"] = role
    return name


def op(kind, ins, out, weights=None, params=None, checkpoint=None):
    o = OrderedDict([("op", kind), ("in", ins)])
    if weights:
        o["weights"] = weights
    o["out"] = out
    if params:
        o["params"] = params
    if checkpoint:
        o["checkpoint"] = checkpoint
    OPS.append(o)
    return out


def conv(x, prefix, cin, cout, k, out, params=None, checkpoint=None):
    n = prefix.replace(GEN + ".", "g_").replace(".", "_")
    wt = weight(n + "_w", prefix + ".weight", [CH[cout], CH[cin], KS[k]])
    bs = weight(n + "_b", prefix + ".bias", [CH[cout]])
    return op("conv1d", {"x": x}, out, {"weight": wt, "bias": bs}, params, checkpoint)


def adain_snake(x, prefix, norm, alpha, j, c, out):
    n = prefix.replace(GEN + ".", "g_").replace(".", "_")
    fw = weight("%s_%s%d_fc_w" % (n, norm, j), "%s.%s.%d.fc.weight" % (prefix, norm, j),
                [CH[2 * c], "SD"])
    fb = weight("%s_%s%d_fc_b" % (n, norm, j), "%s.%s.%d.fc.bias" % (prefix, norm, j), [CH[2 * c]])
    al = weight("%s_%s%d" % (n, alpha, j), "%s.%s.%d" % (prefix, alpha, j), ["G1", CH[c], "G1"])
    return op("adain_snake", {"x": x}, out, {"fc_weight": fw, "fc_bias": fb, "alpha": al},
              {"eps": 1e-5, "style_offset": 0})


def resblock1(x, prefix, c, k, rows, checkpoint=None):
    """AdaINResBlock1(c, k, dilations 1, 3, 5): x = conv2(snake(n2(conv1(snake(n1(x)))))) + x."""
    n = prefix.replace(GEN + ".", "g_").replace(".", "_")
    for j, d in enumerate((1, 3, 5)):
        a = adain_snake(x, prefix, "adain1", "alpha1", j, c, buf("%s_%d_a" % (n, j), rows, c))
        b = conv(a, "%s.convs1.%d" % (prefix, j), c, c, k, buf("%s_%d_b" % (n, j), rows, c),
                 {"dilation": d} if d > 1 else None)
        b = adain_snake(b, prefix, "adain2", "alpha2", j, c, b)
        e = conv(b, "%s.convs2.%d" % (prefix, j), c, c, k, buf("%s_%d_c" % (n, j), rows, c))
        x = op("add_scaled", {"x": e, "residual": x}, buf("%s_%d_x" % (n, j), rows, c),
               params={"scale": 1.0}, checkpoint=checkpoint if j == 2 else None)
    return x


# F0's op gets an X-Ray id (tests feed the capture's F0 there, isolating the generator)
for o in OPS:
    if o.get("out") == "f0":
        o["checkpoint"] = "kokoro.decoder.F0"

# the source: noise, harmonic source [600F, 1], its STFT har [120F + 1, 22]
op("noise_normal", {"f0": "f0"}, buf("g_noise", "FS", 9), checkpoint="kokoro.generator.noise")
lw = weight("g_l_linear_w", GEN + ".m_source.l_linear.weight", ["G1", "G9"])
lb = weight("g_l_linear_b", GEN + ".m_source.l_linear.bias", ["G1"])
op("harmonic_source", {"f0": "f0", "noise": "g_noise"}, buf("g_source", "FS", 1),
   {"weight": lw, "bias": lb}, checkpoint="kokoro.generator.har_source")
op("stft20", {"x": "g_source"}, buf("g_har", "FH", 22), checkpoint="kokoro.generator.har")

x, cin = "decoded", 512
for i, (cout, k, s, rk) in enumerate(((256, 20, 10, 7), (128, 12, 6, 11))):
    rows = ROWS[i]
    lx = op("leaky_relu", {"x": x}, buf("g_lrelu%d" % i, "FR2" if i == 0 else "FU0", cin),
            params={"slope": 0.1})
    # the noise branch: noise_convs.i over har, then noise_res.i
    src = conv("g_har", "%s.noise_convs.%d" % (GEN, i), 22, cout, 12 if i == 0 else 1,
               buf("g_nconv%d" % i, rows, cout),
               {"stride": 6, "padding": 3} if i == 0 else None)
    src = resblock1(src, "%s.noise_res.%d" % (GEN, i), cout, rk, rows,
                    "kokoro.generator.noise_res.%d" % i)
    uw = weight("g_ups%d_w" % i, "%s.ups.%d.weight" % (GEN, i), [CH[cin], CH[cout], KS[k]])
    ub = weight("g_ups%d_b" % i, "%s.ups.%d.bias" % (GEN, i), [CH[cout]])
    up = op("conv_transpose1d_col2im", {"x": lx},
            buf("g_ups%d" % i, "FU0" if i == 0 else "FU1", cout), {"weight": uw, "bias": ub},
            {"stride": s}, "kokoro.generator.ups.0" if i == 0 else None)
    if i == 1:
        up = op("reflect_pad_left1", {"x": up}, buf("g_pad", "FH", cout),
                checkpoint="kokoro.generator.ups.1")
    xin = op("add_scaled", {"x": up, "residual": src}, buf("g_in%d" % i, rows, cout),
             params={"scale": 1.0})
    branches = [resblock1(xin, "%s.resblocks.%d" % (GEN, 3 * i + b), cout, (3, 7, 11)[b], rows)
                for b in range(3)]
    s01 = op("add_scaled", {"x": branches[0], "residual": branches[1]},
             buf("g_sum%d" % i, rows, cout), params={"scale": 1.0})
    x = op("add_scaled", {"x": s01, "residual": branches[2]}, buf("g_stage%d" % i, rows, cout),
           params={"scale": 1.0 / 3.0}, checkpoint="kokoro.generator.stage.%d" % i)
    cin = cout

lx = op("leaky_relu", {"x": x}, buf("g_lrelu_post", "FH", 128), params={"slope": 0.01})
post = conv(lx, GEN + ".conv_post", 128, 22, 7, buf("g_post", "FH", 22),
            checkpoint="kokoro.generator.conv_post")
op("istft20", {"x": post}, buf("audio", "FS", 1, "output"), checkpoint="kokoro.generator.audio")
c["outputs"]["audio"] = "audio"

with open("circuits/kokoro_speech.json", "w") as f:
    f.write("{\n")
    keys = list(c)
    for n, key in enumerate(keys):
        end = ",\n" if n + 1 < len(keys) else "\n"
        if key in ("weights", "buffers"):
            f.write('  "%s": {\n' % key)
            items = list(c[key].items())
            for m, (k, v) in enumerate(items):
                f.write('    %s: %s%s\n' % (json.dumps(k), json.dumps(v), "," if m + 1 < len(items) else ""))
            f.write("  }" + end)
        elif key == "ops":
            f.write('  "ops": [\n')
            for m, o in enumerate(c["ops"]):
                f.write("    %s%s\n" % (json.dumps(o), "," if m + 1 < len(c["ops"]) else ""))
            f.write("  ]" + end)
        else:
            f.write('  %s: %s%s' % (json.dumps(key), json.dumps(c[key]), end))
    f.write("}\n")
