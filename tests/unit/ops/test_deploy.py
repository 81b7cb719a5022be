"""The deployment files: k8s/ manifests and overlays, and docker-compose.yml."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from kubernetes_validate.utils import latest_version  # type: ignore[import-untyped]

from services.bootstrap.projection import owned_partitions, projector_index
from services.settings import ProjectionSettings, load_settings
from tests.support.deploy import (
    K8S,
    OVERLAYS,
    Doc,
    assert_cardarena_command,
    containers,
    env_of,
    kustomize,
    load_documents,
    of_kind,
    pod_templates,
    rendered,
)
from tests.support.stack import ROOT

COMPOSE = ROOT / "docker-compose.yml"
CLUSTER_COMPOSE = ROOT / "docker-compose.cluster.yml"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
LEFT_OUT = (
    ".venv/bin/python",
    ".git",
    ".env",
    ".mypy_cache/3.11/x.json",
    ".pytest_cache/v/x",
    ".ruff_cache/x",
    "services/game/__pycache__/app.cpython-311.pyc",
    "tests/artifacts/arena.png",
    "site/index.html",
    "examples/typescript/node_modules/x/index.js",
)
"""Paths the Docker build context must leave out (the virtualenv alone is hundreds of MB)."""
KUBERNETES_VERSION = latest_version()
"""The newest Kubernetes version whose schemas kubernetes-validate ships."""
IMAGES = {
    "development": "cardarena:dev",
    "production": "ghcr.io/cardarena/cardarena:0.1.0",
    "cluster": "ghcr.io/cardarena/cardarena:0.1.0",
}
NAMESPACES = {"development": "cardarena-dev", "production": "cardarena", "cluster": "cardarena"}
LONG_RUNNING = ("game", "projection", "workers", "beat")
MIGRATING = ("cardarena-game", "cardarena-workers")
"""The workloads whose pods run `cardarena migrate` first (the projection migrates itself)."""
DEPLOYMENT_POD = "cardarena-projection-7d9f8b6c5-24567"
"""A Deployment's pod name whose random suffix is all digits (about 1 pod in 850)."""


def yaml_files() -> list[Path]:
    """Returns every YAML file of k8s/ and the docker compose files."""
    return [*sorted(K8S.rglob("*.yaml")), *sorted(K8S.rglob("*.yml")), COMPOSE, CLUSTER_COMPOSE]


