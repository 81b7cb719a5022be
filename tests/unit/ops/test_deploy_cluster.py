"""The deployment on a Redis Cluster with RabbitMQ: docker-compose.cluster.yml and the k8s
overlay `cluster` (issue 17). The files are parsed and rendered, never run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import yaml

from services.bootstrap.projection import owned_partitions, projector_index
from services.settings import (
    BeatSettings,
    CommonSettings,
    GameSettings,
    ProjectionSettings,
    WorkerSettings,
    load_settings,
)
from tests.support.deploy import (
    K8S,
    Doc,
    assert_cardarena_command,
    containers,
    env_of,
    kustomize,
    of_kind,
    rendered,
)
from tests.support.stack import ROOT

CLUSTER_COMPOSE = ROOT / "docker-compose.cluster.yml"
KINDS: dict[str, type[CommonSettings]] = {
    "migrate": CommonSettings,
    "game": GameSettings,
    "projection": ProjectionSettings,
    "workers": WorkerSettings,
    "beat": BeatSettings,
}
"""The settings each cardarena command loads, by its command (`serve <name>`, `migrate`)."""
DEFAULT = re.compile(r"\$\{[A-Z_]+:-([^}]*)\}")


def cluster_compose() -> dict[str, Any]:
    """Returns docker-compose.cluster.yml."""
    document: dict[str, Any] = yaml.safe_load(CLUSTER_COMPOSE.read_text())
    return document


def cardarena_services() -> dict[str, dict[str, Any]]:
    """Returns the compose services that run a cardarena command, by name."""
    services = cluster_compose()["services"]
    return {
        name: service
        for name, service in services.items()
        if service.get("command", [""])[0] == "cardarena"
    }


def kind_of(command: list[str]) -> type[CommonSettings]:
    """Returns the settings class the cardarena `command` loads."""
    return KINDS[command[2] if command[1] == "serve" else command[1]]


def environment(service: Mapping[str, Any]) -> dict[str, str]:
    """Returns a compose service's environment, `${VAR:-default}` read as its default."""
    return {key: DEFAULT.sub(r"\1", str(value)) for key, value in service["environment"].items()}


def cluster_nodes() -> dict[str, dict[str, Any]]:
    """Returns the compose services that run a Redis Cluster node, by name."""
    services = cluster_compose()["services"]
    return {
        name: service
        for name, service in services.items()
        if "--cluster-enabled yes" in " ".join(map(str, service.get("command", [])))
    }


