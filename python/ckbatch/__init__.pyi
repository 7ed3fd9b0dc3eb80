"""Type stubs of ckbatch (see __init__.py for the documentation)."""
import os
from typing import Callable, Iterable, Iterator, List, NamedTuple, Optional, Sequence as Seq, Tuple, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, bytes, os.PathLike]

__version__: str
library_version: str
kernels_isa: str
available_cpus: int

CK_OK: int
CK_E_ARG: int
CK_E_SIZE: int
CK_E_NONFINITE: int
CK_E_RANGE: int
CK_E_IO: int
CK_E_FORMAT: int
CK_E_CIRCUIT: int
CK_E_MEMORY: int
CK_E_HASH: int
CK_E_PARITY: int
CK_E_INPUT: int
CK_E_BACKEND: int
CK_E_WEIGHTS: int
CK_E_CANCELLED: int
CK_E_STATE: int

class Error(Exception):
    code: int
    status: str
    message: str
    def __init__(self, code: int, status: str, message: str) -> None: ...

class InputError(Error, ValueError): ...
class WeightsError(Error): ...
class UsageError(Error, ValueError): ...
class StateError(Error): ...

class Sequence(NamedTuple):
    line: int
    chunk: int
    chunks: int
    tokens: int
    phonemes: str

class Dropped(NamedTuple):
    line: int
    column: int
    message: str

class Word(NamedTuple):
    phonemes: str
    start: Optional[float]
    end: Optional[float]

class Skipped(NamedTuple):
    line: int
    error: str

class Summary(NamedTuple):
    lines: int
    sequences: int
    tokens: int
    chunked_lines: int
    skipped_lines: int
    empty_lines: int
    dropped_symbols: int
    resumed_tokens: int
    seconds: float
    g2p_seconds: float
    g2p_fallback_words: int

class Progress(NamedTuple):
    input_bytes: int
    bytes_done: int
    bytes_read: int
    lines: int
    tokens: int
    seconds: float
    tokens_per_second: float
    eta_seconds: float
    final: bool

class Features:
    features: npt.NDArray[np.float32]
    offsets: npt.NDArray[np.int64]
    sequences: list[Sequence]
    dropped: list[Dropped]
    warnings: list[Dropped]
    skipped: list[Skipped]
    layer: str
    metadata: dict[str, str]
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> npt.NDArray[np.float32]: ...
    def __iter__(self) -> Iterator[npt.NDArray[np.float32]]: ...

class Prosody:
    durations: npt.NDArray[np.int32]
    offsets: npt.NDArray[np.int64]
    frame_offsets: npt.NDArray[np.int64]
    sequences: list[Sequence]
    words: list[list[Word]]
    skipped: list[Skipped]
    metadata: dict[str, str]
    f0: npt.NDArray[np.float32] | None
    n: npt.NDArray[np.float32] | None
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> npt.NDArray[np.int32]: ...

class Model:
    precision: str
    @property
    def backend(self) -> str: ...
    def __init__(self, weights: Optional[_Path] = None, config: Optional[_Path] = None,
                 precision: Optional[str] = "fp32", threads: int = 0, parity: bool = False,
                 compiled: Optional[_Path] = None, *, max_batch_tokens: int = 2048,
                 seed: int = 20261129, circuit: Optional[_Path] = None,
                 weights_manifest: Optional[_Path] = None) -> None: ...
    def __enter__(self) -> "Model": ...
    def __exit__(self, *exc: object) -> bool: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def weights_identity(self) -> str: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def vocab_rows(self) -> int: ...
    def encode_phonemes(self, lines: Seq[str], *, layer: str = "features",
                        strict_symbols: bool = False) -> Features: ...
    def encode_text(self, lines: Seq[str], lang: str = "en-us", *, g2p: str = "misaki",
                    lexicon_dir: Optional[_Path] = None, layer: str = "features",
                    strict_symbols: bool = False) -> Features: ...
    def encode_ids(self, seqs: Iterable[Union[Iterable[int], npt.NDArray[np.integer]]], *,
                   layer: str = "features", strict_symbols: bool = False) -> Features: ...
    def prosody(self, lines: Seq[str], *, format: str = "phonemes", lang: str = "en-us",
                g2p: str = "misaki", lexicon_dir: Optional[_Path] = None,
                voice: Optional[_Path] = None, speed: float = 1.0,
                strict_symbols: bool = False) -> Prosody: ...
    def speak(self, lines: Seq[str], *, voice: Optional[_Path] = None, speed: float = 1.0,
              seed: int = 0, noise_scale: float = 1.0, format: str = "phonemes",
              lang: str = "en-us", g2p: str = "misaki", lexicon_dir: Optional[_Path] = None,
              strict_symbols: bool = False) -> List[Tuple[np.ndarray, List[Word]]]: ...
    def run(self, input_path: _Path, output_path: _Path, resume: bool = True,
            progress: Optional[Callable[[Progress], object]] = None, *, format: str = "phonemes",
            lang: str = "en-us", g2p: str = "misaki", lexicon_dir: Optional[_Path] = None,
            layer: str = "features", on_error: str = "stop",
            strict_symbols: bool = False, progress_interval: float = 0.5,
            log: Optional[Callable[[int, str], object]] = None, voice: Optional[_Path] = None,
            speed: float = 1.0) -> Summary: ...

def load(path: _Path) -> Union[Features, Prosody]: ...
def prosody_circuit() -> str: ...
def speech_circuit() -> str: ...
def check_voice(voice: _Path) -> None: ...
def write_demo_weights(path: _Path, seed: int = 20261129) -> str: ...
