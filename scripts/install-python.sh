#!/usr/bin/env bash
# install-python.sh [PREFIX] - the README's Python set-up command: installs the Debian packages
# (scripts/bootstrap.sh), builds libckbatch.so and the ckbatch extension for /usr/bin/python3, and
# installs both under PREFIX (default ~/.local, whose lib/python3.X/site-packages is Python's user
# site: `import ckbatch` then works with no PYTHONPATH, no venv and no pip, so PEP 668 does not
# apply). Ends by running the README's example (examples/encode_text.py) from another directory.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-$HOME/.local}
py=/usr/bin/python3

bash scripts/bootstrap.sh python
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCK_PYTHON=ON -DCK_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target ckbatch ckbatch_shared ckbatch_static ckbatch_python
cmake --install build --prefix "$prefix" >/dev/null
site=$(sed -n 's/^CK_PYTHON_INSTALL_DIR:STRING=//p' build/CMakeCache.txt)
[[ $site == /* ]] || site=$prefix/$site
echo "install-python: ckbatch installed in $site (library and CLI under $prefix)"

if [ "$(cd / && "$py" -c 'import site; print(site.getusersitepackages())')" != "$site" ]; then
    echo "install-python: $site is not on Python's path: export PYTHONPATH=$site"
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
fi
example=$PWD/examples/encode_text.py
(cd / && "$py" "$example")
