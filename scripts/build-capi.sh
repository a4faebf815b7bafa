#!/usr/bin/env bash
# Build upstream Cluster API's own managers from their Go modules (via the Go module proxy) and
# cache them OUTSIDE the repository, keyed by version, with the CRDs and webhook manifests they
# serve:
#
#   ${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}/bin/capi-<ver>/
#       capi-controller-manager          core (Cluster, MachineDeployment/Set, Machine, MachinePool,
#                                        MachineHealthCheck, ClusterClass, and the topology controller)
#       kubeadm-bootstrap-manager        KubeadmConfig(Template)
#       kubeadm-control-plane-manager    KubeadmControlPlane(Template)
#       inmemory-infrastructure-manager  the in-memory provider: v1.6 CAPIM (InMemoryCluster/Machine);
#                                        v1.14 CAPD with its in-memory backend (DevCluster/DevMachine)
#       config/<provider>/             each provider's config/ tree (config/default renders the manifests
#                                        clusterctl would apply: CRDs, webhooks, RBAC, Deployment), for
#                                        tests/support/upstream_capi.py to render with kubectl kustomize
#       e2e-data/                        upstream's in-memory ClusterClass and Cluster template (its e2e data)
#       LICENSE                          upstream's (Apache-2.0)
#       BUILD-OK                         written last; its presence means the set is complete
#
# The sources are upstream's module zips, laid out as upstream's repository is (the root module,
# `api/` for v1.11+, `test/`), so each binary builds with upstream's own go.mod and go.sum rather
# than a re-resolved module graph. Idempotent: a complete cached set is not rebuilt.
#
# Env knobs:
#   CLUSTERCLASS_CACHE   cache root (default $HOME/.cache/clusterclass)
#   CAPI_VERSIONS        space-separated versions (default "v1.6.8 v1.14.0")
#   BUILD_PARALLELISM    go build -p value (default 2)
#
# Last lines of stdout are KEY=path assignments, one per version (dots and dashes as underscores):
#   CAPI_v1_6_8=<dir>  CAPI_v1_14_0=<dir>
set -euo pipefail

CAPI_VERSIONS="${CAPI_VERSIONS:-v1.6.8 v1.14.0}"
CACHE_ROOT="${CLUSTERCLASS_CACHE:-$HOME/.cache/clusterclass}"
BIN_ROOT="$CACHE_ROOT/bin"
PAR="${BUILD_PARALLELISM:-2}"

