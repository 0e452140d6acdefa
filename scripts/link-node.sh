#!/usr/bin/env bash
# npm's postinstall step (package.json). Latchkey runs on the Node release line of .nvmrc, the one CI
# tests and the Docker image ships; better-sqlite3 13 does not work on older lines (Node 20
# segfaults in it). When the machine's Node is on another line, this links node_modules/.bin/node to
# the .nvmrc release, fetched from the npm registry by scripts/use-node.sh, and npm puts
# node_modules/.bin first on PATH for its scripts: `npm start`, `npm test`, `npm run cli` and
# `npx latchkey` then run on that release with no other step. A shell's own `node` is unchanged
# (`. scripts/use-node.sh` changes it). It never fails the install: without the registry it warns.
#
# Every later npm command that installs (npm install, npm install <pkg>, npm rebuild, npm update,
# npm ci) runs this again, with node_modules/.bin first on PATH: the `node` on PATH is then this
# script's own link, and says nothing about the machine. The decision is made from the machine's
# own Node (latchkey_machine_node: the first `node` on PATH that is neither in a node_modules/.bin
# folder nor in use-node.sh's cache). The link is kept while that Node is on another line, and
# removed once it is on the line of .nvmrc (a machine upgraded to Node 24 needs no link).
cd "$(dirname "$0")/.." || exit 0
want="$(tr -d ' \nv' < .nvmrc)"
link=node_modules/.bin/node
# shellcheck source=use-node.sh
. scripts/use-node.sh --define-only

machine="$(latchkey_machine_node)" || machine=""
have=""
if [ -n "$machine" ]; then have="$("$machine" -p 'process.versions.node' 2>/dev/null || true)"; fi

if [ -n "$have" ] && [ "${have%%.*}" = "${want%%.*}" ]; then
  # The machine's own Node is on the right line: drop a link that an earlier install made here.
  if [ -L "$link" ] && [[ "$(readlink "$link")" == "$(latchkey_node_cache)"/* ]]; then
    rm -f "$link"
    echo "latchkey: this machine's Node is $have; removed $link, which linked Node $want for npm's scripts" >&2
  fi
  exit 0
fi

if ! dir="$(latchkey_fetch_node)"; then
  echo "latchkey: this is Node ${have:-(none on PATH)} and Node $want could not be fetched; npm start and npm test need Node ${want%%.*} (docs/getting-started.md)" >&2
  exit 0
fi
if [ "$(readlink "$link" 2>/dev/null)" != "$dir/bin/node" ]; then
  mkdir -p node_modules/.bin
  ln -sfn "$dir/bin/node" "$link"
  echo "latchkey: this is Node ${have:-(none on PATH)}; npm start, npm test and npx latchkey will run on Node $want ($link)" >&2
fi
exit 0
