#!/usr/bin/env bash
# Builds every release artifact into DIST (default dist/): static sheaf
# binaries for linux, darwin and windows on amd64 and arm64 (archives with
# LICENSE, NOTICE, README.md, CHANGELOG.md and THIRD_PARTY_LICENSES), the two
# Lambda zips (arm64, the template's default), server.json with the
# version filled in, and SHA256SUMS over all of them. Run by `make release`;
# docs/releasing.md says how a release is cut. Nothing is published.
set -euo pipefail
cd "$(dirname "$0")/../.."

GO=${GO:-go}
DIST=${DIST:-dist}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
VER=${VERSION#v}
PLATFORMS=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
LDFLAGS="-s -w -X main.version=${VERSION}"

rm -rf "$DIST"
mkdir -p "$DIST/build"
echo "release ${VERSION} into ${DIST} (${JOBS} builds at a time)"

# Every module linked into the binaries, with its license text.
licenses() {
	local out=$1
	: >"$out"
	"$GO" list -deps -f '{{with .Module}}{{.Path}} {{.Version}} {{.Dir}}{{end}}' ./cmd/sheaf ./functions/mcp ./functions/indexer |
		sort -u | while read -r path ver dir; do
		[ "$path" = "github.com/sheaf-dev/sheaf" ] && continue
		[ -n "$dir" ] || { echo "no module folder for $path (run go mod download)" >&2; return 1; }
		lic=$(find "$dir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) | sort | head -1)
		[ -n "$lic" ] || { echo "no license file in $path $ver" >&2; return 1; }
		{
			printf '=== %s %s\n\n' "$path" "$ver"
			cat "$lic"
			printf '\n'
		} >>"$out"
	done
}
licenses "$DIST/build/THIRD_PARTY_LICENSES"

# One binary per platform, JOBS at a time (each go build uses every core
# for its packages; the build cache is shared).
build() {
	local os=${1%/*} arch=${1#*/} ext=""
	[ "$os" = windows ] && ext=.exe
	local dir="$DIST/build/sheaf_${VER}_${os}_${arch}"
	mkdir -p "$dir"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -tags grpcnotrace -ldflags "$LDFLAGS" -o "$dir/sheaf$ext" ./cmd/sheaf
	cp LICENSE NOTICE README.md CHANGELOG.md "$DIST/build/THIRD_PARTY_LICENSES" "$dir/"
	if [ "$os" = windows ]; then
		(cd "$DIST/build" && zip -X -q -r "../sheaf_${VER}_${os}_${arch}.zip" "sheaf_${VER}_${os}_${arch}")
	else
		tar -C "$DIST/build" --owner=0 --group=0 --numeric-owner -czf "$DIST/sheaf_${VER}_${os}_${arch}.tar.gz" "sheaf_${VER}_${os}_${arch}"
	fi
	echo "  $os/$arch"
}
export -f build
export GO DIST VER LDFLAGS
# shellcheck disable=SC2086 # one platform a word
printf '%s\n' $PLATFORMS | xargs -P "$JOBS" -I{} bash -c 'build {}'

# The Lambda functions (provided.al2023, arm64), as `sam deploy` would
# upload them.
make -s lambda-zips LAMBDA_ARCH=arm64 LAMBDA_OUT="$DIST/build/lambda" VERSION="$VERSION" >/dev/null
for fn in mcp indexer; do
	cp "$DIST/build/lambda/$fn.zip" "$DIST/sheaf-lambda-${fn}_${VER}_linux_arm64.zip"
done
echo "  lambda mcp, indexer (arm64)"

# server.json for the MCP registry, at this version.
sed -e "s/\"version\": \"[^\"]*\"/\"version\": \"${VER}\"/" \
	-e "s#\"identifier\": \"ghcr.io/sheaf-dev/sheaf:[^\"]*\"#\"identifier\": \"ghcr.io/sheaf-dev/sheaf:${VER}\"#" server.json >"$DIST/server.json"

rm -rf "$DIST/build"
(cd "$DIST" && sha256sum -- * >SHA256SUMS)
ls -l "$DIST"