def test_the_cluster_compose_runs_three_primaries_and_forms_them_once() -> None:
    services = cluster_compose()["services"]
    nodes = cluster_nodes()
    assert len(nodes) == 3
    volumes = set()
    for name, node in nodes.items():
        command = node["command"]
        assert command[command.index("--cluster-announce-hostname") + 1] == name
        assert command[command.index("--appendonly") + 1] == "yes"
        assert node["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
        (data,) = (v for v in node["volumes"] if v.endswith(":/data"))
        volumes.add(data)
    assert len(volumes) == 3
    create = services["redis-cluster-create"]
    script = " ".join(create["command"])
    assert "redis-cli --cluster create" in script
    assert "--cluster-replicas 0 --cluster-yes" in script
    for name in nodes:
        assert f"getent hosts {name} " in script
        assert create["depends_on"][name]["condition"] == "service_healthy"
    assert create["restart"] == "no"


def test_the_cluster_compose_runs_only_commands_the_cli_knows() -> None:
    services = cardarena_services()
    assert {kind_of(service["command"]) for service in services.values()} == set(KINDS.values())
    for name, service in services.items():
        assert_cardarena_command(name, service["command"])
        if service.get("restart") != "no":
            test = service["healthcheck"]["test"]
            assert test[0] == "CMD", name
            assert_cardarena_command(f"{name} healthcheck", test[1:])


def test_the_cluster_compose_waits_for_health_or_for_one_shots_to_complete() -> None:
    services = cluster_compose()["services"]
    for name, service in services.items():
        for target, condition in service.get("depends_on", {}).items():
            assert target in services, f"{name} depends on unknown {target}"
            one_shot = services[target].get("restart") == "no"
            wanted = "service_completed_successfully" if one_shot else "service_healthy"
            assert condition["condition"] == wanted, (name, target)
            if not one_shot:
                assert "healthcheck" in services[target], target
    for name, service in cardarena_services().items():
        assert "redis-cluster-create" in service["depends_on"], name
        if name != "migrate":
            assert service["depends_on"]["migrate"]["condition"] == (
                "service_completed_successfully"
            )
            assert service["restart"] == "unless-stopped", name


def test_every_service_of_the_cluster_compose_loads_settings_for_the_cluster() -> None:
    nodes = cluster_nodes()
    partitions = set()
    for name, service in cardarena_services().items():
        settings = load_settings(environment(service), kind_of(service["command"]))
        assert settings.store == "redis", name
        assert settings.dispatch == "celery", name
        assert settings.redis_cluster, name
        assert urlsplit(settings.redis_url).hostname in nodes, name
        assert settings.broker_is_amqp, name
        assert settings.redis_wait_replicas == 0, f"{name}: the nodes have no replicas"
        assert urlsplit(settings.database_url).hostname == "postgres", name
        partitions.add(settings.partitions)
    assert len(partitions) == 1, "every process must agree on CARDARENA_PARTITIONS"


def test_the_broker_of_the_cluster_compose_is_rabbitmq_never_the_cluster() -> None:
    services = cluster_compose()["services"]
    nodes = cluster_nodes()
    vhost = services["rabbitmq"]["environment"]["RABBITMQ_DEFAULT_VHOST"]
    for name, service in cardarena_services().items():
        broker = urlsplit(environment(service)["CELERY_BROKER_URL"])
        assert broker.scheme == "amqp", name
        assert broker.hostname not in nodes, name
        assert broker.hostname == "rabbitmq", name
        assert broker.path.lstrip("/") == vhost, name
        assert service["depends_on"]["rabbitmq"]["condition"] == "service_healthy"
    assert "healthcheck" in services["rabbitmq"]


def test_the_two_projectors_of_the_cluster_compose_share_every_partition_once() -> None:
    projectors = {
        name: load_settings(environment(service), ProjectionSettings)
        for name, service in cardarena_services().items()
        if service["command"][1:3] == ["serve", "projection"]
    }
    assert len(projectors) == 2
    assert {settings.projectors for settings in projectors.values()} == {2}
    indexes = [settings.projector_index for settings in projectors.values()]
    assert sorted(indexes) == [0, 1]
    (partitions,) = {settings.partitions for settings in projectors.values()}
    owned = [
        partition
        for settings in projectors.values()
        for partition in owned_partitions(settings, projector_index(settings, "no-ordinal"))
    ]
    assert sorted(owned) == list(range(partitions))


def test_the_default_compose_stays_on_one_redis_with_one_projector() -> None:
    document = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = document["services"]
    assert [name for name in services if "redis" in name] == ["redis"]
    assert [name for name in services if "projection" in name] == ["projection"]
    for service in services.values():
        assert "CARDARENA_REDIS_CLUSTER" not in service.get("environment", {})
        assert "profiles" not in service


def cluster_config(docs: list[Doc]) -> dict[str, str]:
    """Returns the ConfigMap `cardarena` of the rendered `docs`."""
    data: dict[str, str] = of_kind(docs, "ConfigMap")["cardarena"]["data"]
    return data


def test_the_cluster_overlay_runs_the_projectors_as_a_statefulset_of_two() -> None:
    docs = rendered("cluster")
    assert "cardarena-projection" not in of_kind(docs, "Deployment")
    projection = of_kind(docs, "StatefulSet")["cardarena-projection"]
    replicas = projection["spec"]["replicas"]
    assert replicas == 2
    (container,) = containers(projection)
    env = env_of(container)
    config = cluster_config(docs)
    assert env["CARDARENA_PROJECTORS"]["value"] == str(replicas)
    assert "CARDARENA_PROJECTORS" not in config
    assert "CARDARENA_PROJECTOR_INDEX" not in config
    index = env["CARDARENA_PROJECTOR_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert index == "metadata.labels['apps.kubernetes.io/pod-index']"
    settings = load_settings({**config, "CARDARENA_PROJECTORS": str(replicas)}, ProjectionSettings)
    name = projection["metadata"]["name"]
    indexes = [projector_index(settings, f"{name}-{ordinal}") for ordinal in range(replicas)]
    assert indexes == list(range(replicas))
    owned = [p for index in indexes for p in owned_partitions(settings, index)]
    assert sorted(owned) == list(range(settings.partitions))


def test_the_cluster_overlay_gives_the_statefulset_a_headless_service() -> None:
    docs = rendered("cluster")
    projection = of_kind(docs, "StatefulSet")["cardarena-projection"]
    service = of_kind(docs, "Service")[projection["spec"]["serviceName"]]
    assert service["spec"]["clusterIP"] == "None"
    labels = projection["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert projection["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_the_cluster_overlay_puts_the_log_on_the_cluster_and_the_broker_on_rabbitmq() -> None:
    config = cluster_config(rendered("cluster"))
    settings = load_settings(config, CommonSettings)
    assert settings.redis_cluster
    assert urlsplit(settings.redis_url).hostname == "redis-cluster"
    assert urlsplit(settings.celery_broker).scheme == "amqp"
    assert urlsplit(settings.celery_broker).hostname != urlsplit(settings.redis_url).hostname
    assert settings.broker_is_amqp
    assert settings.redis_wait_replicas >= 1
    assert config["DATABASE_URL"] == "", "the production overlay's managed PostgreSQL"


def test_the_cluster_overlay_lets_the_workers_reach_redis_and_rabbitmq() -> None:
    policy = of_kind(rendered("cluster"), "NetworkPolicy")["cardarena-workers-egress"]
    egress = policy["spec"]["egress"]
    (added,) = [rule for rule in egress if rule.get("to") == [{"podSelector": {}}]]
    ports = {port["port"] for port in added["ports"]}
    assert {6379, 5672} <= ports


def test_the_base_and_the_other_overlays_keep_the_projection_a_deployment() -> None:
    for docs in (kustomize(K8S / "base"), rendered("production"), rendered("development")):
        assert "cardarena-projection" in of_kind(docs, "Deployment")
        assert "cardarena-projection" not in of_kind(docs, "StatefulSet")
        assert "CARDARENA_REDIS_CLUSTER" not in cluster_config(docs)
