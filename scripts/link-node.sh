#!/usr/bin/env bash
# npm's postinstall step (package.json). Latchkey runs on the Node release line of .nvmrc, the one CI
# tests and the Docker image ships; better-sqlite3 13 does not even load on older lines (Node 20
# segfaults in it). When `npm ci` runs on another line, this links node_modules/.bin/node to the
# .nvmrc release, fetched from the npm registry by scripts/use-node.sh, and npm puts
# node_modules/.bin first on PATH for its scripts: `npm start`, `npm test`, `npm run cli` and
# `npx latchkey` then run on that release with no other step. A shell's own `node` is unchanged
# (`. scripts/use-node.sh` changes it). It never fails the install: without the registry it warns.
cd "$(dirname "$0")/.." || exit 0
want="$(tr -d ' \nv' < .nvmrc)"
have="$(node -p 'process.versions.node' 2>/dev/null || true)"
link=node_modules/.bin/node
# shellcheck source=use-node.sh
. scripts/use-node.sh --define-only

if [ "${have%%.*}" = "${want%%.*}" ]; then
  # npm itself runs on the right line: drop a link that an earlier install made here.
  if [ -L "$link" ] && [[ "$(readlink "$link")" == "$(latchkey_node_cache)"/* ]]; then rm -f "$link"; fi
  exit 0
fi

if ! latchkey_use_node; then
  echo "latchkey: this is Node $have and Node $want could not be fetched; npm start and npm test need Node ${want%%.*} (README)" >&2
  exit 0
fi
mkdir -p node_modules/.bin
ln -sfn "$(command -v node)" "$link"
echo "latchkey: this is Node $have; npm start, npm test and npx latchkey will run on Node $want ($link)" >&2
exit 0
