# The controller manager image config/manager deploys: `clusterclass run`.
# It installs the way the README's "Install" section does (Python 3.11, pip with the pinned constraints.txt), without
# the development extras and not editable. It cannot be built on the development machines (no container engine);
# tests/run/test_dockerfile.py keeps its steps in line with the README.
#   docker build -t <registry>/clusterclass:0.1.0 .
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY clusterclass ./clusterclass
# the package's bundled CRDs are links to config/crd/bases; the wheel build copies what they point at
COPY config/crd/bases ./config/crd/bases
RUN python3.11 -m venv /opt/clusterclass \
    && /opt/clusterclass/bin/pip install --no-cache-dir --disable-pip-version-check -c constraints.txt .

FROM python:3.11-slim
COPY --from=build /opt/clusterclass /opt/clusterclass
ENV PATH=/opt/clusterclass/bin:$PATH PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["/opt/clusterclass/bin/clusterclass"]
CMD ["run", "--leader-elect"]
