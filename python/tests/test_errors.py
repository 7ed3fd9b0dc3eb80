"""Bad input raises ckbatch.Error subclasses with the library's code and message, never crashes."""
import numpy as np
import pytest

import ckbatch
from conftest import P11


def test_error_classes():
    assert issubclass(ckbatch.InputError, ckbatch.Error) and issubclass(ckbatch.InputError, ValueError)
    assert issubclass(ckbatch.UsageError, ValueError) and issubclass(ckbatch.WeightsError, ckbatch.Error)


def test_state_error_is_its_own_class():
    e = ckbatch._errors._make(ckbatch.CK_E_STATE, "CK_E_STATE", "resume: identity field \"options\" differs")
    assert ckbatch.CK_E_STATE == -15 and type(e) is ckbatch.StateError and isinstance(e, ckbatch.Error)
    assert not isinstance(e, ValueError) and str(e).endswith("[CK_E_STATE]")


def test_strict_symbol(model):
    with pytest.raises(ckbatch.InputError) as e:
        model.encode_phonemes([P11, "ab✗"], strict_symbols=True)
    assert e.value.code == ckbatch.CK_E_INPUT == -11 and e.value.status == "CK_E_INPUT"
    assert e.value.message == "<lines>:2: column 3: symbol U+2717 '✗' not in vocab"


def test_bad_ids(model):
    with pytest.raises(ckbatch.InputError) as e:
        model.encode_ids([[1, 2], [500]])
    assert e.value.message == "<lines>:2: element 1: id 500 out of range 1..177"
    with pytest.raises(ckbatch.InputError) as e:
        model.encode_ids([[1] * 511])
    assert e.value.code == ckbatch.CK_E_INPUT and "511" in e.value.message
    with pytest.raises(TypeError):
        model.encode_ids([[1.5]])
    with pytest.raises(TypeError):
        model.encode_ids([np.array([1.0])])
    with pytest.raises(TypeError):
        model.encode_ids(np.array([1, 2]))


def test_bad_lines(model):
    with pytest.raises(ckbatch.UsageError) as e:
        model.encode_phonemes(["a", "b\nc"])
    assert e.value.code == ckbatch.CK_E_ARG and e.value.message == "tokenize: line 2 holds a newline"
    with pytest.raises(ckbatch.UsageError) as e:
        model.encode_phonemes(["a\0b"])
    assert e.value.message == "tokenize: line 1 holds a NUL character"
    with pytest.raises(TypeError):
        model.encode_phonemes("a single string")
    with pytest.raises(TypeError):
        model.encode_phonemes([b"bytes"])
    with pytest.raises(UnicodeEncodeError):
        model.encode_phonemes(["\udcff"])
    with pytest.raises(ckbatch.UsageError) as e:
        model.encode_phonemes([P11], layer="middle")
    assert e.value.message == "layer 'middle': expected one of 'features', 'hidden'"
    assert model.encode_phonemes([P11]).offsets.tolist() == [0, 11]   # still usable


def test_load_errors(tmp_path):
    with pytest.raises(ckbatch.Error) as e:
        ckbatch.Model(weights=tmp_path / "none.safetensors")
    assert e.value.code == ckbatch.CK_E_IO and "none.safetensors" in e.value.message
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    with pytest.raises(ckbatch.Error) as e:
        ckbatch.Model(weights=junk)
    assert e.value.code == ckbatch.CK_E_FORMAT
    with pytest.raises(ckbatch.Error) as e:
        ckbatch.load(junk)
    assert e.value.code == ckbatch.CK_E_FORMAT
    with pytest.raises(ckbatch.Error) as e:
        ckbatch.load(tmp_path / "none.safetensors")
    assert e.value.code == ckbatch.CK_E_IO
    with pytest.raises(ckbatch.UsageError) as e:
        ckbatch.Model(threads=-1)
    assert e.value.message == "model: threads -1: expected 0 (the available CPUs) or more"
    with pytest.raises(ckbatch.UsageError) as e:
        ckbatch.Model(max_batch_tokens=100)
    assert e.value.message == "max_batch_tokens 100: must be at least the longest sequence, 512"


