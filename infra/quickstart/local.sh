#!/usr/bin/env bash
# Runs the README's "everything on your laptop" quick start as a newcomer
# would: a fresh HOME with nothing in it, the notes in ~/Notes (a copy of
# the sample vault), the commands as the README writes them, and checks
# each answer. SHEAF_BIN (default bin/sheaf) is the binary under test.
# Run by `make quickstart` (part of `make test`).
set -euo pipefail
cd "$(dirname "$0")/../.."
SHEAF_BIN=$(realpath "${SHEAF_BIN:-bin/sheaf}")
start=$(date +%s.%N)

# A new user: an empty home, no XDG folders, sheaf on the PATH.
HOME=$(mktemp -d "${TMPDIR:-/tmp}/sheaf-quickstart-XXXXXX")
export HOME
unset XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME SHEAF_VAULT SHEAF_STATE
mkdir -p "$HOME/bin"
ln -s "$SHEAF_BIN" "$HOME/bin/sheaf"
export PATH="$HOME/bin:$PATH"
server=""
cleanup() {
	if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
	rm -rf "$HOME"
}
trap cleanup EXIT
cp -r infra/sample-vault ~/Notes
before=$(cd ~/Notes && find . | sort)

fail() { echo "quickstart: $*" >&2; exit 1; }
step() { printf '== %s\n' "$*"; }

step "sheaf search --vault ~/Notes compost heap"
out=$(sheaf search --vault ~/Notes compost heap)
echo "$out" | head -3
grep -q 'Compost.md' <<<"$out" || fail "search did not find Compost.md"
first=$(date +%s.%N)

step 'echo "- a thought" | sheaf write --vault ~/Notes Inbox/Ideas.md --mode append'
echo "- a thought" | sheaf write --vault ~/Notes Inbox/Ideas.md --mode append
[ "$(cat ~/Notes/Inbox/Ideas.md)" = "- a thought" ] || fail "Inbox/Ideas.md holds: $(cat ~/Notes/Inbox/Ideas.md)"

step "sheaf health --vault ~/Notes"
out=$(sheaf health --vault ~/Notes)
grep -q '^health [0-9]*/100' <<<"$out" || fail "no health score: $out"

step "sheaf serve --vault ~/Notes (stdio, as a desktop client launches it)"
coproc STDIO { exec sheaf serve --vault ~/Notes --no-watch; }
printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quickstart","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"compost"}}}' >&"${STDIO[1]}"
reply=""
while IFS= read -r -t 60 line <&"${STDIO[0]}"; do
	case $line in *'"id":2'*) reply=$line; break ;; esac
done
in_fd=${STDIO[1]}
exec {in_fd}>&- # a client closing stdin ends the server
wait "$STDIO_PID" || fail "sheaf serve (stdio) exited with an error"
if ! grep -q '"id":2' <<<"$reply" || ! grep -q 'Compost.md' <<<"$reply"; then fail "stdio search: $reply"; fi

port=8787
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
	port=$((port + 1)) # in use here (another server): the next one
done
[ "$port" = 8787 ] || echo "(8787 is in use here: port $port instead)"
step "sheaf serve --vault ~/Notes --http $port"
sheaf serve --vault ~/Notes --http "$port" --log-level warn &
server=$!
for _ in $(seq 100); do
	curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done
reply=$(curl -fsS "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_vault_info","arguments":{}}}')
grep -q '"noteCount"' <<<"$reply" || fail "HTTP get_vault_info: $reply"
grep -q "$HOME/.cache/sheaf/notes-" <<<"$reply" || fail "get_vault_info does not name the state folder in ~/.cache: $reply"

# Nothing in the vault but notes and, after the write, log.md.
after=$(cd ~/Notes && find . | sort)
added=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
want="./Inbox/Ideas.md "
grep -qx './log.md' <<<"$before" || want="./Inbox/Ideas.md ./log.md "
[ "$added" = "$want" ] || fail "the vault gained: $added (want $want)"
grep -q 'Inbox/Ideas.md' ~/Notes/log.md || fail "the write is not in the ledger log.md"
[ -f "$(ls -d ~/.cache/sheaf/notes-*)/index.db" ] || fail "no index in ~/.cache/sheaf"

end=$(date +%s.%N)
awk -v s="$start" -v f="$first" -v e="$end" 'BEGIN { printf "quickstart: passed; first answer %.1f s after start, all steps %.1f s\n", f - s, e - s }'
