"""ckbatch: Kokoro-82M phoneme-encoder features as numpy arrays, on every core.

A thin layer over the C extension ``ckbatch._ckbatch`` (itself over ``include/ckbatch.h``)::

    import ckbatch
    with ckbatch.Model() as m:                      # demo weights; weights="kokoro-v1_0.pth"
        r = m.encode_text(["Hello world.", "How are you?"])
        print(r.features.shape, r.offsets)          # (T, 512) float32, [0, t1, T]
        first = r[0]                                # rows of sequence 0, a view

Every encode call and ``run`` release the GIL while the library works, and stop between two
batches on Ctrl-C (KeyboardInterrupt), leaving the model usable.
"""

import collections
import operator
import re

import numpy as np

from ._errors import Error, InputError, StateError, UsageError, WeightsError
from . import _ckbatch

__all__ = ["Model", "Features", "Sequence", "Dropped", "Skipped", "Summary", "Progress", "load",
           "Prosody", "Word", "prosody_circuit", "speech_circuit", "check_voice",
           "write_demo_weights", "Error", "InputError", "WeightsError", "UsageError", "StateError",
           "__version__", "library_version", "kernels_isa", "available_cpus"]

_info = _ckbatch.library_info()
__version__ = _info["version"]
library_version = _info["version"]
kernels_isa = _info["kernels_isa"]
available_cpus = _info["available_cpus"]

for _name in dir(_ckbatch):
    if _name.startswith("CK_"):
        globals()[_name] = getattr(_ckbatch, _name)

Sequence = collections.namedtuple("Sequence", "line chunk chunks tokens phonemes")
Sequence.__doc__ = """One model input sequence: `line` (0-based index of the line it came from:
into the list passed to encode_*, or the input file's lines for load), `chunk` of `chunks` (a line
longer than 510 phonemes is split), `tokens` (rows, boundaries included), `phonemes` (str)."""

Dropped = collections.namedtuple("Dropped", "line column message")
Dropped.__doc__ = """A warning of the library about one place of the input: a symbol dropped, an
undefined id kept, a word misaki sent to espeak-ng. `line` 0-based, `column` (or element, for
ids) 1-based as in the message, and the library's `message`."""

Word = collections.namedtuple("Word", "phonemes start end")
Word.__doc__ = """One word of a prosody file's sequence: its `phonemes` (a space-separated word of
the sequence's phoneme string) and its `start` and `end` in seconds (None where Kokoro's
join_timestamps gives none), docs/prosody.md."""

Skipped = collections.namedtuple("Skipped", "line error")
Skipped.__doc__ = """A line a corpus run skipped (on_error="skip"): its 1-based `line` number in
the input file, and the `error` message."""

Summary = collections.namedtuple("Summary", "lines sequences tokens chunked_lines skipped_lines "
                                 "empty_lines dropped_symbols resumed_tokens seconds g2p_seconds "
                                 "g2p_fallback_words")
Summary.__doc__ = """What Model.run did (ck_corpus_summary): counts of lines, sequences, tokens,
chunked, skipped and empty lines, dropped symbols, tokens a resumed run found done, wall seconds;
text: seconds in the G2P and words misaki sent to espeak-ng."""

Progress = collections.namedtuple("Progress", "input_bytes bytes_done bytes_read lines tokens "
                                  "seconds tokens_per_second eta_seconds final")
Progress.__doc__ = """One progress report of Model.run (ck_progress): bytes of the input done,
lines read, tokens written, seconds, tokens/s, eta_seconds (< 0 unknown), final (bool)."""

_LAYERS = {"features": 0, "hidden": 1}              # encode_*: rows per token
_RUN_LAYERS = {**_LAYERS, "prosody": 2}            # run: a prosody file too (Model.prosody: arrays)
_FORMATS = {"phonemes": 0, "ids": 1, "text": 2}
_ON_ERROR = {"stop": 0, "skip": 1}
# precision -> the ck_model_params setting it needs; a mode the C library gains is one entry here
_PRECISIONS = {"fp32": 0, None: 0, "bf16": 1, "int8": 2}  # CK_PRECISION_FP32, _BF16, _INT8
_DROPPED = re.compile(r"^(?:warning: )?<lines>:(\d+): (?:column|element) (\d+): ")


