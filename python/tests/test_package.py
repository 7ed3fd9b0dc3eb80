"""The package surface: version, docstrings on everything public, the .pyi stub names it all."""
import ast
import inspect
import os

import ckbatch


def test_version():
    assert ckbatch.__version__ == ckbatch.library_version == "0.1.0"
    assert ckbatch.kernels_isa in ("avx512", "portable") and ckbatch.available_cpus >= 1


def test_docstrings_everywhere():
    missing = []
    for name in ckbatch.__all__:
        obj = getattr(ckbatch, name)
        if callable(obj) and not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and obj.__module__.startswith("ckbatch"):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and (callable(member) or isinstance(member, property)):
                    if not (member.__doc__ or "").strip():
                        missing.append(f"{name}.{attr}")
    assert missing == []


def test_stub_names_every_public_name():
    stub = os.path.join(os.path.dirname(ckbatch.__file__), "__init__.pyi")
    tree = ast.parse(open(stub, encoding="utf-8").read())
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    names |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert set(ckbatch.__all__) <= names
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    methods = {n.name for n in model.body if isinstance(n, ast.FunctionDef)}
    assert {m for m in vars(ckbatch.Model) if not m.startswith("_")} <= methods
    assert os.path.exists(os.path.join(os.path.dirname(stub), "py.typed"))


def test_readme_example_is_examples_encode_text():
    """The README's Python example is the file the set-up command and test-python.sh run."""
    from conftest import SOURCE
    readme = open(os.path.join(SOURCE, "README.md"), encoding="utf-8").read()
    example = open(os.path.join(SOURCE, "examples", "encode_text.py"), encoding="utf-8").read()
    assert "```python\n" + example + "```" in readme
    assert len(example.splitlines()) <= 10