def manifests() -> list[tuple[str, Doc]]:
    """Returns every Kubernetes document of k8s/ (kustomizations are not resources)."""
    return [
        (f"{path.relative_to(ROOT)}:{doc['kind']}/{doc['metadata']['name']}", doc)
        for path in sorted(K8S.rglob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in load_documents(path)
    ]


def dockerignore_pattern(pattern: str) -> re.Pattern[str]:
    """Returns a regular expression for a .dockerignore pattern, matched against a path with
    a trailing `/`: `*` and `?` stay within a segment, a `**` segment spans any number."""
    parts = []
    for segment in pattern.strip("/").split("/"):
        if segment == "**":
            parts.append("(?:[^/]+/)*")
            continue
        chars = ("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment)
        parts.append("".join(chars) + "/")
    return re.compile("".join(parts))


def dockerignored(path: str) -> bool:
    """Returns whether .dockerignore leaves `path` out of the build context: the last pattern
    that matches it or a folder above it decides (`!` keeps it)."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    segments = path.split("/")
    prefixes = ["/".join(segments[:i]) + "/" for i in range(1, len(segments) + 1)]
    ignored = False
    for pattern in patterns:
        regex = dockerignore_pattern(pattern.removeprefix("!"))
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            ignored = not pattern.startswith("!")
    return ignored


def copied_sources() -> list[str]:
    """Returns the build-context paths deploy/Dockerfile COPYs (not those from other images)."""
    sources: list[str] = []
    for line in DOCKERFILE.read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(word.startswith("--from") for word in words):
            sources.extend(word.rstrip("/") for word in words[1:-1] if not word.startswith("--"))
    return sources


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Returns whether a label selector's pairs are all among `labels`."""
    return bool(selector) and selector.items() <= labels.items()


def template_labels(docs: Sequence[Doc]) -> list[dict[str, str]]:
    """Returns the labels of every pod template among `docs`."""
    return [t["metadata"].get("labels", {}) for doc in docs for t in pod_templates(doc)]


def cardarena_commands(docs: Sequence[Doc]) -> Iterator[tuple[str, list[str]]]:
    """Yields (where, command) of every container command and exec probe of `docs`."""
    for doc in docs:
        for container in containers(doc):
            where = f"{doc['kind']}/{doc['metadata']['name']}/{container['name']}"
            if "command" in container:
                yield where, container["command"]
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                if "exec" in container.get(probe, {}):
                    yield f"{where} {probe}", container[probe]["exec"]["command"]


def projectors(docs: Sequence[Doc]) -> list[Doc]:
    """Returns the workloads of `docs` that run `cardarena serve projection`."""
    return [
        doc
        for doc in docs
        if any(c.get("command", [])[1:3] == ["serve", "projection"] for c in containers(doc))
    ]


def with_tag(tmp_path: Path, overlay: str, tag: str) -> list[Doc]:
    """Returns what `overlay` renders when a kustomization over it sets the image's tag."""
    directory = tmp_path / tag
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(
        f"resources: [{os.path.relpath(OVERLAYS[overlay], directory)}]\n"
        f"images:\n  - name: {IMAGES[overlay].split(':')[0]}\n    newTag: '{tag}'\n"
    )
    return kustomize(directory)


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_deployment_yaml_file_parses(path: Path) -> None:
    assert load_documents(path), f"{path} holds no document"


@pytest.mark.parametrize(("where", "doc"), manifests(), ids=[w for w, _ in manifests()])
def test_every_kubernetes_manifest_validates_against_the_kubernetes_schemas(
    where: str, doc: Doc
) -> None:
    kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_every_document_kustomize_renders_of_an_overlay_validates(overlay: str) -> None:
    docs = rendered(overlay)
    assert len(docs) > 10
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_base_renders_and_validates_alone() -> None:
    for doc in kustomize(K8S / "base"):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_an_overlay_renders_the_whole_platform_in_its_namespace(overlay: str) -> None:
    docs = rendered(overlay)
    every = {**of_kind(docs, "Deployment"), **of_kind(docs, "StatefulSet")}
    workloads = {name: doc for name, doc in every.items() if name.startswith("cardarena-")}
    assert set(workloads) == {
        "cardarena-game",
        "cardarena-projection",
        "cardarena-workers",
        "cardarena-beat",
    }
    assert of_kind(docs, "Deployment")["cardarena-beat"]["spec"]["replicas"] == 1
    for doc in docs:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == NAMESPACES[overlay], doc["metadata"]
    for doc in workloads.values():
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "cardarena"


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_every_env_source_of_an_overlay_exists(overlay: str) -> None:
    docs = rendered(overlay)
    config_maps = set(of_kind(docs, "ConfigMap"))
    template = load_documents(K8S / "base" / "secret.template.yaml")
    secrets = set(of_kind(docs, "Secret")) | set(of_kind(template, "Secret"))
    for doc in docs:
        for container in containers(doc):
            for source in container.get("envFrom", []):
                if "configMapRef" in source:
                    assert source["configMapRef"]["name"] in config_maps, doc["metadata"]
                if "secretRef" in source:
                    assert source["secretRef"]["name"] in secrets, doc["metadata"]


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_services_pdbs_and_policies_select_pods_the_overlay_runs(overlay: str) -> None:
    docs = rendered(overlay)
    labels = template_labels(docs)
    for service in of_kind(docs, "Service").values():
        selector = service["spec"]["selector"]
        assert any(selects(selector, pod) for pod in labels), service["metadata"]["name"]
    for kind in ("PodDisruptionBudget", "NetworkPolicy"):
        for doc in of_kind(docs, kind).values():
            key = "selector" if kind == "PodDisruptionBudget" else "podSelector"
            selector = doc["spec"][key]["matchLabels"]
            assert any(selects(selector, pod) for pod in labels), doc["metadata"]["name"]


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_every_autoscaler_targets_a_deployment_of_the_overlay(overlay: str) -> None:
    docs = rendered(overlay)
    deployments = of_kind(docs, "Deployment")
    autoscalers = of_kind(docs, "HorizontalPodAutoscaler")
    assert set(autoscalers) == {"cardarena-game", "cardarena-workers"}
    for hpa in autoscalers.values():
        target = hpa["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment"
        assert target["name"] in deployments
        assert hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_no_workload_sets_the_replicas_an_autoscaler_owns(overlay: str) -> None:
    docs = rendered(overlay)
    for hpa in of_kind(docs, "HorizontalPodAutoscaler").values():
        target = hpa["spec"]["scaleTargetRef"]
        (scaled,) = (
            doc
            for doc in docs
            if (doc["kind"], doc["metadata"]["name"]) == (target["kind"], target["name"])
        )
        assert "replicas" not in scaled["spec"], target["name"]


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_every_projector_of_an_overlay_has_an_explicit_index_of_its_own(overlay: str) -> None:
    docs = rendered(overlay)
    config = of_kind(docs, "ConfigMap")["cardarena"]["data"]
    (workload,) = projectors(docs)
    replicas = workload["spec"]["replicas"]
    (container,) = workload["spec"]["template"]["spec"]["containers"]
    env = env_of(container)
    assert env["CARDARENA_PROJECTORS"]["value"] == str(replicas)
    index = env["CARDARENA_PROJECTOR_INDEX"]
    if workload["kind"] == "Deployment":
        assert replicas == 1
        assert workload["spec"]["strategy"]["type"] == "Recreate"
        indexes = [int(index["value"])]
    else:
        assert workload["kind"] == "StatefulSet"
        field = index["valueFrom"]["fieldRef"]["fieldPath"]
        assert field == "metadata.labels['apps.kubernetes.io/pod-index']"
        indexes = list(range(replicas))
    assert sorted(indexes) == list(range(replicas))
    owned: list[int] = []
    for number in indexes:
        settings = load_settings(
            {
                **config,
                "CARDARENA_PROJECTORS": str(replicas),
                "CARDARENA_PROJECTOR_INDEX": str(number),
            },
            ProjectionSettings,
        )
        assert projector_index(settings, DEPLOYMENT_POD) == number
        owned.extend(owned_partitions(settings, number))
    assert sorted(owned) == list(range(settings.partitions))


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_the_game_and_the_workers_migrate_first_with_their_own_image_and_no_job(
    overlay: str,
) -> None:
    docs = rendered(overlay)
    assert of_kind(docs, "Job") == {}
    assert of_kind(docs, "CronJob") == {}
    for name in MIGRATING:
        spec = of_kind(docs, "Deployment")[name]["spec"]["template"]["spec"]
        (migrate,) = spec["initContainers"]
        (container,) = spec["containers"]
        assert migrate["command"] == ["cardarena", "migrate"]
        assert migrate["image"] == container["image"] == IMAGES[overlay]
        assert migrate["envFrom"] == container["envFrom"]


@pytest.mark.parametrize("overlay", ["production", "cluster"])
def test_a_new_image_tag_changes_only_the_images_of_an_overlay(
    overlay: str, tmp_path: Path
) -> None:
    before, after = with_tag(tmp_path, overlay, "0.1.0"), with_tag(tmp_path, overlay, "0.2.0")
    assert before == rendered(overlay)
    assert [doc["metadata"]["name"] for doc in before] == [doc["metadata"]["name"] for doc in after]
    pairs = zip(before, after, strict=True)
    changed = [(doc["kind"], doc["metadata"]["name"]) for doc, new in pairs if doc != new]
    assert {kind for kind, _ in changed} <= {"Deployment", "StatefulSet"}, changed
    for doc in after:
        for container in containers(doc):
            if "cardarena" in container["image"]:
                assert container["image"].endswith(":0.2.0"), doc["metadata"]["name"]


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_an_overlay_rewrites_every_cardarena_image(overlay: str) -> None:
    for doc in rendered(overlay):
        for container in containers(doc):
            image = container["image"]
            if "cardarena" in image:
                assert image == IMAGES[overlay], (doc["metadata"]["name"], image)


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_every_command_an_overlay_runs_is_a_cardarena_command(overlay: str) -> None:
    commands = list(cardarena_commands(rendered(overlay)))
    ours = [(where, command) for where, command in commands if command[0] == "cardarena"]
    assert len(ours) >= 5
    for where, command in ours:
        assert_cardarena_command(where, command)


def test_the_development_overlay_runs_redis_with_aof_and_postgresql() -> None:
    docs = rendered("development")
    stateful = of_kind(docs, "StatefulSet")
    assert set(stateful) == {"redis", "postgres"}
    (redis,) = stateful["redis"]["spec"]["template"]["spec"]["containers"]
    args = " ".join(redis.get("args", []))
    assert "--appendonly yes" in args
    assert "--appendfsync everysec" in args
    assert {"redis", "postgres"} <= set(of_kind(docs, "Service"))
    secret = of_kind(docs, "Secret")["cardarena-secrets"]
    assert secret["data"]["CARDARENA_ADMIN_KEY"]
    for hpa in of_kind(docs, "HorizontalPodAutoscaler").values():
        assert hpa["spec"]["minReplicas"] == 1


def test_the_development_overlay_runs_the_locally_built_image_without_pulling_it() -> None:
    ours = [
        container
        for doc in rendered("development")
        for container in containers(doc)
        if container["image"].startswith("cardarena")
    ]
    assert len(ours) == 6
    for container in ours:
        assert container["image"] == "cardarena:dev", container["name"]
        assert container["imagePullPolicy"] == "IfNotPresent", container["name"]


def test_the_production_overlay_runs_no_database_and_commits_no_secret() -> None:
    docs = rendered("production")
    assert of_kind(docs, "StatefulSet") == {}
    assert of_kind(docs, "Secret") == {}
    config = of_kind(docs, "ConfigMap")["cardarena"]["data"]
    assert config["REDIS_URL"] == ""
    assert config["DATABASE_URL"] == ""
    assert config["CARDARENA_STORE"] == "redis"
    policy = of_kind(docs, "NetworkPolicy")["cardarena-workers-egress"]
    egress = policy["spec"]["egress"]
    assert len(egress) == 4
    assert egress[-1]["to"] == [{"ipBlock": {"cidr": "10.20.0.0/24"}}]


def compose() -> dict[str, Any]:
    """Returns docker-compose.yml."""
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


def test_compose_runs_only_commands_the_cli_knows() -> None:
    services = compose()["services"]
    for name in ("migrate", *LONG_RUNNING):
        assert_cardarena_command(name, services[name]["command"])
    for name in LONG_RUNNING:
        test = services[name]["healthcheck"]["test"]
        assert test[0] == "CMD", name
        assert_cardarena_command(f"{name} healthcheck", test[1:])


def test_compose_dependencies_exist_and_wait_for_health_or_completion() -> None:
    services = compose()["services"]
    for name, service in services.items():
        for target, condition in service.get("depends_on", {}).items():
            assert target in services, f"{name} depends on unknown {target}"
            wanted = "service_completed_successfully" if target == "migrate" else "service_healthy"
            assert condition["condition"] == wanted, (name, target)
            if wanted == "service_healthy":
                assert "healthcheck" in services[target], target


def test_compose_serves_the_api_on_8000_and_restarts_long_running_services() -> None:
    services = compose()["services"]
    assert "8000:8000" in services["game"]["ports"]
    for name in LONG_RUNNING:
        assert services[name]["restart"] == "unless-stopped", name
        assert "healthcheck" in services[name], name
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )
    assert services["migrate"]["restart"] == "no"
    assert {"path": ".env", "required": False} in services["game"]["env_file"]


def test_compose_runs_redis_with_aof_on_a_volume_and_postgresql_on_a_volume() -> None:
    services = compose()["services"]
    conf = (ROOT / "deploy" / "redis.conf").read_text().splitlines()
    assert "appendonly yes" in conf
    assert "appendfsync everysec" in conf
    assert any(v.endswith(":/data") for v in services["redis"]["volumes"])
    assert any("/var/lib/postgresql/data" in v for v in services["postgres"]["volumes"])
    assert set(compose()["volumes"]) == {"redis-data", "postgres-data"}


def test_the_docker_build_context_keeps_what_the_dockerfile_copies_and_nothing_heavy() -> None:
    sources = copied_sources()
    assert {"pyproject.toml", "uv.lock", "README.md", "shared", "services"} <= set(sources)
    for source in sources:
        path = ROOT / source
        assert path.exists(), source
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        kept = [f for f in files if "__pycache__" not in f.parts]
        assert kept, source
        for file in kept:
            assert not dockerignored(str(file.relative_to(ROOT))), file
    for left_out in LEFT_OUT:
        assert dockerignored(left_out), left_out
    assert not dockerignored(".env.example")
