#!/usr/bin/env bash
# Binder check: build what mybinder builds, then run the notebooks in it.
#
# A copy of the repository (the files git would commit) gets a fresh virtual environment with
# binder/requirements.txt, then binder/postBuild is run from its root, as repo2docker does. The
# copy's toolcaller/ source folder is then removed, so that the notebooks can only import the
# installed package. Finally pytest + nbval (the test runner is not part of Binder; it is
# installed under binder/requirements.txt's pins) runs notebooks/ with the repository's own
# nbval settings. Exits non-zero on any failure. PYTHON picks the interpreter (default 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
python=${PYTHON:-python3.11}
command -v "$python" >/dev/null || python=python3
work=$(mktemp -d "${TMPDIR:-/tmp}/check-binder.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== copy the repository to $work/repo"
mkdir "$work/repo"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -xf - -C "$work/repo"

echo "== fresh venv ($("$python" --version)), binder/requirements.txt"
"$python" -m venv "$work/venv"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
cd "$work/repo"
python -m pip install --quiet --upgrade pip
python -m pip install --quiet -r binder/requirements.txt

echo "== binder/postBuild"
test -x binder/postBuild || { echo "binder/postBuild is not executable" >&2; exit 1; }
./binder/postBuild >/dev/null
rm -rf toolcaller build ./*.egg-info
(cd / && python -c "import toolcaller, sys; sys.exit('site-packages' not in toolcaller.__file__)") \
  || { echo "toolcaller is not imported from the installed package" >&2; exit 1; }

echo "== pytest + nbval on notebooks/"
python -m pip install --quiet -c binder/requirements.txt pytest pytest-timeout pytest-asyncio nbval
python -m pytest notebooks -p no:cacheprovider -q

echo "== binder check passed in $(( $(date +%s) - started )) s"
