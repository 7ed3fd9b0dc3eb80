import ckbatch
import torch

with ckbatch.Model(threads=2) as m:          # weights="kokoro-v1_0.pth" for Kokoro's own
    r = m.encode_text(["Hello world.", "The quick brown fox jumps over the lazy dog."])
print("features", r.features.shape, r.features.dtype, "offsets", r.offsets.tolist())
for seq, rows in zip(r.sequences, r):        # rows: this sequence's [tokens, 512] view
    print(seq.phonemes, rows.shape)
t = torch.from_numpy(r.features)             # shares the memory, no copy
print(t.shape, t.dtype)