def _speed(speed):
    try:
        value = float(speed)
    except (TypeError, ValueError):
        raise _usage(f"speed {speed!r}: expected a number > 0") from None
    if not (value > 0 and value != float("inf")):
        raise _usage(f"speed {speed!r}: expected a number > 0")
    return value


def _usage(message):
    return UsageError(_ckbatch.CK_E_ARG, "CK_E_ARG", message)


def _choice(name, value, table):
    try:
        return table[value]
    except (KeyError, TypeError):
        names = ", ".join(repr(k) for k in table if k is not None)
        raise _usage(f"{name} {value!r}: expected one of {names}") from None


class Features:
    """Per-token rows of a batch of sequences, from Model.encode_* or ckbatch.load.

    Attributes:
        features: float32 [total_tokens, cols], C-contiguous (cols 512; 768 for layer="hidden").
        offsets: int64 [n + 1]: sequence i is rows offsets[i]:offsets[i+1].
        sequences: list of Sequence (line, chunk, chunks, tokens, phonemes), one per sequence.
        dropped: list of Dropped, the symbols dropped (ids: undefined ids kept) while encoding.
        warnings: list of Dropped, every warning (dropped too, and the words the misaki G2P
            sent to espeak-ng).
        skipped: list of Skipped (a corpus file written with on_error="skip"; else empty).
        layer: "features" or "hidden".
        metadata: dict of the file's metadata (load), or {"weights": identity} (encode).

    ``len(r)`` is the number of sequences; ``r[i]`` and iteration give each sequence's rows as a
    view of ``features``. The arrays own their memory (encode) or keep the mapped file open (load).
    """

    __slots__ = ("features", "offsets", "sequences", "dropped", "warnings", "skipped", "layer",
                 "metadata")

    def __init__(self, features, offsets, sequences, warnings=(), skipped=(), layer="features",
                 metadata=None):
        self.features = features
        self.offsets = offsets
        self.sequences = list(sequences)
        self.warnings = list(warnings)
        self.dropped = [w for w in self.warnings if w.message.endswith((", dropped", ", kept"))]
        self.skipped = list(skipped)
        self.layer = layer
        self.metadata = dict(metadata or {})

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        n = len(self)
        i = operator.index(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sequence {i} out of range 0..{n - 1}")
        return self.features[self.offsets[i]:self.offsets[i + 1]]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return (f"<ckbatch.Features {len(self)} sequences, {self.layer} "
                f"{tuple(self.features.shape)} float32>")


def _records(line, chunk, phonemes, offsets):
    """Sequence records from the library's arrays (chunks counted per line)."""
    per_line = collections.Counter(line.tolist())
    tokens = np.diff(offsets).tolist()
    return [Sequence(l, c, per_line[l], t, p)
            for l, c, t, p in zip(line.tolist(), chunk.tolist(), tokens, phonemes)]


def _dropped(warnings):
    out = []
    for w in warnings:
        m = _DROPPED.match(w)
        msg = w[len("warning: "):] if w.startswith("warning: ") else w
        out.append(Dropped(int(m.group(1)) - 1, int(m.group(2)), msg) if m else
                   Dropped(-1, 0, msg))
    return out


def _lines_of(lines):
    if isinstance(lines, (str, bytes)):
        raise TypeError("lines: expected a list of str, got a single string (wrap it: [line])")
    return lines if isinstance(lines, (list, tuple)) else list(lines)


def _ids_line(seq):
    if isinstance(seq, np.ndarray):
        if seq.dtype.kind not in "iu":
            raise TypeError(f"ids: expected integers, got a {seq.dtype} array")
        seq = seq.tolist()
    return "[" + ", ".join(str(operator.index(i)) for i in seq) + "]"


class Model:
    """A loaded Kokoro phoneme encoder (circuit + weights + thread pool), freed by close() or by
    leaving a ``with`` block.

    Args:
        weights: Kokoro .pth or .safetensors path; None: synthetic demo weights (NOT Kokoro's).
        config: Kokoro config.json path (its vocab and dims), or None.
        precision: "fp32" (None means the same) or "bf16": the linears in bf16 with f32
            accumulation on AMX or AVX512-BF16, the rest in f32 (docs/precision.md); on a CPU
            without native bf16 loading raises ckbatch.Error (CK_E_BACKEND). "int8": q, k, v
            and the FFN in on oneDNN's int8 matmul (u8 rows x s8 channels, VNNI or AMX-INT8), the
            other linears in bf16; raises CK_E_BACKEND without an int8 dot instruction. Not with
            parity.
        threads: compute threads; 0: every CPU this process may run on.
        parity: one thread and the unfused kernels (bit-reproducible X-Ray contract).
        compiled: a library from `ckbatch compile` (same circuit, precision, parity and
            max_batch_tokens) run instead of the interpreter, with the same results; None: the
            interpreter. Its SHA-256 is checked against its manifest before it is loaded.
        max_batch_tokens: tokens per packed batch (>= 512); Ctrl-C is seen between batches.
        seed: the demo weights' seed.
        circuit: circuit JSON path; None: the embedded Kokoro phoneme encoder.
        weights_manifest: `ckbatch weights hash` JSON the weights are verified against.

    One call at a time runs on a model; a second thread calling it waits (with the GIL released).
    Use one Model per thread to encode in parallel threads. Raises ckbatch.Error subclasses.
    """

    def __init__(self, weights=None, config=None, precision="fp32", threads=0, parity=False,
                 compiled=None, *, max_batch_tokens=2048, seed=20261129, circuit=None,
                 weights_manifest=None):
        if precision not in _PRECISIONS:
            raise _usage(f"precision {precision!r}: expected 'fp32', 'bf16' or 'int8'")
        self.precision = "fp32" if precision is None else precision
        self._m = _ckbatch.Model(weights=weights, config=config, threads=operator.index(threads),
                                 parity=bool(parity), max_batch_tokens=max_batch_tokens,
                                 seed=seed, circuit=circuit, weights_manifest=weights_manifest,
                                 precision=_PRECISIONS[precision], compiled=compiled)
        self._info = self._m.info()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Frees the model (waits for a call in another thread to end). Idempotent."""
        self._m.close()

    @property
    def closed(self):
        """True once close() ran."""
        return self._m.closed

    @property
    def backend(self):
        """"generated" when a compiled library runs the model, else "interpreted"."""
        return self._info["backend"]

    @property
    def weights_identity(self):
        """"sha256:<hex> (<file>)" of the loaded weights, or the demo weights' name and seed."""
        return self._info["weights_identity"]

    @property
    def max_tokens(self):
        """Longest model input sequence, boundaries included (512)."""
        return self._info["max_tokens"]

    @property
    def vocab_rows(self):
        """Rows of the word-embedding table (ids 1..vocab_rows-1 are accepted)."""
        return self._info["vocab_rows"]

    def _encode(self, lines, fmt, lang, layer, strict_symbols, g2p=None, lexicon_dir=None):
        lay = _choice("layer", layer, _LAYERS)
        rows, offsets, line, chunk, phonemes, warnings = self._m.encode_lines(
            _lines_of(lines), format=fmt, lang=lang, strict_symbols=bool(strict_symbols),
            layer=lay, g2p=g2p, lexicon_dir=lexicon_dir)
        return Features(rows, offsets, _records(line, chunk, phonemes, offsets),
                        _dropped(warnings), (), layer, {"weights": self.weights_identity})

    def encode_phonemes(self, lines, *, layer="features", strict_symbols=False):
        """Features of Kokoro phoneme strings (one symbol per code point), one str per line.

        A symbol outside the vocabulary is dropped and reported in ``result.dropped``
        (strict_symbols=True: InputError). An empty line gives no sequence; a line longer than
        510 phonemes is split (see ``result.sequences``). Returns Features.
        """
        return self._encode(lines, 0, None, layer, strict_symbols)

    def encode_text(self, lines, lang="en-us", *, g2p="misaki", lexicon_dir=None,
                    layer="features", strict_symbols=False):
        """Features of English text lines (lang "en-us" or "en-gb") through a G2P, as the CLI's
        --format text: g2p="misaki" (Kokoro's own: misaki 0.9.4's lexicons and rules, espeak-ng
        only for the words they lack, each listed in ``result.warnings``) or "espeak" (espeak-ng
        on everything). lexicon_dir: a directory of misaki's {us,gb}_{gold,silver}.json (None:
        the copy shipped with ckbatch). Returns Features (``sequences[i].phonemes`` is what was
        encoded).
        """
        return self._encode(lines, 2, lang, layer, strict_symbols, g2p, lexicon_dir)

    def encode_ids(self, seqs, *, layer="features", strict_symbols=False):
        """Features of token-id sequences (each an iterable of ints or an integer array, without
        the boundary zeros, at most 510 ids): the CLI's ``--format ids``. An id the vocabulary
        does not define is kept and reported in ``result.dropped``. Returns Features.
        """
        if isinstance(seqs, np.ndarray) and seqs.ndim == 1:
            raise TypeError("seqs: expected a list of sequences, got one 1-D array (wrap it)")
        return self._encode([_ids_line(s) for s in seqs], 1, None, layer, strict_symbols)

    def prosody(self, lines, *, format="phonemes", lang="en-us", g2p="misaki", lexicon_dir=None,
                voice=None, speed=1.0, strict_symbols=False):
        """Durations and word times of `lines` (phoneme strings, ids lines or text, as `format`
        says) through the prosody circuit (a Model made with circuit=ckbatch.prosody_circuit()),
        for voice (None: "af_heart" with weights, "synthetic" with the demo weights) at speed:
        the numbers a run with layer="prosody" writes (ck_model_prosody). Returns Prosody whose
        arrays (int32 durations, int64 offsets and frame_offsets) own their memory.
        """
        fmt = _choice("format", format, _FORMATS)
        (durations, offsets, frames, line, chunk, phonemes, words, warnings, f0,
         n) = self._m.prosody(
            _lines_of(lines), format=fmt, lang=lang, strict_symbols=bool(strict_symbols),
            g2p=g2p, lexicon_dir=lexicon_dir, voice=voice, speed=_speed(speed))
        return Prosody(durations, offsets, frames, _records(line, chunk, phonemes, offsets),
                       [[Word(*w) for w in seq] for seq in words], [],
                       {"weights": self.weights_identity}, f0, n)

    def speak(self, lines, *, voice=None, speed=1.0, seed=0, noise_scale=1.0, format="phonemes",
              lang="en-us", g2p="misaki", lexicon_dir=None, strict_symbols=False):
        """Speech of `lines` (phoneme strings, ids lines or text, as `format` says) through the
        speech circuit (a Model made with circuit=ckbatch.speech_circuit()): ck_model_speak, GIL
        released. Returns one (audio, words) per line that gave phonemes, in line order: audio a
        float32 numpy array at 24,000 Hz (a line's chunks joined as Kokoro joins them), words a
        list of Word (phonemes, start, end in seconds from the line's start; None where Kokoro
        gives none). seed keys the generator's noise (same seed, same bits, in any batch);
        noise_scale 0 removes it. Docs: docs/speak.md.
        """
        fmt = _choice("format", format, _FORMATS)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 64:
            raise ValueError(f"seed: expected an integer 0 .. 2**64-1, got {seed!r}")
        spoken = self._m.speak(_lines_of(lines), format=fmt, lang=lang,
                               strict_symbols=bool(strict_symbols), g2p=g2p,
                               lexicon_dir=lexicon_dir, voice=voice, speed=_speed(speed),
                               seed=seed, noise_scale=float(noise_scale))
        return [(audio, [Word(*w) for w in words]) for _line, audio, words in spoken]

    def run(self, input_path, output_path, resume=True, progress=None, *, format="phonemes",
            lang="en-us", g2p="misaki", lexicon_dir=None, layer="features", on_error="stop",
            strict_symbols=False, progress_interval=0.5, log=None, voice=None, speed=1.0):
        """The CLI's corpus job: encodes the file at input_path (one item per line) into the
        features file output_path (read it with ckbatch.load), committing progress as it goes.

        resume: continue an interrupted run of the same job (True by default: without a record
        the run starts from the beginning). progress: called as progress(Progress) at most every
        progress_interval seconds and once with final=True, on the calling thread with the GIL
        held; an exception it raises stops the run (and is raised). log: called as
        log(level, message) (0 info, 1 warning). format "text" takes g2p and lexicon_dir as
        encode_text does. layer "prosody" (a Model made with circuit=ckbatch.prosody_circuit())
        writes durations, frame offsets and word times (load returns Prosody) for voice (a
        shipped name, a .bin or .pt file, a mix "a:2,b:1" or "a,b", "synthetic"; None: "af_heart"
        with weights, "synthetic" with the demo weights) at speed (> 0, default 1), both checked
        before anything is written. Ctrl-C stops between batches (KeyboardInterrupt);
        the committed progress stays, so the same call with resume=True continues. Returns
        Summary.
        """
        cb = None if progress is None else (lambda *a: progress(Progress(*a[:8], bool(a[8]))))
        s = self._m.run(input_path, output_path, format=_choice("format", format, _FORMATS),
                        lang=lang, layer=_choice("layer", layer, _RUN_LAYERS),
                        strict_symbols=bool(strict_symbols),
                        skip_bad_lines=_choice("on_error", on_error, _ON_ERROR),
                        resume=bool(resume), progress=cb, progress_interval=progress_interval,
                        log=log, g2p=g2p, lexicon_dir=lexicon_dir, voice=voice,
                        speed=_speed(speed))
        return Summary(**s)

    def __repr__(self):
        state = "closed" if self.closed else self.weights_identity
        return f"<ckbatch.Model {state}>"


_METADATA_KEYS = ("format", "engine", "layer", "circuit", "weights", "g2p", "source", "config",
                  "voice", "voice_sha256", "speed", "style_row", "frames_per_second", "word_times",
                  "sequences_format", "skipped_format")


class Prosody:
    """A prosody file (Model.run with layer="prosody", the CLI's --layer prosody), from load.

    Attributes:
        durations: int32 [total_tokens]: frames (1/40 s) per token, BOS and EOS included.
        offsets: int64 [n + 1]: sequence i is tokens offsets[i]:offsets[i+1].
        frame_offsets: int64 [n + 1]: sequence i is frames frame_offsets[i]:frame_offsets[i+1].
        sequences: list of Sequence, one per sequence.
        words: list (one per sequence) of lists of Word (phonemes, start, end seconds).
        skipped: list of Skipped.
        metadata: dict of the file's metadata (voice, voice_sha256, speed, ...).
        f0, n: float32 [2 * frame_offsets[-1]]: F0 and N curves, 2 values per frame (sequence i
            is values 2 frame_offsets[i]:2 frame_offsets[i+1]); None when not computed (a
            circuit without "f0"/"n" outputs, such as kokoro_prosody_tokens.json).

    ``len(p)`` is the number of sequences; ``p[i]`` gives sequence i's durations (a view).
    """

    __slots__ = ("durations", "offsets", "frame_offsets", "sequences", "words", "skipped",
                 "metadata", "f0", "n")

    def __init__(self, durations, offsets, frame_offsets, sequences, words, skipped, metadata,
                 f0=None, n=None):
        self.durations, self.offsets, self.frame_offsets = durations, offsets, frame_offsets
        self.f0, self.n = f0, n
        self.sequences, self.words, self.skipped, self.metadata = sequences, words, skipped, metadata

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        return self.durations[self.offsets[i]:self.offsets[i + 1]]

    def __repr__(self):
        return (f"<ckbatch.Prosody {len(self)} sequences, {len(self.durations)} tokens, "
                f"{int(self.frame_offsets[-1])} frames>")


def speech_circuit():
    """Path of the shipped speech circuit: Model(circuit=ckbatch.speech_circuit()).speak(...)."""
    return _ckbatch.speech_circuit()


def prosody_circuit():
    """Path of the shipped prosody circuit: Model(circuit=ckbatch.prosody_circuit()) runs
    layer="prosody"."""
    return _ckbatch.prosody_circuit()


def check_voice(voice):
    """Loads the voice spec once (as Model.run's voice= takes it) and raises ckbatch.Error
    (UsageError for a bad spec, CK_E_IO naming the shipped voices for an unknown one, CK_E_FORMAT
    for a pack of the wrong size, CK_E_NONFINITE for a NaN) when a run could not use it."""
    _ckbatch.check_voice(voice)


def _load_prosody(f, path, meta, skipped):
    durations = _ckbatch.tensor(f, "durations")
    offsets = _ckbatch.tensor(f, "offsets")
    frames = _ckbatch.tensor(f, "frame_offsets")
    if (durations.dtype != np.int32 or offsets is None or offsets.dtype != np.int64 or
            frames is None or frames.dtype != np.int64 or len(frames) != len(offsets)):
        raise Error(_ckbatch.CK_E_FORMAT, "CK_E_FORMAT", f"{path}: not a ckbatch prosody file "
                    "(durations I32, offsets and frame_offsets I64)")
    records = _jsonl(_ckbatch.tensor(f, "sequences"))
    seqs = [Sequence(r["line"] - 1, r["chunk"], r["chunks"], r["tokens"], r["phonemes"])
            for r in records]
    def seconds(v):  # JSON writes 0.0 as 0
        return None if v is None else float(v)
    words = [[Word(w["phonemes"], seconds(w["start"]), seconds(w["end"]))
              for w in r.get("words", [])] for r in records]
    f0, n = _ckbatch.tensor(f, "f0"), _ckbatch.tensor(f, "n")
    want = 2 * int(frames[-1]) if len(frames) else 0
    if (f0 is None) != (n is None) or any(c is not None and (c.dtype != np.float32 or c.shape != (want,))
                                          for c in (f0, n)):
        raise Error(_ckbatch.CK_E_FORMAT, "CK_E_FORMAT", f"{path}: not a ckbatch prosody file "
                    f"(f0 and n F32 [{want}] both, or neither)")
    return Prosody(durations, offsets, frames, seqs, words, skipped, meta, f0, n)


def _jsonl(arr):
    import json
    if arr is None or arr.size == 0:
        return []
    return [json.loads(l) for l in arr.tobytes().splitlines() if l]


def load(path):
    """Reads a ckbatch features file (what Model.run and the CLI write) into Features (a prosody
    file into Prosody, its durations, offsets, frame_offsets, f0 and n mapped the same way), memory-
    mapped: ``features`` and ``offsets`` are read-only views of the file's pages (the mapping
    stays open while any of them lives; ``.copy()`` for a writable array). No safetensors package
    is needed. Raises ckbatch.Error (CK_E_IO, CK_E_FORMAT) for a missing or malformed file.
    """
    f = _ckbatch.open_features(path)
    meta = {k: v for k in _METADATA_KEYS if (v := _ckbatch.metadata(f, k)) is not None}
    skipped = [Skipped(r["line"], r["error"]) for r in _jsonl(_ckbatch.tensor(f, "skipped"))]
    if _ckbatch.tensor(f, "durations") is not None:
        return _load_prosody(f, path, meta, skipped)
    layer = "hidden" if _ckbatch.tensor(f, "hidden") is not None else "features"
    rows = _ckbatch.tensor(f, layer)
    offsets = _ckbatch.tensor(f, "offsets")
    if rows is None or offsets is None or rows.dtype != np.float32 or offsets.dtype != np.int64:
        raise Error(_ckbatch.CK_E_FORMAT, "CK_E_FORMAT",
                    f"{path}: not a ckbatch features file (no F32 {layer} and I64 offsets)")
    seqs = [Sequence(r["line"] - 1, r["chunk"], r["chunks"], r["tokens"], r["phonemes"])
            for r in _jsonl(_ckbatch.tensor(f, "sequences"))]
    return Features(rows, offsets, seqs, (), skipped, layer, meta)


def write_demo_weights(path, seed=20261129):
    """Writes the synthetic demo weights of `seed` (NOT Kokoro's) as safetensors; returns their
    identity string."""
    return _ckbatch.write_demo_weights(path, seed)
