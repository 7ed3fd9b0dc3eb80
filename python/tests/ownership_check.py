"""CASES.md C26.1 as a script for a memory checker (scripts/test-python.sh runs it under valgrind
with PYTHONMALLOC=malloc on the tiny circuit; python3 ownership_check.py runs it on the Kokoro
encoder): rows kept past the next call, the model's end and a collection, and a temporary model's
rows copied in one expression, then every array read again.
    ownership_check.py [CIRCUIT]"""
import gc
import hashlib
import sys

import ckbatch

circuit = sys.argv[1] if len(sys.argv) > 1 else None
# the tiny circuit (vocab 10, 16 positions: fast under valgrind) takes only ids 1..9: ;:,.!?
P11, PF = ("ðə lˈɛɾəɹ", "ˌɪn fˈækt, ðɪs ɪz sˈʌmθˌɪŋ.") if circuit is None else (";:,.!?", "?!.,")
m = ckbatch.Model(threads=2, circuit=circuit)
a = m.encode_phonemes([P11])[0]
h = hashlib.sha256(a.tobytes()).hexdigest()
b = m.encode_phonemes([PF])[0]
del m
gc.collect()
once = ckbatch.Model(threads=1, circuit=circuit).encode_phonemes([P11])[0].copy()
gc.collect()
assert hashlib.sha256(a.tobytes()).hexdigest() == h
with ckbatch.Model(threads=1, circuit=circuit) as fresh:
    assert (a == fresh.encode_phonemes([P11])[0]).all() and (b == fresh.encode_phonemes([PF])[0]).all()
assert (once == a).all()
print("ownership: ok", h[:16])