def test_weights_mismatch(tmp_path):
    """Demo weights against the tiny circuit: WeightsError naming the tensor."""
    from conftest import TINY
    path = tmp_path / "demo.safetensors"
    assert "seed 5" in ckbatch.write_demo_weights(path, seed=5)
    with pytest.raises(ckbatch.WeightsError) as e:
        ckbatch.Model(weights=path, circuit=TINY)
    assert e.value.code == ckbatch.CK_E_WEIGHTS and "w.word" in e.value.message


def _native_bf16():
    flags = open("/proc/cpuinfo").read().split()
    return "amx_bf16" in flags or "avx512_bf16" in flags


def test_precision():
    with pytest.raises(ckbatch.UsageError) as e:
        ckbatch.Model(precision="fp16")
    assert e.value.code == ckbatch.CK_E_ARG
    assert e.value.message == "precision 'fp16': expected 'fp32', 'bf16' or 'int8'"
    with pytest.raises(ckbatch.UsageError) as e:
        ckbatch.Model(precision="bf16", parity=True)
    assert e.value.message.startswith("model: parity runs fp32 only")
    if not _native_bf16():
        with pytest.raises(ckbatch.Error) as e:
            ckbatch.Model(precision="bf16")
        assert "no native bf16 matmul" in e.value.message
        return
    lines = ["ði sˈʌn ɪz wˈɔɹm, ði skˈI ɪz blˈu.", "hˈɛlO"]
    with ckbatch.Model(precision="bf16", threads=1) as b, ckbatch.Model(threads=1) as f:
        assert b.precision == "bf16"
        xb = b.encode_phonemes(lines).features
        xf = f.encode_phonemes(lines).features
    cos = float((xb * xf).sum() / ((xb * xb).sum() * (xf * xf).sum()) ** 0.5)
    rel = float((((xb - xf) ** 2).sum() / (xf * xf).sum()) ** 0.5)
    assert cos >= 0.9999 and 1e-4 < rel <= 0.01


def _int8_dot():
    flags = open("/proc/cpuinfo").read().split()
    return "avx512_vnni" in flags or "avx_vnni" in flags or "amx_int8" in flags


def test_precision_int8():
    with pytest.raises(ckbatch.UsageError) as e:
        ckbatch.Model(precision="int8", parity=True)
    assert e.value.message.startswith("model: parity runs fp32 only")
    assert "precision int8 and parity" in e.value.message
    if not _int8_dot():
        with pytest.raises(ckbatch.Error) as e:
            ckbatch.Model(precision="int8")
        assert "no int8 dot product" in e.value.message
        return
    lines = ["ði sˈʌn ɪz wˈɔɹm, ði skˈI ɪz blˈu.", "hˈɛlO"]
    with ckbatch.Model(precision="int8", threads=1) as q, ckbatch.Model(threads=1) as f:
        assert q.precision == "int8"
        xq = q.encode_phonemes(lines).features
        xf = f.encode_phonemes(lines).features
    cos = ((xq * xf).sum(axis=1) / ((xq * xq).sum(axis=1) * (xf * xf).sum(axis=1)) ** 0.5).min()
    rel = float((((xq - xf) ** 2).sum() / (xf * xf).sum()) ** 0.5)
    assert cos >= 0.9995 and 1e-3 < rel <= 0.015


def test_compiled_without_manifest():
    with pytest.raises(ckbatch.Error) as e:
        ckbatch.Model(compiled="no-such-dir/kokoro.so")
    assert "library manifest" in e.value.message


def test_precision_none_is_fp32():
    with ckbatch.Model(precision=None, threads=1) as m:
        assert m.precision == "fp32"


def test_closed_model():
    m = ckbatch.Model(threads=1)
    with m:
        pass
    assert m.closed
    m.close()   # idempotent
    with pytest.raises(ckbatch.UsageError) as e:
        m.encode_phonemes([P11])
    assert e.value.message == "model: closed"
