#!/usr/bin/env bash
# Build a real kube-apiserver and etcd from their Go modules (via the Go module
# proxy) and cache them OUTSIDE the repository, keyed by version:
#
#   ${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}/bin/kube-apiserver-<ver>/kube-apiserver
#   ${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}/bin/kubectl-<ver>/kubectl
#   ${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}/bin/kube-controller-manager-<ver>/kube-controller-manager
#       (its garbage collector and namespace controller, for tests that delete what owns other objects)
#   ${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}/bin/etcd-<ver>/etcd
#   ${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}/bin/assets-<k8s>-etcd-<etcd>/  (symlinks;
#       point KUBEBUILDER_ASSETS here)
#
# Idempotent: if a cached binary exists and answers --version, it is not rebuilt.
# Each component is built in its own throw-away helper module (separate module
# graphs, see docs in shared/design/real-apiserver.md §2.4). The Go module and
# build caches stay at their default locations so reruns and rebuilds are fast.
#
# Env knobs:
#   CLUSTERCLASS_CACHE   cache root (default $HOME/.cache/clusterclass)
#   K8S_VERSION          k8s.io/kubernetes version (default v1.37.2)
#   ETCD_VERSION         go.etcd.io/etcd/server/v3 version (default v3.6.16)
#   BUILD_PARALLELISM    go build -p value (default 2)
#
# Last lines of stdout are shell-sourceable:
#   KUBE_APISERVER=... KUBECTL=... KUBE_CONTROLLER_MANAGER=... ETCD=... KUBEBUILDER_ASSETS=...
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CACHE_ROOT="${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}"
BIN_ROOT="$CACHE_ROOT/bin"
PAR="${BUILD_PARALLELISM:-2}"

APISERVER_DIR="$BIN_ROOT/kube-apiserver-$K8S_VERSION"
ETCD_DIR="$BIN_ROOT/etcd-$ETCD_VERSION"
ASSETS_DIR="$BIN_ROOT/assets-$K8S_VERSION-etcd-$ETCD_VERSION"
APISERVER_BIN="$APISERVER_DIR/kube-apiserver"
KUBECTL_DIR="$BIN_ROOT/kubectl-$K8S_VERSION"
KUBECTL_BIN="$KUBECTL_DIR/kubectl"
ETCD_BIN="$ETCD_DIR/etcd"
KCM_DIR="$BIN_ROOT/kube-controller-manager-$K8S_VERSION"
KCM_BIN="$KCM_DIR/kube-controller-manager"

