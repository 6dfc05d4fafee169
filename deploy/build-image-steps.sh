#!/usr/bin/env bash
# The build steps of deploy/Dockerfile's images, as one script: the
# Dockerfile RUNs these steps, and `make check-deploy` runs them on the
# machine itself (where there is no Docker engine) and checks the binary,
# so what the image gets is what CI built and checked.
#
#   deploy/build-image-steps.sh build-deps        the packages the build needs (Debian)
#   deploy/build-image-steps.sh build DIR         build DIR/rewardd (static, RE2 through cgo) and
#                                                 DIR/rewardd-healthcheck; check the first says RE2
#   deploy/build-image-steps.sh code-exec-runtime the code-exec image's packages: python3 and the toolchains
#   deploy/build-image-steps.sh packages build|code-exec   print a step's Debian packages
#   deploy/build-image-steps.sh check             build-deps; build in a temporary directory; serve on
#                                                 loopback and check the health check and
#                                                 rewardd_build_info; code-exec-runtime
#
# A step installs only the packages that are missing (apt-get, as root), so
# on a machine that has them (CI, after make deps) it installs nothing.
# Run from the repository root (the Dockerfile's WORKDIR /src is one).
set -euo pipefail

# What the build needs besides Go: RE2's headers and static library
# (libre2-dev, on bookworm RE2 2022-06-01, which needs no abseil), the C++
# compiler cgo builds go-re2's shim with, and pkg-config, which finds re2.
BUILD_PACKAGES=(g++ libre2-dev pkg-config)

# Build tags: re2_cgo, RE2 through cgo (scorers/rematch); netgo and
# osusergo, Go's own resolver and user lookup, so that the static binary
# calls no glibc NSS function (which a static glibc cannot load).
TAGS=re2_cgo,netgo,osusergo
# -trimpath: no build machine paths in the binary. -buildvcs=false: the
# image's build context has no .git (Dockerfile.dockerignore). A static
# binary, libre2 and libstdc++ linked in: the distroless image has no
# shared library to load.
GO_BUILD_FLAGS=(-trimpath -buildvcs=false -tags "$TAGS" -ldflags '-s -w -linkmode external -extldflags "-static"')
# go-re2's C++ shim assigns string constants to char*: not ours to fix.
export CGO_ENABLED=1 CGO_CXXFLAGS="-O2 -g -Wno-write-strings"

# code_exec's toolchains are the Makefile's CODE_EXEC_PACKAGES, what make
# deps installs; python3 (not python3-minimal: the fork server and the
# programs import the standard library) is the sandbox's interpreter.
code_exec_packages() {
	local line
	line=$(sed -n 's/^CODE_EXEC_PACKAGES := //p' Makefile)
	[ -n "$line" ] || { echo "build-image-steps: no CODE_EXEC_PACKAGES line in Makefile" >&2; exit 1; }
	echo python3 $line
}

# install PKG... installs those of the Debian packages that are missing.
install() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "build-image-steps: missing Debian packages: ${missing[*]}; install them as root" >&2
		exit 1
	fi
	# The JDK's postinst links its man pages into /usr/share/man/man1,
	# which debian:bookworm-slim leaves out.
	mkdir -p /usr/share/man/man1
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# verify BIN fails unless BIN is a static executable whose regex engine is RE2.
verify() {
	local bin=$1 version
	if ldd "$bin" >/dev/null 2>&1; then
		echo "build-image-steps: $bin is dynamically linked; the distroless image has no shared library:" >&2
		ldd "$bin" >&2
		exit 1
	fi
	version=$("$bin" --version)
	case "$version" in
	*"regex engine re2"*) echo "$bin: $version, static" ;;
	*)
		echo "build-image-steps: $bin --version says \"$version\"; want regex engine re2 (a build without cgo or libre2 falls back to Go's regexp)" >&2
		exit 1
		;;
	esac
}

step=${1:-}
case "$step" in
build-deps)
	install "${BUILD_PACKAGES[@]}"
	;;
build)
	dir=${2:?usage: build-image-steps.sh build DIR}
	go build "${GO_BUILD_FLAGS[@]}" -o "$dir/rewardd" ./cmd/rewardd
	verify "$dir/rewardd"
	# Pure Go, no cgo: static by itself.
	CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags '-s -w' -o "$dir/rewardd-healthcheck" ./deploy/healthcheck
	;;
code-exec-runtime)
	# shellcheck disable=SC2046 # one word per package
	install $(code_exec_packages)
	/usr/bin/python3 -I -S -c 'import json, select, resource, decimal, statistics, hashlib'
	for tool in gcc g++ javac java node; do
		command -v "$tool" >/dev/null || { echo "build-image-steps: $tool is missing after installing $(code_exec_packages)" >&2; exit 1; }
	done
	;;
packages)
	case "${2:-}" in
	build) echo "${BUILD_PACKAGES[@]}" ;;
	code-exec) code_exec_packages ;;
	*) echo "usage: build-image-steps.sh packages build|code-exec" >&2; exit 2 ;;
	esac
	;;
check)
	"$0" build-deps
	dir=$(mktemp -d)
	pid=
	trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
	"$0" build "$dir"
	# The image's entrypoint as the images run it, on free loopback ports:
	# its health check passes, and its rewardd_build_info says RE2.
	"$dir/rewardd" serve --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 2>"$dir/log" &
	pid=$!
	addr=
	for _ in $(seq 600); do # up to a minute for the "serving" line
		addr=$(sed -n 's/.*"msg":"serving".*"http_addr":"\([^"]*\)".*/\1/p' "$dir/log")
		[ -n "$addr" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$addr" ] || { echo "build-image-steps: rewardd serve did not serve:" >&2; cat "$dir/log" >&2; exit 1; }
	"$dir/rewardd-healthcheck" "http://$addr/healthz"
	info=$(curl -sf "http://$addr/metrics" | grep '^rewardd_build_info{' || true)
	case "$info" in
	*'regex_engine="re2"'*) echo "$info" ;;
	*) echo "build-image-steps: rewardd_build_info is \"$info\"; want regex_engine=\"re2\"" >&2; exit 1 ;;
	esac
	kill "$pid"
	wait "$pid" || true
	pid=
	"$0" code-exec-runtime
	;;
*)
	echo "usage: deploy/build-image-steps.sh build-deps | build DIR | code-exec-runtime | packages build|code-exec | check" >&2
	exit 2
	;;
esac