log() { printf '[build-capi %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

timed() {
    local label="$1"; shift
    local start=$SECONDS
    "$@"
    log "$label took $((SECONDS - start))s"
}

if ! command -v go >/dev/null 2>&1; then
    if [[ -x /usr/local/go/bin/go ]]; then
        export PATH="/usr/local/go/bin:$PATH"
    else
        log "error: go not found (need Go >= 1.24 for Cluster API v1.14)"; exit 1
    fi
fi

export GOWORK=off
export CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local

WORK_ROOT=""
cleanup() {
    if [[ -n "$WORK_ROOT" && -d "$WORK_ROOT" ]]; then chmod -R u+w "$WORK_ROOT" 2>/dev/null || true; rm -rf "$WORK_ROOT"; fi
    return 0
}
trap cleanup EXIT

# Directory of module $1 at version $2 in the module cache (downloading it if needed).
module_dir() {
    local dir
    dir="$(go mod download -json "$1@$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
    [[ -d "$dir" ]] || { log "error: could not download $1@$2"; exit 1; }
    printf '%s\n' "$dir"
}

# Copy a read-only module-cache tree to a writable place.
copy_tree() {
    mkdir -p "$2"
    cp -R "$1/." "$2/"
    chmod -R u+w "$2"
}

minor_of() { local v="${1#v1.}"; printf '%s\n' "${v%%.*}"; }

build_version() {
    local ver="$1" out="$BIN_ROOT/capi-$1"
    local src="$WORK_ROOT/$ver/src" minor; minor="$(minor_of "$ver")"
    log "Cluster API $ver: laying out sources in $src"
    copy_tree "$(module_dir sigs.k8s.io/cluster-api "$ver")" "$src"
    if (( minor >= 11 )); then
        # v1.11+ keeps its API types in their own module, replaced by ./api in the root go.mod.
        rm -rf "$src/api"
        copy_tree "$(module_dir sigs.k8s.io/cluster-api/api "$ver")" "$src/api"
    fi
    rm -rf "$src/test"
    copy_tree "$(module_dir sigs.k8s.io/cluster-api/test "$ver")" "$src/test"

    local core_pkg=. core_cfg=config infra_pkg=./infrastructure/inmemory
    if (( minor >= 11 )); then core_pkg=./core core_cfg=core/config infra_pkg=./infrastructure/docker; fi

    local ld="-s -w"
    ld+=" -X sigs.k8s.io/cluster-api/version.gitVersion=$ver -X sigs.k8s.io/cluster-api/version.gitMajor=1"
    ld+=" -X sigs.k8s.io/cluster-api/version.gitMinor=$minor -X sigs.k8s.io/cluster-api/version.gitTreeState=clean"
    ld+=" -X sigs.k8s.io/cluster-api/version.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"

    mkdir -p "$out"
    rm -f "$out/BUILD-OK"
    (
        cd "$src"
        timed "$ver: download root module deps" go mod download
        build "$out/capi-controller-manager" "$core_pkg"
        build "$out/kubeadm-bootstrap-manager" ./bootstrap/kubeadm
        build "$out/kubeadm-control-plane-manager" ./controlplane/kubeadm
        cd test
        timed "$ver: download test module deps" go mod download
        build "$out/inmemory-infrastructure-manager" "$infra_pkg"
    )
    rm -rf "$out/config" "$out/e2e-data" "$out/rendered" "$out/crd" "$out/webhook"
    mkdir -p "$out/config" "$out/e2e-data"
    cp -R "$src/$core_cfg" "$out/config/core"
    cp -R "$src/bootstrap/kubeadm/config" "$out/config/bootstrap-kubeadm"
    cp -R "$src/controlplane/kubeadm/config" "$out/config/controlplane-kubeadm"
    cp -R "$src/test/${infra_pkg#./}/config" "$out/config/infrastructure"
    if (( minor >= 11 )); then
        cp "$src"/test/e2e/data/infrastructure-docker/main/clusterclass-in-memory.yaml \
           "$src"/test/e2e/data/infrastructure-docker/main/cluster-template-in-memory-topology.yaml "$out/e2e-data/"
    else
        cp "$src"/test/e2e/data/infrastructure-inmemory/main/clusterclass-in-memory.yaml \
           "$src"/test/e2e/data/infrastructure-inmemory/main/bases/cluster-with-topology.yaml "$out/e2e-data/"
    fi
    chmod -R u+w "$out/config" "$out/e2e-data"
    cp "$src/LICENSE" "$out/LICENSE"
    printf '%s\n' "$ver" >"$out/BUILD-OK"
}

# Build one manager ($2, a package of the current module) to $1, unless a build of it is already there (an
# interrupted run's binaries are kept; BUILD-OK is what marks the set complete).
build() {
    if [[ -x "$1" ]] && "$1" --help >/dev/null 2>&1; then
        log "$ver: $(basename "$1") already built"
        return 0
    fi
    timed "$ver: $(basename "$1")" go build -p "$PAR" -trimpath -ldflags "$ld" -o "$1" "$2"
}

for ver in $CAPI_VERSIONS; do
    out="$BIN_ROOT/capi-$ver"
    if [[ -f "$out/BUILD-OK" ]]; then
        log "Cluster API $ver cached: $out"
        continue
    fi
    if [[ -z "$WORK_ROOT" ]]; then WORK_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/clusterclass-capibuild.XXXXXX")"; fi
    timed "Cluster API $ver total" build_version "$ver"
done

for ver in $CAPI_VERSIONS; do
    key="CAPI_${ver//[.-]/_}"
    echo "$key=$BIN_ROOT/capi-$ver"
done