log() { printf '[build-apiserver %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# Run a step and report its wall time.
timed() {
    local label="$1"; shift
    local start=$SECONDS
    "$@"
    log "$label took $((SECONDS - start))s"
}

cached_ok() {  # $1 = binary
    [[ -x "$1" ]] && { "$1" --version >/dev/null 2>&1 || "$1" version --client >/dev/null 2>&1; }
}

if ! command -v go >/dev/null 2>&1; then
    if [[ -x /usr/local/go/bin/go ]]; then
        export PATH="/usr/local/go/bin:$PATH"
    else
        log "error: go not found (need Go >= 1.26 for k8s $K8S_VERSION)"; exit 1
    fi
fi

# Build environment: never let a go.work or the repo's settings interfere.
export GOWORK=off
export CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local

WORK_ROOT=""
cleanup() {
    if [[ -n "$WORK_ROOT" && -d "$WORK_ROOT" ]]; then rm -rf "$WORK_ROOT"; fi
    return 0
}
trap cleanup EXIT

# Temporary helper-module dirs live outside the repository. Must be called in
# the main shell (not in $(...)) so the EXIT trap sees WORK_ROOT.
ensure_workroot() {
    if [[ -z "$WORK_ROOT" ]]; then
        WORK_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/clusterclass-k8sbuild.XXXXXX")"
    fi
}

workdir() {
    mkdir -p "$WORK_ROOT/$1"
    printf '%s\n' "$WORK_ROOT/$1"
}

build_etcd() {
    local mod; mod="$(workdir etcd)"
    log "building etcd $ETCD_VERSION in $mod"
    (
        cd "$mod"
        go mod init clusterclass.local/etcd-build >/dev/null 2>&1
        go mod edit -go=1.26
        timed "etcd: resolve+download (go get -tool)" \
            go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
        timed "etcd: download package deps (go list -deps)" \
            go list -deps go.etcd.io/etcd/server/v3 >/dev/null
        mkdir -p "$ETCD_DIR"
        timed "etcd: go build" \
            go build -p "$PAR" -trimpath -ldflags "-s -w" \
                -o "$ETCD_DIR/etcd.tmp" go.etcd.io/etcd/server/v3
        mv -f "$ETCD_DIR/etcd.tmp" "$ETCD_BIN"
        cp go.mod go.sum "$ETCD_DIR/"
    )
}

# Builds kube-apiserver, kubectl and kube-controller-manager (whichever is missing) in one helper
# module: they share the k8s.io/kubernetes module graph, so each after the first costs only its own
# packages.
build_kubernetes() {
    local mod; mod="$(workdir kubernetes)"
    local minor_patch="${K8S_VERSION#v1.}"          # 37.2
    local staging_version="v0.$minor_patch"         # v0.37.2
    local major=1 minor="${minor_patch%%.*}"
    log "building kubernetes $K8S_VERSION components (staging modules at $staging_version) in $mod"
    (
        cd "$mod"
        go mod init clusterclass.local/kube-apiserver-build >/dev/null 2>&1
        go mod edit -go=1.26

        # k8s.io/kubernetes requires every staging module at v0.0.0 and maps them
        # to ./staging/... with replace lines that consumers ignore. Generate the
        # list from its own go.mod and pin each to the published tag.
        local gomod t0=$SECONDS
        gomod="$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
                 | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
        log "kube-apiserver: go mod download k8s.io/kubernetes@$K8S_VERSION took $((SECONDS - t0))s"
        [[ -f "$gomod" ]] || { log "error: could not locate go.mod of k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
        local staging
        staging="$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/src/k8s\.io/.*#\1#p' "$gomod" | sort -u)"
        [[ -n "$staging" ]] || { log "error: no staging replace lines found in $gomod"; exit 1; }
        log "$(wc -l <<<"$staging") staging modules -> $staging_version"
        local m args=()
        for m in $staging; do args+=("-replace=$m=$m@$staging_version"); done
        go mod edit "${args[@]}"

        timed "kubernetes: resolve+download (go get -tool)" \
            go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION" \
                "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION"
        timed "kubernetes: download package deps (go list -deps)" \
            go list -deps k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl \
                k8s.io/kubernetes/cmd/kube-controller-manager >/dev/null

        local ld="-s -w"
        local date; date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        local pkg
        for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
            ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major"
            ld+=" -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
        done
        if ! cached_ok "$APISERVER_BIN"; then
            mkdir -p "$APISERVER_DIR"
            timed "kube-apiserver: go build" \
                go build -p "$PAR" -trimpath -ldflags "$ld" \
                    -o "$APISERVER_DIR/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
            mv -f "$APISERVER_DIR/kube-apiserver.tmp" "$APISERVER_BIN"
            cp go.mod go.sum "$APISERVER_DIR/"
        fi
        if ! cached_ok "$KUBECTL_BIN"; then
            mkdir -p "$KUBECTL_DIR"
            timed "kubectl: go build" \
                go build -p "$PAR" -trimpath -ldflags "$ld" \
                    -o "$KUBECTL_DIR/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl
            mv -f "$KUBECTL_DIR/kubectl.tmp" "$KUBECTL_BIN"
            cp go.mod go.sum "$KUBECTL_DIR/"
        fi
        if ! cached_ok "$KCM_BIN"; then
            mkdir -p "$KCM_DIR"
            timed "kube-controller-manager: go build" \
                go build -p "$PAR" -trimpath -ldflags "$ld" \
                    -o "$KCM_DIR/kube-controller-manager.tmp" k8s.io/kubernetes/cmd/kube-controller-manager
            mv -f "$KCM_DIR/kube-controller-manager.tmp" "$KCM_BIN"
            cp go.mod go.sum "$KCM_DIR/"
        fi
    )
}

if cached_ok "$ETCD_BIN"; then
    log "etcd $ETCD_VERSION cached: $ETCD_BIN"
else
    ensure_workroot
    timed "etcd total" build_etcd
    cached_ok "$ETCD_BIN" || { log "error: built etcd does not run --version"; exit 1; }
fi

if cached_ok "$APISERVER_BIN" && cached_ok "$KUBECTL_BIN" && cached_ok "$KCM_BIN"; then
    log "kube-apiserver, kubectl and kube-controller-manager $K8S_VERSION cached: $APISERVER_BIN $KUBECTL_BIN $KCM_BIN"
else
    ensure_workroot
    timed "kube-apiserver + kubectl + kube-controller-manager total" build_kubernetes
    cached_ok "$APISERVER_BIN" || { log "error: built kube-apiserver does not run --version"; exit 1; }
    cached_ok "$KUBECTL_BIN" || { log "error: built kubectl does not run version --client"; exit 1; }
    cached_ok "$KCM_BIN" || { log "error: built kube-controller-manager does not run --version"; exit 1; }
fi

mkdir -p "$ASSETS_DIR"
ln -sfn "$APISERVER_BIN" "$ASSETS_DIR/kube-apiserver"
ln -sfn "$ETCD_BIN" "$ASSETS_DIR/etcd"
ln -sfn "$KUBECTL_BIN" "$ASSETS_DIR/kubectl"
ln -sfn "$KCM_BIN" "$ASSETS_DIR/kube-controller-manager"

log "$("$APISERVER_BIN" --version 2>&1 | head -n1); $("$ETCD_BIN" --version 2>&1 | head -n1)"
echo "KUBE_APISERVER=$APISERVER_BIN"
echo "KUBECTL=$KUBECTL_BIN"
echo "KUBE_CONTROLLER_MANAGER=$KCM_BIN"
echo "ETCD=$ETCD_BIN"
echo "KUBEBUILDER_ASSETS=$ASSETS_DIR"
